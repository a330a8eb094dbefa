"""The human reference: what a human stands behind for a (recording, criterion), the one definition that
the review's stored values, the reports, experiments, scorecards and the calibration ceiling read
(docs/dev/design.md). A closed calibration session's agreed value first, else the latest final review's."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import (
    BooleanField,
    Case,
    Exists,
    F,
    FilteredRelation,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    TextField,
    Value,
    When,
)

from qa.models import JUDGE_VALUE_EXISTS, Score
from reviews.models import AgreedValue, CalibrationSession, Review

FINAL_DECISIONS = (Review.Decision.APPROVE, Review.Decision.REJECT)


def latest_reviews(*, decisions: Iterable[str] | None = None) -> QuerySet[Review]:
    """Each recording's latest review among those with `decisions` (all when None);
    ties on created_at go to the higher id."""
    candidates = Review.objects.all() if decisions is None else Review.objects.filter(decision__in=decisions)
    later = candidates.filter(recording_id=OuterRef("recording_id")).filter(
        Q(created_at__gt=OuterRef("created_at")) | Q(created_at=OuterRef("created_at"), pk__gt=OuterRef("pk"))
    )
    return candidates.filter(~Exists(later))


# These read the annotations review_decision and cr_* (the criterion's review
# entry: cr_not_applicable, cr_adjusted, cr_rejected) beside the score's value;
# queries take them from joins or subqueries. With no entry, cr_* are NULL.
# Approved without marking the criterion wrong, where the judge's value exists: an approve never turns an
# unverified value into a human one (review_create refuses such an approve; older ones count for nothing).
_APPROVED_AS_JUDGED = (
    Q(review_decision=Review.Decision.APPROVE)
    & (Q(cr_rejected__isnull=True) | Q(cr_rejected=False))
    & JUDGE_VALUE_EXISTS
)
HUMAN_VALUE = Case(
    # "Does not apply" is no number: the pair is left out of the numeric figures.
    When(cr_not_applicable=True, then=Value(None)),
    When(cr_adjusted__isnull=False, then=F("cr_adjusted")),
    # Approved without marking the criterion wrong: the supervisor stands behind the judge's value.
    When(_APPROVED_AS_JUDGED, then=F("value")),
    default=None,
    output_field=IntegerField(),
)
HUMAN_NOT_APPLICABLE = Case(
    When(cr_not_applicable=True, then=True),
    # The judge's N/A, approved as it was, is the supervisor's N/A too.
    When(_APPROVED_AS_JUDGED & Q(cr_adjusted__isnull=True, value__isnull=True), then=True),
    default=False,
    output_field=BooleanField(),
)
# A criterion is rejected where the supervisor said the judge got it wrong: marked wrong, or, in a reject,
# given another value or "does not apply" in place of the judge's (what a reject must say, per criterion:
# reviews.services). A reject's other criteria are not rejected: one wrong criterion of a call is not
# every criterion wrong.
_REJECT_CHANGED = Q(review_decision=Review.Decision.REJECT) & (
    Q(cr_not_applicable=True, value__isnull=False)
    | (Q(cr_adjusted__isnull=False) & (Q(value__isnull=True) | ~Q(cr_adjusted=F("value"))))
)
IS_REJECTED = Case(
    When(Q(cr_rejected=True) | _REJECT_CHANGED, then=True),
    default=False,
    output_field=BooleanField(),
)


@dataclass(frozen=True)
class HumanReference:
    """The value a human stands behind for one criterion of one recording."""

    value: int | None  # None exactly when not_applicable
    not_applicable: bool
    source: str  # "agreed": a closed calibration session's agreed value; "review": the latest final review
    review_id: int | None  # None for an agreed value
    run_id: int  # the judgment that review saw, or that the calibration session put beside the participants' values


def with_review_entry(scores: QuerySet[Score]) -> QuerySet[Score]:
    """The aliases HUMAN_VALUE, HUMAN_NOT_APPLICABLE and IS_REJECTED read, for scores filtered by
    `run__reviews__in` (in one filter() call with the scores' other conditions, so the join to the
    review is made once and reused by the entry's join): the review's decision and its entry for the
    score's criterion."""
    return scores.alias(
        cr=FilteredRelation("run__reviews__criteria", condition=Q(run__reviews__criteria__criterion=F("criterion"))),
        review_decision=F("run__reviews__decision"),
        cr_not_applicable=F("cr__not_applicable"),
        cr_adjusted=F("cr__adjusted_value"),
        cr_rejected=F("cr__rejected"),
    )


def review_values(*, reviews: QuerySet[Review]) -> QuerySet[Score]:
    """What each of `reviews` says per criterion scored on the run it reviewed, as rows of
    run_id, recording_id, key, review_id, human (a number or None) and not_applicable.

    The supervisor's value where they set one, N/A where they ticked "does not
    apply", and the judge's value where they approved it without marking it
    wrong; else no value.
    """
    return (
        # One filter() call, so the join to the review is made once and reused by the entry's join.
        with_review_entry(Score.objects.filter(run__reviews__in=reviews))
        .values(
            "run_id",
            recording_id=F("run__recording_id"),
            key=F("criterion__key"),
            review_id=F("run__reviews__id"),
            human=HUMAN_VALUE,
            not_applicable=HUMAN_NOT_APPLICABLE,
        )
        .order_by()
    )


def human_references(*, recording_ids: Iterable[int]) -> dict[tuple[int, str], HumanReference]:
    """The human reference per (recording id, criterion key), in two queries.

    First the agreed value of a closed calibration session (the latest session
    to close, where several agreed on the same call). Else the latest final
    review (approve or reject; "needs review" is not final), read by
    `review_values`. A QA lead's resolution of an agent's upheld dispute is a
    final review (`Review.from_dispute`) made after the review disputed, so it
    is the latest and supersedes it; a rejected dispute writes no review. A criterion with neither (a reject that gave no value)
    has no reference and is absent, as are recordings without either.
    """
    recording_ids = list(recording_ids)
    # The recordings again on the runs, redundant (a review's run is of its recording), so that PostgreSQL
    # reads these recordings' runs, not every score of every reviewed run (1 s on an agent's page at a
    # million scores; bench/scorecards/README.md).
    rows = review_values(reviews=latest_final_reviews(recording_ids)).filter(run__recording_id__in=recording_ids)
    references = {
        (row["recording_id"], row["key"]): HumanReference(
            value=None if row["not_applicable"] else row["human"],
            not_applicable=bool(row["not_applicable"]),
            source="review",
            review_id=row["review_id"],
            run_id=row["run_id"],
        )
        for row in rows
        if row["not_applicable"] or row["human"] is not None
    }
    agreed = (
        _closed_agreed_values(recording_ids)
        .values(
            "value",
            "not_applicable",
            recording_id=F("call__recording_id"),
            key=F("criterion__key"),
            run_id=F("call__run_id"),
        )
        # Oldest first, so the latest session's value is the one left in the dict.
        .order_by("call__session__closed_at", "call__session_id")
    )
    for row in agreed:
        references[(row["recording_id"], row["key"])] = HumanReference(
            value=row["value"],
            not_applicable=row["not_applicable"],
            source="agreed",
            review_id=None,
            run_id=row["run_id"],
        )
    return references


def latest_final_reviews(recording_ids: list[int]) -> QuerySet[Review]:
    """The latest final review (approve or reject) of each of the recordings that has one."""
    return latest_reviews(decisions=FINAL_DECISIONS).filter(recording_id__in=recording_ids)


def _closed_agreed_values(recording_ids: list[int]) -> QuerySet[AgreedValue]:
    return AgreedValue.objects.filter(
        call__recording_id__in=recording_ids, call__session__status=CalibrationSession.Status.CLOSED
    )


def human_reference_rows(*, recording_ids: Iterable[int] | QuerySet) -> QuerySet:
    """`human_references` as one query, for queries that count by the human value in the database (the
    experiments' comparison) where reading every reference into Python would cost seconds.

    Rows of recording_id, criterion_key, human_value, human_not_applicable, source, review_id and
    reference_run_id, one per reference, by the same rules: the agreed value of the latest closed
    calibration session to agree on the criterion first, else the latest final review's value as
    `review_values` reads it; no row where neither gave a value or N/A. `recording_ids` may be a
    subquery. tests/test_human_reference.py checks that both forms give the same references.
    """
    if not isinstance(recording_ids, QuerySet):
        recording_ids = list(recording_ids)
    closed = _closed_agreed_values(recording_ids)
    later_session = AgreedValue.objects.filter(
        call__session__status=CalibrationSession.Status.CLOSED,
        call__recording_id=OuterRef("call__recording_id"),
        criterion__key=OuterRef("criterion__key"),
    ).filter(
        Q(call__session__closed_at__gt=OuterRef("call__session__closed_at"))
        | Q(
            call__session__closed_at=OuterRef("call__session__closed_at"),
            call__session_id__gt=OuterRef("call__session_id"),
        )
    )
    agreed = closed.filter(~Exists(later_session))
    agreed_here = agreed.filter(
        call__recording_id=OuterRef("run__recording_id"), criterion__key=OuterRef("criterion__key")
    )
    reviewed = (
        # The recordings' condition again on the runs, redundant (a review's run is of its recording), so
        # that PostgreSQL reads the runs of these recordings, not every score of every reviewed run (0.6 s
        # for a day's calls at a million scores; bench/dashboard/README.md).
        with_review_entry(
            Score.objects.filter(run__reviews__in=latest_final_reviews(recording_ids), run__recording_id__in=recording_ids)
        )
        .alias(review_human=HUMAN_VALUE, review_not_applicable=HUMAN_NOT_APPLICABLE)
        .filter(Q(review_not_applicable=True) | Q(review_human__isnull=False))
        .filter(~Exists(agreed_here))
    )
    # Every column an expression, named and ordered alike, so the union lines them up.
    return (
        agreed.values(
            recording_id=F("call__recording_id"),
            criterion_key=F("criterion__key"),
            human_value=F("value"),
            human_not_applicable=F("not_applicable"),
            source=Value("agreed", output_field=TextField()),
            review_id=Value(None, output_field=IntegerField()),
            reference_run_id=F("call__run_id"),
        )
        .order_by()
        .union(
            reviewed.values(
                recording_id=F("run__recording_id"),
                criterion_key=F("criterion__key"),
                human_value=Case(When(review_not_applicable=True, then=Value(None)), default=F("review_human")),
                human_not_applicable=F("review_not_applicable"),
                source=Value("review", output_field=TextField()),
                review_id=F("run__reviews__id"),
                reference_run_id=F("run_id"),
            ).order_by(),
            all=True,
        )
    )
