"""The dashboard's figures: for a rubric version and a period, what a QA lead and a supervisor look at first.

Every figure is the one its report computes, by the report's own selector, so the two never disagree
(tests/dashboard): the quality score is the scorecards' overall (`period_samples` and the estimator), the
unverified-quote rate the evidence report's, the criteria furthest from the supervisors the deviation report's
ceiling, the backlog the review queue's. What is new here is the auto-fail rate, read from the current runs'
scores that exist. The evidence tally, the auto-fail and the ceiling add up the reports' weekly rollup per
criterion (`insights.reports.rollup`), as the deviation report's ceiling does. The caller scopes what it passes
(a rubric, filters); nothing here widens it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from django.db.models import Count, Min, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from access.scope import EVERYTHING
from disputes.models import Dispute
from reviews.figures.stats import (
    CellSample,
    CorrectionLevel,
    Estimate,
    Moments,
    Tally,
    scorecard_estimate,
    t_quantile,
)
from reviews.filters import ReportFilters
from insights.reports.ceiling import CriterionCeiling
from insights.reports.rollup import CALLS, Tallies
from insights.reports.selectors import ceiling_of, period_tallies, report_run_q
from insights.scorecards.moments import OVERALL, Place
from insights.scorecards.selectors import period_samples
from reviews.selectors import QueueFilters, queue_recordings
from qa.models import Recording
from routing.selectors import routing_table
from rubrics.models import Criterion

FURTHEST = 3  # criteria furthest from the supervisors
BACKLOG_AGES = (1, 3, 7)  # days: the backlog's age buckets are under 1, 1–3, 3–7 and over 7


@dataclass(frozen=True)
class MeanInterval:
    """A sample mean with its 95 % t interval (None below two values)."""

    n: int
    mean: float | None
    ci: tuple[float, float] | None


@dataclass(frozen=True)
class QualityWeek:
    week: date | None  # its Monday; None: the calls with no time
    estimate: Estimate  # the scorecards' estimate of the mean human quality score, with its interval
    judge: MeanInterval  # the judge's scores that exist, every judged call
    human: MeanInterval  # the supervisors' scores of the random audit


@dataclass(frozen=True)
class AutoFailRate:
    criterion: Criterion
    failed: int  # judged calls whose value (that exists) is at or below the fail value
    calls: int  # judged calls in the period

    @property
    def rate(self) -> float | None:
        return self.failed / self.calls if self.calls else None


@dataclass(frozen=True)
class Backlog:
    waiting: int  # calls in the review queue: the queue's total with these filters
    oldest: datetime | None  # when the longest-waiting call was judged
    ages: list[tuple[int | None, int | None, int]]  # (from days, to days; None: open) → calls


@dataclass(frozen=True)
class NoReview:
    """The period's judged calls that went to no one (no reason to review, not even the audit), and the guarantee
    the values that skipped review carry: the rubric's target and risk, and how many criteria are certified."""

    judged: int
    unreviewed: int
    target: float
    risk: float
    certified: int  # criteria with a certified threshold today
    criteria: int

    @property
    def share(self) -> float | None:
        return self.unreviewed / self.judged if self.judged else None


@dataclass(frozen=True)
class Dashboard:
    filters: ReportFilters
    quality: Estimate  # the period's: the scorecards' rubric total for the quality score
    weeks: list[QualityWeek]
    judged: int  # judged calls in the period
    auto_failed: int  # of those, auto-failed by a value that exists
    auto_fail: list[AutoFailRate]  # per critical criterion
    evidence: Tally  # the evidence report's unverified-quote rate
    backlog: Backlog
    furthest: list[CriterionCeiling]  # the criteria whose judge–human QWK is lowest
    disputes: OpenDisputes
    no_review: NoReview


@dataclass(frozen=True)
class OpenDisputes:
    waiting: int  # open disputes of the rubric's calls
    overdue: int  # of those, past their due date


def by_week(place: Place) -> dict:
    return {"week": place.week}


def _monday(week: date | datetime | str | None) -> date | None:
    """A week from the rollup (a date) or from the calls (a datetime; text on SQLite)."""
    if week is None or isinstance(week, date) and not isinstance(week, datetime):
        return week
    if isinstance(week, datetime):
        return timezone.localtime(week).date() if timezone.is_aware(week) else week.date()
    return date.fromisoformat(week[:10])


def mean_interval(moments: Moments) -> MeanInterval:
    mean, variance = moments.mean, moments.variance
    if mean is None or variance is None:
        return MeanInterval(moments.n, mean, None)
    half = t_quantile(0.975, moments.n - 1) * math.sqrt(variance / moments.n)
    return MeanInterval(moments.n, mean, (mean - half, mean + half))


def _overall_by_week(filters: ReportFilters) -> dict[date | None, CellSample]:
    samples = period_samples(filters, by_week, narrowed=True)
    weekly: dict[date | None, CellSample] = {}
    for ((week,), column), sample in samples.cells.items():
        if column == OVERALL:
            monday = _monday(week)
            weekly[monday] = weekly.get(monday, CellSample()) + sample
    return weekly


def quality_weeks(filters: ReportFilters) -> tuple[Estimate, list[QualityWeek]]:
    """The quality score over the period and week by week, from the scorecards' samples and estimator, of
    the calls of the filters' team and agent in the reader's scope (narrowed in the query: the rollup
    keeps agent-weeks apart; grouping by team to sum in Python cost 0.3 s more at a million scores)."""
    weekly = _overall_by_week(filters)
    total = sum(weekly.values(), CellSample())
    pools = []
    if filters.scope is not None and filters.scope.teams_limit(filters.rubric.workspace_id):
        # A team-limited supervisor's figures borrow the rubric's audit where their own is too small, as
        # the scorecard's totals do: the other teams' calls correct theirs, and are not shown.
        rubric = sum(_overall_by_week(replace(filters, scope=None)).values(), CellSample())
        pools = [(CorrectionLevel.RUBRIC, rubric)]
    weeks = [
        QualityWeek(
            week,
            # A week with few audited calls: the period's (then, for a team-limited reader, the rubric's).
            scorecard_estimate(sample, [(CorrectionLevel.RUBRIC, total), *pools]),
            mean_interval(sample.whole.judged),
            mean_interval(sample.whole.human),
        )
        for week, sample in sorted(weekly.items(), key=lambda item: (item[0] is None, item[0] or date.min))
    ]
    return scorecard_estimate(total, pools), weeks


def auto_fail_rates(filters: ReportFilters, counts: Tallies) -> tuple[int, int, list[AutoFailRate]]:
    """Judged calls, those auto-failed, and per critical criterion the calls its verified value fails: over
    the current runs (what the call's score is), by the values that exist (`JUDGE_VALUE_EXISTS`)."""
    judged = counts[CALLS].calls
    rates = [
        AutoFailRate(criterion, counts[criterion.key].failed, judged)
        for criterion in filters.rubric.criteria.all()
        if criterion.critical
    ]
    return judged, counts[CALLS].failed, rates


def backlog(filters: ReportFilters, *, now: datetime | None = None) -> Backlog:
    """The review queue with the same filters (every version of the rubric, as the queue filters), and how
    long its calls have waited since they were judged."""
    now = now or timezone.now()
    queue = queue_recordings(
        scope=filters.scope or EVERYTHING,
        filters=QueueFilters(
            rubric=filters.rubric.slug,
            team=filters.team,
            agent=filters.agent,
            date_from=filters.date_from,
            date_to=filters.date_to,
        )
    ).order_by()
    # When it was judged: its run's finish (its creation for a run written without one, as bulk loads do).
    queue = queue.annotate(judged_at=Coalesce("current_run__finished_at", "current_run__created_at"))
    edges = [None, *BACKLOG_AGES, None]
    buckets = {}
    for index, (low, high) in enumerate(zip(edges, edges[1:])):
        condition = Q()
        if low is not None:
            condition &= Q(judged_at__lte=now - timedelta(days=low))
        if high is not None:
            condition &= Q(judged_at__gt=now - timedelta(days=high))
        buckets[f"age_{index}"] = Count("pk", filter=condition)
    row = queue.aggregate(waiting=Count("pk"), oldest=Min("judged_at"), **buckets)
    ages = [(low, high, row[f"age_{index}"]) for index, (low, high) in enumerate(zip(edges, edges[1:]))]
    return Backlog(waiting=row["waiting"], oldest=row["oldest"], ages=ages)


def open_disputes(filters: ReportFilters, *, now: datetime | None = None) -> OpenDisputes:
    """Agents' disputes waiting for a lead, of reviews of the filters' calls (the deviation report counts
    the same disputes: `dispute_tallies`), and how many are past their due date."""
    now = now or timezone.now()
    row = Dispute.objects.filter(report_run_q(filters, "review__run__"), status=Dispute.Status.OPEN).aggregate(
        waiting=Count("pk"), overdue=Count("pk", filter=Q(due_at__lt=now))
    )
    return OpenDisputes(waiting=row["waiting"], overdue=row["overdue"])


def furthest_criteria(filters: ReportFilters, counts: Tallies) -> list[CriterionCeiling]:
    """The criteria whose judge–human QWK is lowest (those with pairs), each with the supervisors' own."""
    ceiling = [row for row in ceiling_of(list(filters.rubric.criteria.all()), counts) if row.judge_human_qwk is not None]
    return sorted(ceiling, key=lambda row: row.judge_human_qwk)[:FURTHEST]


def dashboard_evidence(counts: Tallies) -> Tally:
    """The evidence report's unverified-quote rate over every criterion (`evidence_report(...).tally`)."""
    return sum((Tally(tally.scores, tally.unverified) for key, tally in counts.items() if key != CALLS), Tally())


def no_review(filters: ReportFilters) -> NoReview:
    """The share of the filters' judged calls whose current judgment sent them to no review, beside what the routing
    guarantees for the rubric version (routing.selectors.routing_table, the rubric's admin page's table)."""
    judged = Recording.objects.filter(
        report_run_q(filters, "current_run__"),
        status__in=[Recording.Status.JUDGED, Recording.Status.IN_REVIEW, Recording.Status.REVIEWED],
    )
    row = judged.aggregate(judged=Count("pk"), unreviewed=Count("pk", filter=Q(review_reasons=[])))
    table = routing_table(rubric=filters.rubric)
    certified = {line.key for line in table.rows if line.certified}
    return NoReview(
        judged=row["judged"], unreviewed=row["unreviewed"], target=table.target, risk=table.risk,
        certified=len(certified), criteria=len({line.key for line in table.rows}),
    )  # fmt: skip


def dashboard(filters: ReportFilters) -> Dashboard:
    quality, weeks = quality_weeks(filters)
    counts = period_tallies(filters)  # the evidence tally, the auto-fail and the ceiling: the reports' counts
    judged, auto_failed, rates = auto_fail_rates(filters, counts)
    return Dashboard(
        filters=filters,
        quality=quality,
        weeks=weeks,
        judged=judged,
        auto_failed=auto_failed,
        auto_fail=rates,
        evidence=dashboard_evidence(counts),
        backlog=backlog(filters),
        furthest=furthest_criteria(filters, counts),
        disputes=open_disputes(filters),
        no_review=no_review(filters),
    )
