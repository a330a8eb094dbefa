"""Reads for the deviation and evidence-quality reports.

Each report is a few GROUP BY queries whose results have at most a few
thousand rows, whatever the number of scores; the figures are derived from
those counts in `stats` and here. Works on PostgreSQL and SQLite; the one
PostgreSQL-only operator (jsonb containment, in `qa.routing.in_review_group`)
is used only where the database says it supports it.

The deviation report's cube (every reviewed score, counted by criterion, values
and reasons) and its human ceiling are read from their rollups per agent-week
and the days at either end (`insights.reports.rollup`) while the rollups are
current (`rollups_for`), and from the scores while they are not: the same
figures either way (tests/reports/test_deviation_rollup.py).

Which scores count
    Deviation: the scores of the run that each recording's latest review
    judged (`Review.run`), when that review is final (approve or reject). A
    latest review asking for another review (`needs_review`) is not a human
    judgement yet: its recording counts in no figure, only in `needs_review`.
    Evidence quality: the scores of every succeeded run, not only current
    runs. A re-judged recording then counts once per judgement; that is the
    point, since the rate measures the judge's quoting per model and prompt
    version, and comparing an old prompt with its replacement needs both runs.

The human value of a criterion
    None when the latest final review marked the criterion not applicable;
    else its adjusted value if set; else the model's value when the review
    approves and did not mark the criterion rejected (a supervisor who flags a
    criterion as wrong does not agree with it); else none. A criterion is
    rejected by a final review whose entry for it is marked rejected, or, in a
    reject, gives another value or "does not apply" in place of the judge's
    (`reviews.selectors.IS_REJECTED`): a reject's other criteria are not.

Groups
    As `qa.routing.review_group` says: `random_audit` when the recording's
    review reasons include random_audit (the unbiased sample, drawn whatever
    else the call was routed for); `warm_up` when they include warm_up (a
    census of a new version's first calls, not a sample); `flagged` when they
    include any other reason (low confidence, unverified evidence...). `all`:
    every reviewed recording, including ones in no group. A recording in
    several groups is counted in each.

Filters
    Rubric version (each criterion belongs to one version), the call's date
    (`Recording.occurred_at`, whole days in the current time zone), team and
    agent id. Evidence weeks are the weeks the run was made (`JudgeRun.created_at`,
    Monday first), because the trend follows changes of model and prompt.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from django.db import connection, transaction

from django.db.models import (
    Avg,
    BooleanField,
    Case,
    Count,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    When,
)
from django.db.models.functions import Abs, TruncWeek

from access.scope import EVERYTHING, Scope
from qa.models import JUDGE_VALUE_EXISTS, Judge, JudgeRun, Recording, Score, judge_value_exists
from qa.routing import ReviewGroup, in_review_group
from disputes.models import Dispute, DisputedCriterion
from reviews.models import CriterionReview, Review
from insights.reports.ceiling import CriterionCeiling, criterion_ceiling
from insights.reports.rollup import (
    Tallies, call_tallies, deviation_cube, reviewed_scores, rollup_deviation, rollup_tallies, tallies,
)  # fmt: skip
from reviews.filters import GROUP_REASONS, Group, ReportFilters, days_q, place_q
from reviews.periods import day_start, period_split
from insights.scorecards.moments import judged_calls
from insights.scorecards.services import rollups_readable
from reviews.figures.stats import MIN_N, Agreement, PairCount, Tally, agreement, share
from reviews.reference import FINAL_DECISIONS, HUMAN_VALUE, IS_REJECTED, latest_reviews, with_review_entry
from rubrics.models import Criterion, Rubric
from rubrics.selectors import rubric_latest_published


@dataclass(frozen=True)
class CriterionDeviation:
    """The judge against the supervisors on one criterion: on every reviewed score (the report measures
    the judge, so an unverified value is compared too), and split by whether the quote verified."""

    criterion: Criterion
    agreement: Agreement
    verified: Agreement
    unverified: Agreement


@dataclass(frozen=True)
class DeviationGroup:
    recordings: int  # with a final latest review
    needs_review: int  # latest review is needs_review: not counted in the figures
    criteria: list[CriterionDeviation]
    reject_reasons: dict[str, int]  # latest reviews that reject, by overall reason ("": none given), most first


@dataclass(frozen=True)
class DisputeTally:
    """Agents' disputes of one criterion: how many it was disputed in, how many a lead decided, how many upheld."""

    opened: int = 0
    decided: int = 0
    upheld: int = 0

    @property
    def upheld_share(self) -> float | None:
        return share(self.upheld, self.decided)


@dataclass(frozen=True)
class CriterionDisputes:
    criterion: Criterion
    tally: DisputeTally


@dataclass(frozen=True)
class DeviationReport:
    rubric: Rubric
    ceiling: list[CriterionCeiling]  # per criterion: supervisors against each other, beside the judge
    groups: dict[Group, DeviationGroup]
    disputes: dict[int, DisputeTally] = field(default_factory=dict)  # criterion id -> its disputes

    @property
    def criteria_disputes(self) -> list[CriterionDisputes]:
        """Each criterion of the version, in order, with its disputes (none: zeros)."""
        return [
            CriterionDisputes(row.criterion, self.disputes.get(row.criterion.pk, DisputeTally()))
            for row in self.groups[Group.ALL].criteria
        ]


def dispute_tallies(filters: ReportFilters) -> dict[int, DisputeTally]:
    """Per criterion id of the rubric version: the disputes of reviews of its calls (the filters' calls),
    decided ones and upheld ones. One query."""
    rows = (
        DisputedCriterion.objects.filter(report_run_q(filters, "dispute__review__run__"))
        .values("criterion_id")
        .annotate(
            opened=Count("pk"),
            decided=Count("pk", filter=Q(dispute__status=Dispute.Status.RESOLVED)),
            upheld=Count("pk", filter=Q(outcome=DisputedCriterion.Outcome.UPHELD)),
        )
        .order_by()
    )
    return {row["criterion_id"]: DisputeTally(row["opened"], row["decided"], row["upheld"]) for row in rows}


@dataclass(frozen=True)
class WeekTally:
    week: date
    tally: Tally


@dataclass(frozen=True)
class CriterionEvidence:
    criterion: Criterion
    tally: Tally
    unverified_by_status: dict[str, int]  # verification status -> unverified scores


@dataclass(frozen=True)
class ModelEvidence:
    model: str
    prompt_version: str
    tally: Tally
    weeks: list[WeekTally]


@dataclass(frozen=True)
class EvidenceReport:
    rubric: Rubric
    tally: Tally  # over all the scores
    criteria: list[CriterionEvidence]
    models: list[ModelEvidence]
    weeks: list[WeekTally]


@dataclass(frozen=True)
class EvidenceCell:
    """Narrows the evidence drill-down to one cell of the report; blank fields don't narrow."""

    criterion: Criterion | None = None
    model: str = ""
    prompt_version: str = ""
    week: date | None = None
    unverified_only: bool = False


def report_run_q(filters: ReportFilters, prefix: str) -> Q:
    """The filters as conditions on the JudgeRun reached through `prefix`."""
    q = Q(**{f"{prefix}rubric": filters.rubric}) & days_q(filters.date_from, filters.date_to, prefix=f"{prefix}recording__")
    return q & place_q(filters)(f"{prefix}recording__")


def report_scores_q(filters: ReportFilters) -> Q:
    """The filters as conditions on scores, with their partition key's lower bound: a run is made after its
    call occurred (ingest refuses a time to come), so a period's scores lie in the months from its first day
    on, and PostgreSQL, told so, reads only those partitions (docs/operations/storage.md)."""
    q = report_run_q(filters, "run__")
    return q & Q(run_created_at__gte=day_start(filters.date_from)) if filters.date_from else q


def _group_q(group: Group, reasons_path: str) -> Q:
    return Q() if group == Group.ALL else in_review_group(ReviewGroup(group), reasons_path)


def _group_flags(reasons_path: str) -> dict[str, Case]:
    """Membership of the two overlapping groups, to GROUP BY: counts stay additive."""
    return {
        f"in_{group}": Case(
            When(in_review_group(ReviewGroup(group), reasons_path), then=True),
            default=False,
            output_field=BooleanField(),
        )
        for group in GROUP_REASONS
    }


def _groups_of(row: dict) -> list[Group]:
    return [Group.ALL, *(group for group in GROUP_REASONS if row[f"in_{group}"])]


def _groups_of_reasons(reasons: list[str] | None) -> list[Group]:
    """The groups of a call with these review reasons, as `in_review_group` says in SQL: a group's reasons
    include one of them."""
    given = set(reasons or ())
    return [Group.ALL, *(group for group, members in GROUP_REASONS.items() if given.intersection(members))]


def _hashed(queryset: QuerySet) -> list[dict]:
    """The rows of a GROUP BY over hundreds of thousands of scores, grouped in a hash table in memory.

    PostgreSQL expects a few hundred rows from the latest-review anti-join (it finds tens of thousands), so it
    sorts the cube's rows to group them, on disk past 4 MB of work memory: a quarter of the deviation report's
    CPU at a million scores (bench/reports/README.md). The settings last for this query only: they are set
    back before the transaction, which may be a caller's, goes on."""
    if connection.vendor != "postgresql":
        return list(queryset)
    # SET LOCAL needs a transaction; inside a caller's, a savepoint would add nothing but two statements.
    within = nullcontext() if connection.in_atomic_block else transaction.atomic()
    with within, connection.cursor() as cursor:
        cursor.execute("SET LOCAL work_mem = '64MB'; SET LOCAL enable_sort = off")
        try:
            return list(queryset)
        finally:
            cursor.execute("SET LOCAL enable_sort TO DEFAULT; SET LOCAL work_mem TO DEFAULT")


def _reviewed_scores(filters: ReportFilters) -> QuerySet[Score]:
    """Scores of the runs judged by each recording's latest final review."""
    return reviewed_scores(report_scores_q(filters))


def _cube(filters: ReportFilters, criteria: list[Criterion], *, readable: bool) -> list[dict]:
    """The deviation cube's rows (`insights.reports.rollup.deviation_cube`): from its rollup's whole weeks and
    edge days when the rollups may be read (`rollups_for`), as the ceiling's counts are; else from the scores."""
    if not readable:
        return _hashed(deviation_cube(_reviewed_scores(filters)))
    where = place_q(filters, workspace="rubric__workspace")("")
    rows = rollup_deviation(filters.rubric, split=period_split(filters.date_from, filters.date_to), where=where)
    ids = {criterion.key: criterion.pk for criterion in criteria}
    return [{**row, "criterion_id": ids.get(row["criterion_key"])} for row in rows]


def deviation_report(filters: ReportFilters) -> DeviationReport:
    criteria = list(filters.rubric.criteria.all())
    readable = rollups_for(filters)
    pairs: defaultdict[tuple[Group, int], list[PairCount]] = defaultdict(list)
    split: defaultdict[tuple[Group, int, bool], list[PairCount]] = defaultdict(list)
    for row in _cube(filters, criteria, readable=readable):
        pair = PairCount(
            model=row["value"],
            human=row["human"],
            rejected=bool(row["rejected"]),
            count=row["count"],
            human_not_applicable=bool(row["human_not_applicable"]),  # NULL without a criterion entry
        )
        for group in _groups_of_reasons(row["reasons"]):
            pairs[(group, row["criterion_id"])].append(pair)
            split[(group, row["criterion_id"], judge_value_exists(evidence_verified=row["evidence_verified"]))].append(
                pair
            )

    recordings = (
        latest_reviews()
        .filter(report_run_q(filters, "run__"))
        .values("reject_reason", **_group_flags("recording__review_reasons"))
        .annotate(
            final=Count("pk", filter=Q(decision__in=FINAL_DECISIONS)),
            pending=Count("pk", filter=Q(decision=Review.Decision.NEEDS_REVIEW)),
            rejects=Count("pk", filter=Q(decision=Review.Decision.REJECT)),
        )
        .order_by()
    )
    final: Counter[Group] = Counter()
    pending: Counter[Group] = Counter()
    reasons: defaultdict[Group, Counter[str]] = defaultdict(Counter)
    for row in recordings:
        for group in _groups_of(row):
            final[group] += row["final"]
            pending[group] += row["pending"]
            if row["rejects"]:
                reasons[group][row["reject_reason"]] += row["rejects"]

    return DeviationReport(
        rubric=filters.rubric,
        ceiling=report_ceiling(filters, criteria, readable=readable),
        groups={
            group: DeviationGroup(
                recordings=final[group],
                needs_review=pending[group],
                reject_reasons=dict(reasons[group].most_common()),
                criteria=[
                    CriterionDeviation(
                        criterion,
                        agreement=agreement(pairs[(group, criterion.pk)]),
                        verified=agreement(split[(group, criterion.pk, True)]),
                        unverified=agreement(split[(group, criterion.pk, False)]),
                    )
                    for criterion in criteria
                ],
            )
            for group in Group
        },
        disputes=dispute_tallies(filters),
    )


def _add(total: Tallies, found: Tallies) -> None:
    for key, tally in found.items():
        total[key].add(tally)


def rollups_for(filters: ReportFilters) -> bool:
    """Whether the filters' figures may come from the weekly rollups: they are up to date enough, and the
    reader's calls are not limited to a source, which the rollups do not keep."""
    return rollups_readable(rubric=filters.rubric) and not (filters.scope is not None and filters.scope.by_source)


def period_tallies(filters: ReportFilters, *, readable: bool | None = None) -> Tallies:
    """The filters' counts per criterion key (`insights.reports.rollup`): the rollups' whole weeks and the
    days at either end, brought up to date first; the calls themselves while the rollups are too far
    behind. At most six queries, whatever the number of calls. `readable`: what `rollups_for` said, if the
    caller asked it already (a second asking would be a query more)."""
    rubric = filters.rubric
    if rollups_for(filters) if readable is None else readable:
        where = place_q(filters, workspace="rubric__workspace")("")
        return rollup_tallies(rubric, split=period_split(filters.date_from, filters.date_to), where=where)
    total = tallies()
    calls = Recording.objects.filter(judged_calls(rubric, filters.date_from, filters.date_to)(""), place_q(filters)(""))
    for found in call_tallies(rubric, calls).values():
        _add(total, found)
    return total


def ceiling_of(criteria: list[Criterion], counts: Tallies) -> list[CriterionCeiling]:
    """Per criterion, the judge against the supervisors beside the supervisors against each other."""
    return [
        criterion_ceiling(
            criterion,
            judge_pairs=counts[criterion.key].judge_pairs(),
            human_pairs=counts[criterion.key].human_pairs(),
            human_units=counts[criterion.key].human_units,
        )
        for criterion in criteria
    ]


def report_ceiling(
    filters: ReportFilters, criteria: list[Criterion] | None = None, *, readable: bool | None = None
) -> list[CriterionCeiling]:
    """Per criterion, the judge against the supervisors beside the supervisors against each other: the
    deviation report's ceiling, and the dashboard's criteria furthest from the supervisors."""
    criteria = criteria if criteria is not None else list(filters.rubric.criteria.all())
    return ceiling_of(criteria, period_tallies(filters, readable=readable))


def previous_reviewed_version(rubric: Rubric) -> Rubric | None:
    """The latest earlier version of the rubric that has reviews, for a version with none yet."""
    return (
        Rubric.objects.filter(slug=rubric.slug, version__lt=rubric.version, runs__reviews__isnull=False)
        .distinct()
        .order_by("-version")
        .first()
    )


def deviation_recordings(filters: ReportFilters, group: Group) -> QuerySet[Review]:
    """Per reviewed recording: the model's mean over the reviewed run against the
    supervisor's adjusted mean, largest disagreement first."""
    return (
        latest_reviews()
        .filter(report_run_q(filters, "run__"), _group_q(group, "recording__review_reasons"), decision__in=FINAL_DECISIONS)
        .annotate(model_mean=Avg("run__scores__value"))
        .annotate(difference=F("model_mean") - F("adjusted_mean"))
        .select_related("recording")
        .order_by(Abs("difference").desc(nulls_last=True), "-created_at", "-pk")
    )


def _score_rows(scores: QuerySet[Score]) -> QuerySet[Score]:
    """Scores with their latest final review's values, when that review judged their run."""
    review = latest_reviews().filter(decision__in=FINAL_DECISIONS, run_id=OuterRef("run_id"))
    entry = CriterionReview.objects.filter(review_id=OuterRef("review_id"), criterion_id=OuterRef("criterion_id"))
    return (
        scores.annotate(
            review_id=Subquery(review.values("pk")[:1]),
            review_decision=Subquery(review.values("decision")[:1]),
            review_comment=Subquery(review.values("comment")[:1]),
            cr_not_applicable=Subquery(entry.values("not_applicable")[:1]),
            cr_adjusted=Subquery(entry.values("adjusted_value")[:1]),
            cr_rejected=Subquery(entry.values("rejected")[:1]),
            cr_comment=Subquery(entry.values("comment")[:1]),
        )
        .annotate(human_value=HUMAN_VALUE, is_rejected=IS_REJECTED)
        .select_related("run__recording", "criterion")
        # Newest judgement first: follows the run id index, no sort of the whole set.
        .order_by("-run_id", "criterion__order", "criterion_id")
    )


def deviation_scores(
    filters: ReportFilters, group: Group, criterion: Criterion | None = None, verified: bool | None = None
) -> QuerySet[Score]:
    """The rows behind a deviation cell (`verified`: only the scores whose quote did, or did not, verify)."""
    scores = _reviewed_scores(filters).filter(_group_q(group, "run__recording__review_reasons"))
    if criterion is not None:
        scores = scores.filter(criterion=criterion)
    if verified is not None:
        scores = scores.filter(JUDGE_VALUE_EXISTS if verified else ~JUDGE_VALUE_EXISTS)
    return _score_rows(scores)


def _judged_scores(filters: ReportFilters) -> QuerySet[Score]:
    """The scores of the rubric's succeeded runs (a score's criterion is one of its run's rubric)."""
    return Score.objects.filter(report_scores_q(filters), run__status=JudgeRun.Status.SUCCEEDED)


CellKey = tuple[int, str, str, date]  # criterion id, model, prompt version, week


def _count_cells(scores: QuerySet[Score], *also: str) -> Counter[tuple]:
    """Scores per (criterion, model, prompt version, week, *also)."""
    rows = (
        scores.values(
            "criterion_id",
            *also,
            model=F("run__model"),
            prompt_version=F("run__prompt_version"),
            week=TruncWeek("run__created_at"),
        )
        .annotate(count=Count("pk"))
        .order_by()
    )
    # Weeks come truncated in the current time zone already.
    return Counter(
        {
            (
                row["criterion_id"],
                row["model"],
                row["prompt_version"],
                row["week"].date(),
                *(row[k] for k in also),
            ): row["count"]
            for row in rows
        }
    )


def _scores_by_runs(filters: ReportFilters, criteria: list[Criterion]) -> Counter[CellKey]:
    """The scores every run has: one per criterion of its rubric."""
    runs = (
        JudgeRun.objects.filter(report_run_q(filters, ""), status=JudgeRun.Status.SUCCEEDED)
        .values("model", "prompt_version", week=TruncWeek("created_at"))
        .annotate(count=Count("pk"))
        .order_by()
    )
    return Counter(
        {
            (criterion.pk, row["model"], row["prompt_version"], row["week"].date()): row["count"]
            for row in runs
            for criterion in criteria
        }
    )


def evidence_report(filters: ReportFilters) -> EvidenceReport:
    """Unverified quotes per criterion, model, prompt version and week.

    Grouping a million scores by those keys is what costs (text keys and a
    week expression PostgreSQL has no statistics for, so it aggregates in one
    process). Only the unverified scores, a small share, are grouped; the
    totals come from the runs, as each run has one score per criterion. That
    is checked: a run has at most one score per criterion (a unique
    constraint), all on its rubric's criteria (the judge makes them from the
    rubric), so the runs' scores add up to the counted scores only if no run
    lacks one. If it does not hold, the scores are grouped after all.
    """
    criteria = list(filters.rubric.criteria.all())
    scores = _judged_scores(filters)
    failed = _count_cells(scores.filter(evidence_verified=False), "verification_status")
    totals = _scores_by_runs(filters, criteria)
    if totals.total() != scores.count():
        totals = _count_cells(scores)
    unverified: Counter[CellKey] = Counter()
    statuses: defaultdict[int, Counter[str]] = defaultdict(Counter)
    for (criterion_id, model, prompt_version, week, status), count in failed.items():
        unverified[(criterion_id, model, prompt_version, week)] += count
        statuses[criterion_id][status] += count

    by_criterion: defaultdict[int, Tally] = defaultdict(Tally)
    by_model: defaultdict[tuple[str, str], Tally] = defaultdict(Tally)
    by_week: defaultdict[date, Tally] = defaultdict(Tally)
    by_model_week: defaultdict[tuple[str, str], defaultdict[date, Tally]] = defaultdict(lambda: defaultdict(Tally))
    for cell, total in totals.items():
        criterion_id, model, prompt_version, week = cell
        tally = Tally(total, unverified[cell])
        by_criterion[criterion_id] += tally
        by_model[(model, prompt_version)] += tally
        by_week[week] += tally
        by_model_week[(model, prompt_version)][week] += tally

    return EvidenceReport(
        rubric=filters.rubric,
        tally=sum(by_criterion.values(), Tally()),
        criteria=[
            CriterionEvidence(criterion, by_criterion[criterion.pk], dict(statuses[criterion.pk].most_common()))
            for criterion in criteria
        ],
        models=[
            ModelEvidence(model, prompt_version, tally, _weekly(by_model_week[(model, prompt_version)]))
            for (model, prompt_version), tally in sorted(by_model.items())
        ],
        weeks=_weekly(by_week),
    )


@dataclass
class CostRow:
    """What one model's succeeded runs of one week used and cost (issue 45)."""

    model: str
    week: date
    calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)  # of the priced calls
    priced_calls: int = 0  # calls whose judge has prices

    @property
    def cost_per_call(self) -> Decimal | None:
        return self.cost / self.priced_calls if self.priced_calls else None


def judge_costs(filters: ReportFilters) -> list[CostRow]:
    """Tokens and cost per model and week of the rubric's succeeded runs, at each run's judge's prices
    (qa.costs; a batched run at its discount). Summed per judge in the database, priced here: a run's
    cost is linear in its tokens, so a group's tokens price the same as its runs one by one."""
    groups = (
        JudgeRun.objects.filter(report_run_q(filters, ""), status=JudgeRun.Status.SUCCEEDED)
        .values("judge_id", "batched", "model", week=TruncWeek("created_at"))
        .annotate(calls=Count("pk"), prompt=Sum("prompt_tokens"), cached=Sum("cached_tokens"),
                  completion=Sum("completion_tokens"))
        .order_by()
    )  # fmt: skip
    groups = list(groups)
    judges = Judge.objects.in_bulk({group["judge_id"] for group in groups if group["judge_id"]})
    rows: dict[tuple[str, date], CostRow] = {}
    for group in groups:
        week = group["week"].date()
        row = rows.setdefault((group["model"], week), CostRow(group["model"], week))
        prompt, cached, completion = group["prompt"] or 0, group["cached"] or 0, group["completion"] or 0
        row.calls += group["calls"]
        row.prompt_tokens, row.cached_tokens, row.completion_tokens = (
            row.prompt_tokens + prompt, row.cached_tokens + cached, row.completion_tokens + completion
        )
        judge = judges.get(group["judge_id"])
        cost = judge.cost(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached,
                          batch=group["batched"]) if judge else None  # fmt: skip
        if cost is not None:
            row.cost += cost
            row.priced_calls += group["calls"]
    return [rows[key] for key in sorted(rows)]


def _weekly(tallies: dict[date, Tally]) -> list[WeekTally]:
    return [WeekTally(week, tally) for week, tally in sorted(tallies.items())]


def evidence_scores(filters: ReportFilters, cell: EvidenceCell) -> QuerySet[Score]:
    """The rows behind an evidence-quality cell."""
    scores = _judged_scores(filters)
    if cell.criterion is not None:
        scores = scores.filter(criterion=cell.criterion)
    if cell.model:
        scores = scores.filter(run__model=cell.model)
    if cell.prompt_version:
        scores = scores.filter(run__prompt_version=cell.prompt_version)
    if cell.week:
        scores = scores.filter(
            run__created_at__gte=day_start(cell.week), run__created_at__lt=day_start(cell.week + timedelta(days=7))
        )
    if cell.unverified_only:
        scores = scores.filter(evidence_verified=False)
    return _score_rows(scores)


@dataclass(frozen=True)
class CriterionFigures:
    """One criterion of one version: its agreement with the supervisors and its quoting."""

    criterion: Criterion
    agreement: Agreement
    evidence: Tally
    disputes: DisputeTally = DisputeTally()

    @property
    def upheld_dispute_rate(self) -> float | None:
        """Upheld disputes per reviewed call: how often an agent showed the review (and so the reference) wrong."""
        return share(self.disputes.upheld, self.agreement.reviewed)


@dataclass(frozen=True)
class CriterionHealth:
    current: CriterionFigures
    previous: CriterionFigures | None  # the criterion of the same key, or the one it replaces
    worst_rejection: bool  # in the rubric's worst quarter for rejections
    worst_unverified: bool  # in the rubric's worst quarter for unverified quotes
    worst_upheld_disputes: bool = False  # in the rubric's worst quarter for upheld disputes


@dataclass(frozen=True)
class RubricHealth:
    current: Rubric
    previous: Rubric | None
    criteria: list[CriterionHealth]


def _figures(rubric: Rubric, scope: Scope | None = None) -> dict[str, CriterionFigures]:
    filters = ReportFilters(rubric=rubric, scope=scope)
    report = deviation_report(filters)
    deviation = {row.criterion.pk: row.agreement for row in report.groups[Group.ALL].criteria}
    evidence = {row.criterion.pk: row.tally for row in evidence_report(filters).criteria}
    return {
        criterion.key: CriterionFigures(
            criterion, deviation[criterion.pk], evidence[criterion.pk], report.disputes.get(criterion.pk, DisputeTally())
        )
        for criterion in rubric.criteria.all()
    }


def worst_quarter(rates: dict[str, tuple[float | None, int]]) -> set[str]:
    """The keys of the highest quarter of rates (at least one), from (rate, how many it counts) per key.

    Only rates from MIN_N or more count (the reports' too-few threshold: 1 reject of 2 reviews is 50% and
    says nothing), zero and missing rates never, and a rate is flagged only above every rate left out: with
    identical rates (or a tie across the cut) nothing is worse than the rest, so none of the tied is flagged.
    """
    counted = {key: rate for key, (rate, n) in rates.items() if rate is not None and n >= MIN_N}
    ranked = sorted(((rate, key) for key, rate in counted.items() if rate), reverse=True)
    cut = -(-len(counted) // 4)  # a quarter of the criteria compared, rounded up
    left_out = [rate for rate, _key in ranked[cut:]] + [rate for rate in counted.values() if not rate]
    if not left_out:
        return set()  # nothing to be worse than
    bar = max(left_out)
    return {key for rate, key in ranked[:cut] if rate > bar}


def rubric_health(*, slug: str, scope: Scope | None = None) -> RubricHealth | None:
    """Each criterion of the published version beside the previous version's, over the reviewed calls in
    `scope` (the admin's reader: a team-limited supervisor's teams; None: all of them).

    None when the rubric has no published version yet.
    """
    current = rubric_latest_published(slug=slug, scope=EVERYTHING)  # the admin's rubric, already in scope
    if current is None:
        return None
    previous = current.previous_version()
    now = _figures(current, scope)
    before = _figures(previous, scope) if previous is not None else {}
    worst_rejection = worst_quarter({key: (f.agreement.rejection_rate, f.agreement.reviewed) for key, f in now.items()})
    worst_unverified = worst_quarter({key: (f.evidence.rate, f.evidence.total) for key, f in now.items()})
    worst_upheld = worst_quarter({key: (f.upheld_dispute_rate, f.agreement.reviewed) for key, f in now.items()})
    return RubricHealth(
        current=current,
        previous=previous,
        criteria=[
            CriterionHealth(
                current=figures,
                previous=before.get(key) or before.get(figures.criterion.replaces),
                worst_rejection=key in worst_rejection,
                worst_unverified=key in worst_unverified,
                worst_upheld_disputes=key in worst_upheld,
            )
            for key, figures in now.items()
        ],
    )


@dataclass(frozen=True)
class CriterionLine:
    """One criterion followed across a rubric's versions: by its key, or by the key it `replaces`."""

    key: str  # in the latest version that has it
    title: str
    cells: list[CriterionFigures | None]  # one per version, oldest first; None where the version lacks it

    @property
    def first_version(self) -> int:
        return next(index for index, cell in enumerate(self.cells) if cell is not None)

    @property
    def last_version(self) -> int:
        return max(index for index, cell in enumerate(self.cells) if cell is not None)


@dataclass(frozen=True)
class WeekRejections:
    week: date
    reviewed: int  # reviewed scores of calls judged that week
    rejected: int

    @property
    def rate(self) -> float | None:
        return share(self.rejected, self.reviewed)


@dataclass(frozen=True)
class VersionsReport:
    slug: str
    versions: list[Rubric]  # published and archived, oldest first
    lines: list[CriterionLine]
    weeks: list[WeekRejections]


def versions_report(*, slug: str, scope: Scope) -> VersionsReport:
    """Each criterion's figures (over the reviewed calls in the reader's `scope`: a supervisor's teams')
    in every version of a rubric, and the weekly rejection rate across versions. A criterion new in a
    version starts a line; one whose key is gone ends its line there, unless a criterion of the next
    version replaces it."""
    versions = list(
        Rubric.objects.filter(scope.workspaces_q(), slug=slug).exclude(status=Rubric.Status.DRAFT).order_by("version")
    )
    lines: list[dict] = []
    open_lines: dict[str, dict] = {}  # key in the previous version -> its line
    for index, version in enumerate(versions):
        continued: dict[str, dict] = {}
        for key, figures in _figures(version, scope).items():
            line = open_lines.pop(key, None) or open_lines.pop(figures.criterion.replaces, None)
            if line is None:
                line = {"cells": [None] * len(versions)}
                lines.append(line)
            line["cells"][index] = figures
            continued[key] = line
        open_lines = continued
    return VersionsReport(
        slug=slug,
        versions=versions,
        lines=[_line(line["cells"]) for line in lines],
        weeks=_rejections_by_week(slug, scope),
    )


def _line(cells: list[CriterionFigures | None]) -> CriterionLine:
    latest = next(cell for cell in reversed(cells) if cell is not None)
    return CriterionLine(key=latest.criterion.key, title=latest.criterion.title, cells=cells)


def _rejections_by_week(slug: str, scope: Scope) -> list[WeekRejections]:
    """Reviewed and rejected scores per week the call was judged, over every version of the rubric, of the
    calls in `scope`."""
    final_reviews = latest_reviews().filter(decision__in=FINAL_DECISIONS)
    path = "run__recording__"
    calls = scope.recordings_q(workspace=f"{path}workspace", team=f"{path}team", agent=f"{path}agent_id")
    rows = (
        with_review_entry(Score.objects.filter(calls, run__rubric__slug=slug, run__reviews__in=final_reviews))
        .values(week=TruncWeek("run__created_at"), rejected=IS_REJECTED)
        .annotate(count=Count("pk"))
        .order_by()
    )
    reviewed: Counter[date] = Counter()
    rejected: Counter[date] = Counter()
    for row in rows:
        reviewed[row["week"].date()] += row["count"]
        if row["rejected"]:
            rejected[row["week"].date()] += row["count"]
    return [WeekRejections(week, reviewed[week], rejected[week]) for week in sorted(reviewed)]
