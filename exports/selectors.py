"""The export's reads: each kind's rows after a cursor, up to a watermark every row below which is final.

Why a transaction-id watermark, not `id > last`. Ids are handed out when a row is inserted, but rows
become visible when their transaction commits, in any order: a judgment that inserts score 101 and
commits after another that inserted 102 would be skipped by a reader that saw 102 and moved its cursor
past it. Nor does a settle delay make it safe: a transaction can stay open longer than any delay.

PostgreSQL stamps every row version with the id of the transaction that wrote it (`xmin`), and any
snapshot lists the transactions still running (`pg_snapshot_xip`, the whole server's: ids are shared by
its databases). The watermark is the oldest of them that may write here: one that pg_stat_activity
shows running in another database cannot (a backend never changes database), so it does not count;
every other one does, including those it cannot place (a prepared transaction, one that finished
between the two reads), which only holds the watermark back a little. Every transaction below the
watermark has finished or writes elsewhere, so every row version of this database stamped below it
that will ever be visible is visible now. (A savepoint's rows carry a later id than their transaction,
which is in the list, so they are above it too.) A page therefore holds the rows stamped from the
cursor up to that watermark, in (stamp, id) order, and the next cursor is where it stopped: a row
committed late carries its own transaction's stamp, which is at or above the watermark of any page read
before it committed, so it comes on a later page, once. Other databases' long transactions (another
application's, or test runs sharing the server) do not hold the export back.

What else that gives: a row that changes (a dispute resolved, a review undone, a score verified again)
gets a new stamp and comes again with its new state, so a loader that upserts by `id` keeps the latest.
Rows deleted (a call deleted with its rows) are not reported. `xmin` is 32 bits: it is widened to the
snapshot's 64-bit epoch relative to the watermark, which holds for rows written less than two billion
transactions before the read (PostgreSQL itself refuses to run before a table's oldest row is that old
without being frozen). Nothing is written for the export, and rows stored before it existed are
exported too. It needs PostgreSQL: on SQLite (the demo) the export refuses with a message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.db.models.expressions import RawSQL
from django.utils.translation import gettext as _

from access.scope import Scope
from core.errors import InvalidInputError
from disputes.models import Dispute
from exports.columns import KINDS
from qa.models import UNVERIFIED_MARK, Score, judge_value_exists
from disputes.models import DisputedCriterion
from reviews.models import AgreedValue, CalibrationSession, Review

# The page a request gets when it names no limit, and the most it may ask for.
DEFAULT_LIMIT = 10_000
MAX_LIMIT = 100_000
CHUNK = 2_000  # rows fetched from the database at a time while streaming


class ExportUnavailable(Exception):
    """The database cannot give a safe watermark (not PostgreSQL)."""


@dataclass(frozen=True, order=True)
class Cursor:
    """Where a page stopped: the stamp (64-bit transaction id) and the id of its last row."""

    stamp: int = 0
    id: int = 0

    def __str__(self) -> str:
        return f"{self.stamp}-{self.id}"


def cursor_parse(raw: str | None) -> Cursor:
    """A cursor a page gave (`X-Export-Cursor`), or the start for none; anything else is a 400 on it."""
    if not raw:
        return Cursor()
    stamp, dash, row = raw.partition("-")
    if not (dash and stamp.isascii() and stamp.isdigit() and row.isascii() and row.isdigit()):
        raise InvalidInputError(
            {"since_cursor": _("Not a cursor: give the X-Export-Cursor of the previous page, or nothing to start.")}
        )
    return Cursor(int(stamp), int(row))


@dataclass(frozen=True)
class Watermark:
    below: int  # every transaction with a lower id has finished or writes in another database
    next: int  # the next transaction id to be handed out: no cursor can be beyond it


def export_watermark() -> Watermark:
    if connection.vendor != "postgresql":
        raise ExportUnavailable(_("The export needs PostgreSQL (it reads its transaction ids); this database is %(vendor)s.")
                                % {"vendor": connection.vendor})
    with connection.cursor() as cursor:
        # pg_stat_activity is read once per transaction unless cleared: a stale one would only place
        # fewer transactions elsewhere (the watermark lower, never wrong), but a page asks for now.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(_WATERMARK)
        below, upper = cursor.fetchone()
    return Watermark(below=below, next=upper)


# The oldest running transaction not known to be another database's (their 32-bit backend_xid against
# the snapshot's 64-bit ids), or the next id when none is left. The snapshot does not list the reader's
# own transaction, which is running too: it counts if it has an id.
_WATERMARK = """
    SELECT LEAST(
        (SELECT MIN(x::text::bigint) FROM pg_snapshot_xip(s) x
         WHERE x::text::bigint % 4294967296 NOT IN (
            SELECT backend_xid::text::bigint FROM pg_stat_activity
            WHERE backend_xid IS NOT NULL AND datname IS DISTINCT FROM current_database()
         )),
        pg_current_xact_id_if_assigned()::text::bigint,
        pg_snapshot_xmax(s)::text::bigint
    ), pg_snapshot_xmax(s)::text::bigint
    FROM pg_current_snapshot() s
"""


def _stamp(table: str) -> str:
    """SQL: the 64-bit id of the transaction that wrote `table`'s row, from its 32-bit `xmin`, taken as the
    one within 2^31 of the watermark (the `%s` parameter)."""
    return (
        f'(%s::bigint + ((("{table}"."xmin"::text::bigint - (%s::bigint %% 4294967296) + 6442450944) '
        f"%% 4294967296) - 2147483648))"
    )


def _stamp_expression(kind: str, reference: int) -> RawSQL:
    """Each kind's stamp: the latest of the rows its exported row is made of (a review and its undoing, a
    dispute and its criteria), so a change to any of them sends the row again."""
    if kind == "scores":
        return RawSQL(_stamp("qa_score"), [reference, reference])
    if kind == "reviews":
        sql = (
            f'GREATEST({_stamp("reviews_review")}, COALESCE((SELECT {_stamp("reviews_reviewvoid")} '
            f'FROM "reviews_reviewvoid" WHERE "reviews_reviewvoid"."review_id" = "reviews_review"."id"), 0))'
        )
        return RawSQL(sql, [reference] * 4)
    if kind == "disputes":
        sql = (
            f'GREATEST({_stamp("reviews_dispute")}, COALESCE((SELECT MAX({_stamp("reviews_disputedcriterion")}) '
            f'FROM "reviews_disputedcriterion" WHERE "reviews_disputedcriterion"."dispute_id" = "reviews_dispute"."id"), 0))'
        )
        return RawSQL(sql, [reference] * 4)
    if kind == "calibration":
        return RawSQL(_stamp("reviews_agreedvalue"), [reference, reference])
    raise ValueError(kind)


# Each kind's call: the field path from its row to the recording, and to the rubric it was judged on.
_PATHS = {
    "scores": ("run__recording", "run__rubric"),
    "reviews": ("recording", "run__rubric"),
    "disputes": ("recording", "review__run__rubric"),
    "calibration": ("call__recording", "call__session__rubric"),
}


def _rows(kind: str, scope: Scope, blind: QuerySet | None) -> QuerySet:
    """The kind's rows in `scope`: the recording's workspace, team, agent and, for a source-bound key, source.
    `blind`: the recordings whose judge values the reader may not see (a person's blind audits and open
    calibrations), whose scores are left out."""
    recording, rubric = _PATHS[kind]
    in_scope = scope.recordings_q(
        workspace=f"{recording}__workspace", team=f"{recording}__team", agent=f"{recording}__agent_id"
    )
    if kind == "scores":
        rows = Score.objects.all()
    elif kind == "reviews":
        rows = Review.log.all()  # undone ones too: they come with `undone`
    elif kind == "disputes":
        # Counted by subqueries, not a GROUP BY: the row's stamp reads its own table's columns.
        criteria = DisputedCriterion.objects.filter(dispute_id=OuterRef("pk")).order_by().values("dispute_id")
        rows = Dispute.objects.annotate(
            disputed=_count(criteria), upheld=_count(criteria.filter(outcome=DisputedCriterion.Outcome.UPHELD))
        )
    else:
        participants = CalibrationSession.participants.through.objects.filter(
            calibrationsession_id=OuterRef("call__session_id")
        ).order_by().values("calibrationsession_id")
        rows = AgreedValue.objects.annotate(participants=_count(participants))
    rows = rows.filter(in_scope)
    if blind is not None and kind in ("scores", "calibration"):
        rows = rows.exclude(**{f"{recording}__in": blind})
    fields = {
        "recording_id": f"{recording}_id",
        "external_id": f"{recording}__external_id",
        "source": f"{recording}__source",
        "team": f"{recording}__team",
        "agent_id": f"{recording}__agent_id",
        "occurred_at": f"{recording}__occurred_at",
        "rubric": f"{rubric}__slug",
        "rubric_version": f"{rubric}__version",
    }
    return rows.values("pk", *_OWN[kind], **{f"x_{name}": F(path) for name, path in fields.items()})


def _count(rows: QuerySet) -> Coalesce:
    return Coalesce(Subquery(rows.annotate(n=Count("*")).values("n")[:1]), Value(0), output_field=IntegerField())


# Each kind's own fields, read beside the call's.
_OWN = {
    "scores": (
        "run_id", "criterion__key", "run__finished_at", "run__model", "run__prompt_version", "verifier_version",
        "evidence_verified", "value", "confidence", "verification_status",
    ),
    "reviews": (
        "run_id", "reviewer", "decision", "reject_reason", "blind", "from_dispute", "created_at", "void__id",
        "human_values",
    ),
    "disputes": ("review_id", "status", "created_at", "due_at", "resolved_at", "resolution_id", "disputed", "upheld"),
    "calibration": (
        "call__session_id", "call__session__name", "call__session__closed_at", "criterion__key", "value",
        "not_applicable", "updated_at", "participants", "call__run_id", "criterion_id",
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Page:
    kind: str
    rows: QuerySet  # the page's rows, in order, each with its stamp
    cursor: Cursor  # where the next page starts
    more: bool  # whether rows below the watermark remain after this page


def export_page(
    *, kind: str, scope: Scope, since: Cursor, limit: int = DEFAULT_LIMIT, blind: QuerySet | None = None
) -> Page:
    """The rows of `kind` in `scope` after `since`, at most `limit`, every one final (below the watermark).
    The next cursor is computed before any row is streamed (one read of the page's keys), so it can go in
    the response's headers."""
    if kind not in KINDS:
        raise InvalidInputError({"kind": _("No such export: give one of %(kinds)s.") % {"kinds": ", ".join(KINDS)}})
    watermark = export_watermark()
    if since.stamp > watermark.next:
        # A cursor from another database (a restore into a new cluster starts its ids again): resuming
        # from it would skip every row until the new ids caught up.
        raise InvalidInputError(
            {"since_cursor": _("This cursor is ahead of the database: it comes from another one. Start again without it.")}
        )
    stamp = _stamp_expression(kind, watermark.below)
    rows = (
        _rows(kind, scope, blind)
        .annotate(stamp=stamp)
        .filter(Q(stamp__gt=since.stamp) | Q(stamp=since.stamp, pk__gt=since.id), stamp__lt=watermark.below)
        .order_by("stamp", "pk")
    )
    keys = list(rows.values_list("stamp", "pk")[limit - 1 : limit + 1]) if limit else []
    if keys:
        last = Cursor(*keys[0])
        more = len(keys) > 1
        rows = rows.filter(Q(stamp__lt=last.stamp) | Q(stamp=last.stamp, pk__lte=last.id))
    else:
        # Fewer rows than the limit: this page reaches the watermark, where the next one starts (keeping
        # `since` when it is beyond: nothing below it is sent twice).
        last, more = max(since, Cursor(watermark.below, 0)), False
    return Page(kind=kind, rows=rows, cursor=last, more=more)


def page_records(page: Page) -> Iterator[dict[str, Any]]:
    """The page's rows as the kind's documented columns, in order, streamed from the database a chunk at
    a time (with what a chunk's rows need besides: a dispute's criteria, the judge's values)."""
    convert, extra = _CONVERT[page.kind]
    chunk: list[dict] = []
    for row in page.rows.iterator(chunk_size=CHUNK):
        chunk.append(row)
        if len(chunk) == CHUNK:
            yield from _converted(chunk, convert, extra)
            chunk = []
    yield from _converted(chunk, convert, extra)


def _converted(chunk: list[dict], convert, extra) -> Iterator[dict[str, Any]]:
    if not chunk:
        return
    context = extra(chunk) if extra else None
    for row in chunk:
        call = {name.removeprefix("x_"): value for name, value in row.items() if name.startswith("x_")}
        yield convert(row, call, context)


def _score(row: dict, call: dict, _judge: Any) -> dict[str, Any]:
    exists = judge_value_exists(evidence_verified=row["evidence_verified"])
    return {
        "id": row["pk"],
        "run_id": row["run_id"],
        **call,
        "criterion": row["criterion__key"],
        "judged_at": row["run__finished_at"],
        "judge_model": row["run__model"],
        "prompt_version": row["run__prompt_version"],
        "verifier_version": row["verifier_version"],
        "verified": exists,
        "unverified_mark": "" if exists else UNVERIFIED_MARK,
        "value": row["value"] if exists else None,
        "not_applicable": (row["value"] is None) if exists else None,
        "confidence": row["confidence"],
        "verification_status": row["verification_status"],
    }


def _review(row: dict, call: dict, _judge: Any) -> dict[str, Any]:
    return {
        "id": row["pk"],
        "run_id": row["run_id"],
        **call,
        "reviewer": row["reviewer"],
        "decision": row["decision"],
        "reject_reason": row["reject_reason"],
        "blind": row["blind"],
        "from_dispute": row["from_dispute"],
        "created_at": row["created_at"],
        "undone": row["void__id"] is not None,
        "human_values": json.dumps(row["human_values"] or {}, sort_keys=True),
    }


def _dispute(row: dict, call: dict, criteria: dict[int, list]) -> dict[str, Any]:
    return {
        "id": row["pk"],
        "review_id": row["review_id"],
        **call,
        "status": row["status"],
        "created_at": row["created_at"],
        "due_at": row["due_at"],
        "resolved_at": row["resolved_at"],
        "resolution_review_id": row["resolution_id"],
        "criteria_disputed": row["disputed"],
        "criteria_upheld": row["upheld"],
        "criteria": json.dumps(criteria.get(row["pk"], [])),
    }


def _dispute_criteria(chunk: list[dict]) -> dict[int, list[dict[str, Any]]]:
    """The disputed criteria of a chunk's disputes (read in scope), in the rubric's order: one query."""
    found: dict[int, list[dict[str, Any]]] = {}
    for dispute_id, key, proposed, proposed_na, outcome, resolved, resolved_na in (
        DisputedCriterion.objects.filter(dispute_id__in=[row["pk"] for row in chunk])
        .order_by("dispute_id", "criterion__order", "criterion_id")
        .values_list(
            "dispute_id", "criterion__key", "proposed_value", "proposed_not_applicable", "outcome", "resolved_value",
            "resolved_not_applicable",
        )  # fmt: skip
    ):
        found.setdefault(dispute_id, []).append(
            {
                "key": key,
                "proposed_value": proposed,
                "proposed_not_applicable": proposed_na,
                "outcome": outcome or "pending",
                "resolved_value": resolved,
                "resolved_not_applicable": resolved_na,
            }
        )
    return found


def _agreed(row: dict, call: dict, judge: dict) -> dict[str, Any]:
    score = judge.get((row["call__run_id"], row["criterion_id"]))
    exists = score is not None and judge_value_exists(evidence_verified=score[1])
    return {
        "id": row["pk"],
        "session_id": row["call__session_id"],
        "session_name": row["call__session__name"],
        "session_closed_at": row["call__session__closed_at"],
        **call,
        "criterion": row["criterion__key"],
        "agreed_value": row["value"],
        "agreed_not_applicable": row["not_applicable"],
        "agreed_at": row["updated_at"],
        "participants": row["participants"],
        "judge_verified": None if score is None else exists,
        "judge_value": score[0] if exists else None,
        "judge_unverified_mark": UNVERIFIED_MARK if score is not None and not exists else "",
    }


def _judge_values(chunk: list[dict]) -> dict[tuple[int, int], tuple[int | None, bool]]:
    """The judge's (value, verified) for each (run, criterion) of a chunk's calibration rows (read in
    scope: these are their calls' judgments): one query."""
    runs = {row["call__run_id"] for row in chunk}
    criteria = {row["criterion_id"] for row in chunk}
    rows = Score.objects.filter(run_id__in=runs, criterion_id__in=criteria)
    return {(run, criterion): (value, verified) for run, criterion, value, verified in rows.values_list(
        "run_id", "criterion_id", "value", "evidence_verified"
    )}  # fmt: skip


_CONVERT = {
    "scores": (_score, None),
    "reviews": (_review, None),
    "disputes": (_dispute, _dispute_criteria),
    "calibration": (_agreed, _judge_values),
}
