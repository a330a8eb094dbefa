"""Reads for finding calls and for the reviewers' throughput, each in a fixed number of queries."""

from __future__ import annotations

import random
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.safestring import SafeString

from access import Capability
from access.scope import Scope, scope_for
from qa.models import JUDGE_VALUE_EXISTS, Recording, Score
from qa.search import headlines, matches_first, recordings_matching
from calls.models import SavedSearch
from reviews.filters import CallSelection
from reviews.models import Assignment, Review
from reviews.periods import day_start
from reviews.selectors import blind_recordings_for, has_reason, reasons_text_alias, reviewers  # noqa: F401  (the calls pages' assignees)
from rubrics.models import Criterion, Rubric
from rubrics.selectors import rubrics_in

NOT_APPLICABLE = "na"  # the criterion value filter's "the judge found it does not apply"
# The statuses a judged call can be in, as the list filters them.
CALL_STATUSES = (Recording.Status.JUDGED, Recording.Status.IN_REVIEW, Recording.Status.REVIEWED)
# Assignment filter values: any call, those with an open assignment, those without, the reader's own.
ASSIGNED_ANY, ASSIGNED_NONE, ASSIGNED_ME = "any", "none", "me"
# Consecutive reviews further apart than this are not one sitting: the gap is a break, not a review.
SITTING_GAP = timedelta(minutes=30)


@dataclass(frozen=True)
class CallFilters(CallSelection):
    words: str = ""  # full-text search over the transcript (qa.search)
    status: str = ""
    reason: str = ""
    assigned: str = ""
    criterion: str = ""  # a criterion key, with `value`: calls whose judge gave it that value
    value: str = ""  # a number, or NOT_APPLICABLE
    quality_max: float | None = None  # calls whose quality score (qa's, from the judge's values) is at most this


def calls_visible(user: AbstractBaseUser) -> QuerySet[Recording]:
    """Every judged call `user` may see: the one base every list, search, sample and API answer of
    this package starts from, and the one place it applies the scope (access.scope.scope_for: a
    supervisor's teams, a lead's workspace)."""
    return Recording.objects.visible_to(scope_for(user)).filter(current_run__isnull=False)


def call_search(*, recordings: QuerySet[Recording], filters: CallFilters, user: AbstractBaseUser) -> QuerySet[Recording]:
    """`recordings` (from `calls_visible`) with `filters` applied, latest call first.

    A filter on the judge's value (or on the quality score made of them) leaves out the calls `user` must see blind (reviews.selectors.
    blind_recordings_for): which calls have a value would tell them the judge's answer. The value
    counts only where it exists (its quote verified: qa.models.JUDGE_VALUE_EXISTS).
    """
    recordings = reasons_text_alias(recordings).filter(filters.q())
    if filters.status:
        recordings = recordings.filter(status=filters.status)
    if filters.reason:
        recordings = recordings.filter(has_reason(filters.reason))
    if filters.assigned:
        recordings = recordings.filter(_assigned(filters.assigned, user))
    if filters.criterion and filters.value:
        value = Q(value__isnull=True) if filters.value == NOT_APPLICABLE else Q(value=int(filters.value))
        scored = Score.objects.filter(JUDGE_VALUE_EXISTS, value, run=OuterRef("current_run"), criterion__key=filters.criterion)
        # Asked of each call the filter keeps (as a correlated subquery on its id), not as the set of every
        # blind call, which PostgreSQL would build by reading all the calls first.
        blind = blind_recordings_for(user).filter(pk=OuterRef("pk"))
        recordings = recordings.filter(Exists(scored)).exclude(Exists(blind))
    if filters.quality_max is not None:
        # The quality score is the judge's values': the same rule as a filter on one of them.
        blind = blind_recordings_for(user).filter(pk=OuterRef("pk"))
        recordings = recordings.filter(quality_score__lte=filters.quality_max).exclude(Exists(blind))
    recordings = recordings_matching(recordings, filters.words)
    return recordings.select_related("rubric").defer("transcript", "turns").order_by(
        F("occurred_at").desc(nulls_last=True), "-id"
    )


def _assigned(assigned: str, user: AbstractBaseUser) -> Q:
    open_assignments = Assignment.objects.filter(recording=OuterRef("pk"), closed_at__isnull=True)
    if assigned == ASSIGNED_ME:
        return Q(Exists(open_assignments.filter(assignee=user)))
    if assigned == ASSIGNED_NONE:
        return ~Q(Exists(open_assignments))
    return Q(Exists(open_assignments))


@dataclass
class CallRow:
    """One call of a page of results, with what the list shows beside it."""

    recording: Recording
    headline: SafeString | None = None  # the passages where the words were found, marked
    assignee: AbstractBaseUser | None = None  # whose open assignment it is
    decision: str = ""  # the latest review's decision (Review.Decision), "" without one
    value: int | str | None = None  # the judge's value for the filtered criterion (NOT_APPLICABLE, or None)

    @property
    def decision_label(self) -> str:
        return Review.Decision(self.decision).label if self.decision else ""


# The most calls a search counts: past it the list says "1,000 or more" and shows their first pages.
# Counting every match of a common word (half of 100,000 calls) reads half the table; the first
# thousand are a few milliseconds (bench/search/README.md).
COUNT_LIMIT = 1000


class CappedPaginator(Paginator):
    """Pages of at most COUNT_LIMIT calls: the count stops there. A search's count (with `words`) starts
    from the full-text indexes' matches (qa.search.matches_first), the other filters asked of each match:
    walking the table and testing each call's words is PostgreSQL's choice with a second filter, and
    several times slower."""

    def __init__(self, object_list, per_page, *, words: str = "") -> None:
        super().__init__(object_list, per_page)
        self.words = words.strip()

    @cached_property
    def count(self) -> int:
        capped = self.object_list.order_by()[:COUNT_LIMIT]
        if not self.words:
            return capped.count()
        with matches_first():
            return capped.count()

    @property
    def capped(self) -> bool:
        return self.count >= COUNT_LIMIT


@dataclass
class CallPage:
    page: Page
    rows: list[CallRow] = field(default_factory=list)

    @property
    def count(self) -> int:
        return self.page.paginator.count

    @property
    def capped(self) -> bool:
        """Whether the search found COUNT_LIMIT calls or more (`count` is then COUNT_LIMIT)."""
        return self.page.paginator.capped


def call_page(*, recordings: QuerySet[Recording], filters: CallFilters, number: int, size: int) -> CallPage:
    """A page of `call_search`'s results, in five queries whatever its size: the count (to COUNT_LIMIT),
    the rows, their open assignments, their latest reviews, their headlines (with words); a search with
    words adds the count's planner settings (qa.search.matches_first: one more query, and a savepoint's
    three within a transaction)."""
    page = CappedPaginator(recordings, size, words=filters.words).get_page(number)
    rows = {recording.pk: CallRow(recording) for recording in page.object_list}
    ids = list(rows)
    for assignment in Assignment.objects.filter(recording_id__in=ids, closed_at__isnull=True).select_related("assignee"):
        rows[assignment.recording_id].assignee = assignment.assignee
    latest = Review.objects.filter(recording_id__in=ids).order_by("recording_id", "created_at", "id")
    for recording_id, decision in latest.values_list("recording_id", "decision"):
        rows[recording_id].decision = decision  # the latest last
    for pk, headline in headlines(Recording.objects.filter(pk__in=ids), filters.words).items():
        rows[pk].headline = headline
    if filters.criterion and filters.value:
        for row in rows.values():  # blind calls are not among them (call_search)
            value = (row.recording.current_values or {}).get(filters.criterion)
            row.value = NOT_APPLICABLE if value is None else value
    return CallPage(page=page, rows=list(rows.values()))


def calls_waiting(recordings: QuerySet[Recording]) -> QuerySet[Recording]:
    """Those of `recordings` in the review queue."""
    return recordings.filter(needs_review=True, status=Recording.Status.IN_REVIEW)


def call_ids(*, recordings: QuerySet[Recording], ids: list[int] | None = None) -> list[int]:
    """The ids of `recordings` (a search), or of those among `ids` (a selection): ids the user did not
    find are not taken."""
    if ids is not None:
        recordings = recordings.filter(pk__in=ids)
    return list(recordings.order_by("pk").values_list("pk", flat=True))


def call_sample(*, recordings: QuerySet[Recording], size: int, seed: int) -> list[int]:
    """A random sample of `size` of the calls of a search that wait for review (the only ones an
    assignment can take), reproducible: the same search and seed draw the same calls (while the search
    finds the same ones)."""
    found = call_ids(recordings=calls_waiting(recordings))
    return sorted(random.Random(seed).sample(found, min(size, len(found))))


@dataclass(frozen=True)
class ReviewerThroughput:
    user_id: int
    username: str
    reviews: int
    days: int  # days with at least one review
    rejected: int
    median_seconds: float | None  # None with no two reviews in one sitting

    @property
    def per_day(self) -> float:
        """Reviews per day worked (a day with at least one review)."""
        return self.reviews / self.days if self.days else 0.0

    @property
    def median_ms(self) -> int | None:
        return None if self.median_seconds is None else round(self.median_seconds * 1000)

    @property
    def rejected_share(self) -> float | None:
        return self.rejected / self.reviews if self.reviews else None


def reviewer_throughput(*, scope: Scope, date_from: date, date_to: date) -> list[ReviewerThroughput]:
    """Per person who reviewed between the two days (inclusive; keys' reviews and disputes' resolutions left out): reviews, days
    with reviews, rejects, and the median time per review.

    The time per review is what is stored: the time from a reviewer's previous review to this one,
    within one sitting (reviews less than SITTING_GAP apart); the first review of a sitting has no
    time. It includes opening the call and reading it, as a supervisor works through the queue. One query.
    """
    reviews = (
        Review.objects.filter(
            scope.recordings_q(workspace="recording__workspace", team="recording__team", agent="recording__agent_id"),
            user__isnull=False,
            # A lead's resolution of a dispute is a final review only so the figures read it: no review
            # the lead did from the queue, and its decision follows from the values, not from a judgment.
            from_dispute=False,
            created_at__gte=day_start(date_from),
            created_at__lt=day_start(date_to + timedelta(days=1)),
        )
        .order_by("user_id", "created_at", "id")
        .values_list("user_id", "user__username", "created_at", "decision")
    )
    counts: dict[int, dict] = {}
    gaps: dict[int, list[float]] = defaultdict(list)
    previous: dict[int, object] = {}
    for user_id, username, created_at, decision in reviews:
        entry = counts.setdefault(user_id, {"username": username, "reviews": 0, "rejected": 0, "days": set()})
        entry["reviews"] += 1
        entry["rejected"] += decision == Review.Decision.REJECT
        entry["days"].add(timezone.localdate(created_at))
        if (before := previous.get(user_id)) is not None and created_at - before < SITTING_GAP:
            gaps[user_id].append((created_at - before).total_seconds())
        previous[user_id] = created_at
    return sorted(
        (
            ReviewerThroughput(
                user_id=user_id,
                username=entry["username"],
                reviews=entry["reviews"],
                days=len(entry["days"]),
                rejected=entry["rejected"],
                median_seconds=statistics.median(gaps[user_id]) if gaps[user_id] else None,
            )
            for user_id, entry in counts.items()
        ),
        key=lambda row: (-row.reviews, row.username),
    )


def criterion_choices(rubric_slug: str = "", *, scope: Scope) -> list[tuple[str, str]]:
    """(key, "key · title") for the criteria of every published or archived rubric version in `scope` (of
    one rubric, with its slug), the latest version's title where versions differ."""
    criteria = Criterion.objects.filter(rubric__in=rubrics_in(scope)).exclude(rubric__status=Rubric.Status.DRAFT)
    if rubric_slug:
        criteria = criteria.filter(rubric__slug=rubric_slug)
    titles: dict[str, str] = {}
    for key, title in criteria.order_by("key", "-rubric__version").values_list("key", "title"):
        titles.setdefault(key, title)
    return [(key, f"{key} · {title}") for key, title in titles.items()]


def saved_searches(*, user: AbstractBaseUser) -> QuerySet:
    """The person's own saved searches, by name: queries, which the list runs in their scope when opened."""
    return SavedSearch.objects.filter(user=user)
