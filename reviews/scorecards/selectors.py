"""Reads for the scorecards: per team and agent, per criterion and overall, the
judge's mean over every judged call corrected by the random audit
(`reviews.reports.stats.scorecard_estimate`).

Constant cost in the number of agents: five GROUP BY queries (the judge's
values and the audited pairs, per criterion and per call overall) return
additive moments per group, and teams and the rubric are sums of them.

Which calls count
    Judged: each recording's current run (its latest successful judgment),
    with a value (a criterion the judge found not applicable has none).
    Audited: those of them in the random-audit group whose latest review is
    final and judged that current run; the human value is the human reference's
    rule (`HUMAN_VALUE`), a supervisor's N/A is no value. Flagged calls are
    not a random sample and never correct anything.

Overall
    Per call, the weighted mean of its criteria (the criteria's weights) on a
    0–100 scale (each value as a share of its criterion's scale), over the
    criteria that have a value: the judge's from the judge's values, the human's
    from the human values. The estimator then runs on those per-call numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    Case,
    Count,
    Expression,
    F,
    FilteredRelation,
    FloatField,
    Max,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
    Window,
)
from django.db.models.functions import Cast, NullIf, RowNumber, TruncWeek
from django.utils.translation import gettext_lazy as _

from qa.models import Recording, Score
from reviews.reports.selectors import Group, ReportFilters, _group_q, _run_q
from reviews.reports.stats import CellSample, CorrectionLevel, Estimate, Moments, scorecard_estimate
from reviews.selectors import FINAL_DECISIONS, HUMAN_VALUE, HumanReference, day_start, human_references, latest_reviews
from rubrics.models import Rubric

OVERALL = "overall"
COACHING_CALLS = 5  # per criterion, in each of the verified and unverified lists


@dataclass(frozen=True)
class Column:
    """A criterion of the rubric, or the overall (key OVERALL, on 0–100)."""

    key: str
    title: str
    scale_min: int
    scale_max: int


@dataclass(frozen=True)
class ScorecardRow:
    team: str
    agent_id: str | None  # None on a team's row
    agent_name: str | None
    cells: list[Estimate]  # one per column, the overall last


@dataclass(frozen=True)
class Scorecard:
    rubric: Rubric
    columns: list[Column]
    rows: list[ScorecardRow]  # each team, then its agents
    totals: list[Estimate]  # the whole rubric: what the correction does, column by column


@dataclass(frozen=True)
class CoachingCall:
    recording_id: int
    external_id: str
    occurred_at: Any
    value: int
    evidence: str
    verification_status: str
    rationale: str
    human: HumanReference | None  # the supervisor's word on it, if a final review gave one


@dataclass(frozen=True)
class WeekPoint:
    week: date
    agent: Estimate
    team: Estimate


@dataclass(frozen=True)
class AgentCriterion:
    column: Column
    agent: Estimate
    team: Estimate
    weeks: list[WeekPoint]
    coaching: list[CoachingCall]  # lowest verified scores: the evidence to coach with
    unverified: list[CoachingCall]  # lowest unverified scores: listed apart, never evidence


@dataclass(frozen=True)
class AgentCard:
    rubric: Rubric
    agent_id: str
    agent_name: str
    team: str  # the team of most of the agent's calls in the period: the comparison
    criteria: list[AgentCriterion]  # the overall last


def columns_of(rubric: Rubric) -> list[Column]:
    criteria = [Column(c.key, c.title, c.scale_min, c.scale_max) for c in rubric.criteria.all()]
    return [*criteria, Column(OVERALL, str(_("Overall")), 0, 100)]


# Groupings: expressions over the recording reached through a path prefix, one
# GROUP BY key each. Every cell of a page is a sum of the groups' samples.
Grouping = Callable[[str], dict[str, Expression]]


def _by_agent(prefix: str) -> dict[str, Expression]:
    return {"team": F(f"{prefix}team"), "agent_id": F(f"{prefix}agent_id")}


def _is(condition: Q) -> Case:
    return Case(When(condition, then=True), default=False, output_field=BooleanField())


def _by_week_around(agent_id: str, team: str) -> Grouping:
    def grouping(prefix: str) -> dict[str, Expression]:
        return {
            "week": TruncWeek(f"{prefix}occurred_at"),
            "is_agent": _is(Q(**{f"{prefix}agent_id": agent_id})),
            "in_team": _is(Q(**{f"{prefix}team": team})),
        }

    return grouping


def _judged_recordings(filters: ReportFilters) -> QuerySet[Recording]:
    """The rubric's judged calls in the period, any team and agent. One table, so PostgreSQL estimates
    its rows well (a join on run.recording.current_run = run it takes for a handful)."""
    recordings = Recording.objects.filter(rubric=filters.rubric, current_run__isnull=False)
    if filters.date_from:
        recordings = recordings.filter(occurred_at__gte=day_start(filters.date_from))
    if filters.date_to:
        recordings = recordings.filter(occurred_at__lt=day_start(filters.date_to + timedelta(days=1)))
    return recordings.order_by()


def _current_scores(filters: ReportFilters, *conditions: Q) -> QuerySet[Score]:
    """Scores of the recordings' current runs. "Current" as a semi-join on the current_run ids, since a
    join condition (run.recording.current_run = run) makes PostgreSQL expect a handful of rows and
    choose nested loops over a hundred thousand."""
    current = _judged_recordings(filters).values("current_run_id")
    return Score.objects.filter(_run_q(filters, "run__"), *conditions, run__in=current)


def _audited_scores(filters: ReportFilters) -> QuerySet[Score]:
    """Current scores of random-audit calls whose latest, final review judged that run, with the human value
    (`HUMAN_VALUE`). One filter() call, so the join to the review is made once and reused."""
    final_reviews = latest_reviews(decisions=FINAL_DECISIONS)
    return _current_scores(
        filters, _group_q(Group.RANDOM_AUDIT, "run__recording__review_reasons"), Q(run__reviews__in=final_reviews)
    ).alias(
        cr=FilteredRelation("run__reviews__criteria", condition=Q(run__reviews__criteria__criterion=F("criterion"))),
        review_decision=F("run__reviews__decision"),
        cr_not_applicable=F("cr__not_applicable"),
        cr_adjusted=F("cr__adjusted_value"),
        cr_rejected=F("cr__rejected"),
        human=HUMAN_VALUE,
    )


def _grouped(rows: QuerySet, groups: dict[str, Expression], *fields: str) -> QuerySet:
    """values() of `fields` and the group keys; a key that is the model's own field is named as such."""
    own = [name for name, expression in groups.items() if isinstance(expression, F) and expression.name == name]
    return rows.values(*fields, *own, **{name: groups[name] for name in groups if name not in own})


def _share_of_scale(value: Expression) -> Expression:
    """A value as a weighted share (0–100) of its criterion's scale, for the overall."""
    low, high = F("criterion__scale_min"), F("criterion__scale_max")
    return Cast(value - low, FloatField()) * 100.0 * F("criterion__weight") / Cast(high - low, FloatField())


def _call_mean(value: str) -> Expression:
    """Per call: the weighted mean share over the criteria where `value` (an annotation) is not null."""
    given = Q(**{f"{value}__isnull": False})
    share = Case(When(given, then=_share_of_scale(F(value))), output_field=FloatField())
    weight = Case(When(given, then=F("criterion__weight")), output_field=FloatField())
    return Sum(share) / NullIf(Sum(weight), Value(0.0))


def _rows(sql: str, params: Iterable[Any]) -> list[dict[str, Any]]:
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # A million-row aggregate has a cost that switches JIT compilation on, and compiling
            # a hundred sums took longer than running them; grouping a million scores per call
            # spills to disk with the default 4 MB of work memory (bench/scorecards/README.md).
            cursor.execute("SET LOCAL jit = off")
            cursor.execute("SET LOCAL work_mem = '64MB'")
        cursor.execute(sql, list(params))
        names = [column.name for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _per_group(calls: QuerySet, keys: list[str], sums: dict[str, str], runs: QuerySet | None = None) -> list[dict]:
    """Sum per-call figures (`calls`, one row per run) per group: a GROUP BY over a GROUP BY, which Django
    cannot write. The group keys are columns of `calls`, or of `runs` (joined on the run id) when given.
    `sums` are SQL over the per-call columns, which are plain identifiers."""
    quote = connection.ops.quote_name
    calls_sql, params = calls.query.get_compiler(using=calls.db).as_sql()
    source, table = f"({calls_sql}) AS calls", "calls"
    if runs is not None:
        runs_sql, runs_params = runs.query.get_compiler(using=runs.db).as_sql()
        source, table = f"({runs_sql}) AS runs JOIN {source} ON calls.run_id = runs.current_run_id", "runs"
        params = (*runs_params, *params)
    grouped = ", ".join(f"{table}.{quote(key)}" for key in keys)
    selected = ", ".join(f"{expression} AS {quote(name)}" for name, expression in sums.items())
    return _rows(f"SELECT {grouped}, {selected} FROM {source} GROUP BY {grouped}", params)


def _moment_sums(name: str, value: str) -> dict[str, str]:
    return {
        f"{name}_n": f"COUNT({value})",
        f"{name}_total": f"SUM({value})",
        f"{name}_squares": f"SUM(({value}) * ({value}))",
    }


def _moments(row: dict[str, Any], name: str) -> Moments:
    return Moments(row[f"{name}_n"] or 0, float(row[f"{name}_total"] or 0), float(row[f"{name}_squares"] or 0))


def _samples(filters: ReportFilters, grouping: Grouping) -> dict[tuple[tuple, str], CellSample]:
    """Each group's sample per column key, in two queries whatever the number of groups.

    Each query reads the scores once, pivoted to one row per call (a column per criterion and
    the call's overall), and sums those rows per group: the moments of every column at once.
    """
    columns = {f"k{pk}": (pk, key) for pk, key in filters.rubric.criteria.values_list("pk", "key")}
    columns["overall"] = (None, OVERALL)
    keys = list(grouping(""))
    samples: defaultdict[tuple[tuple, str], CellSample] = defaultdict(CellSample)

    def per_criterion(value: str) -> dict[str, Expression]:
        return {f"{value}_{name}": Max(value, filter=Q(criterion_id=pk)) for name, (pk, _) in columns.items() if pk}

    # Scores are grouped per run before any join: a million rows go through one aggregate, and
    # only the hundred thousand per-call rows are joined to their recordings' group keys.
    criteria = [pk for pk, _ in columns.values() if pk]
    judged = Score.objects.filter(criterion__in=criteria, value__isnull=False).values("run_id")
    judged = judged.annotate(value_overall=_call_mean("value"), **per_criterion("value")).order_by()
    sums = {}
    for name in columns:
        sums |= _moment_sums(f"judged_{name}", f"value_{name}")
    runs = _grouped(_judged_recordings(filters), grouping(""), "current_run_id")
    for row in _per_group(judged, keys, sums, runs=runs):
        group = tuple(row[key] for key in keys)
        for name, (_, column) in columns.items():
            samples[(group, column)] += CellSample(judged=_moments(row, f"judged_{name}"))

    # The audited calls are a fifth: their scores are joined to the review and the recording first.
    audited = _grouped(_audited_scores(filters), grouping("run__recording__"), "run_id")
    audited = audited.annotate(
        value_overall=_call_mean("value"),
        human_overall=_call_mean("human"),
        **per_criterion("value"),
        **per_criterion("human"),
    ).order_by()
    sums = {}
    for name in columns:
        human, judge = f"human_{name}", f"value_{name}"
        sums |= _moment_sums(f"human_{name}", human)
        sums |= _moment_sums(f"difference_{name}", f"{human} - {judge}")
        sums |= _moment_sums(f"paired_{name}", f"{human} + 0 * {judge}")  # null unless the judge has a value
    for row in _per_group(audited, keys, sums):
        group = tuple(row[key] for key in keys)
        for name, (_, column) in columns.items():
            samples[(group, column)] += CellSample(
                human=_moments(row, f"human_{name}"),
                difference=_moments(row, f"difference_{name}"),
                paired_human=_moments(row, f"paired_{name}"),
            )
    return samples


def _sort_key(cell: Estimate) -> tuple:
    """Highest lower bound first; cells without an interval after every cell with one."""
    return (cell.lower is None, -(cell.lower if cell.lower is not None else cell.estimate or 0.0))


def scorecard(filters: ReportFilters, *, sort: str = OVERALL) -> Scorecard:
    """Every team, then its agents, each ordered by the lower bound of the `sort` column."""
    columns = columns_of(filters.rubric)
    samples = _samples(filters, _by_agent)
    names = _agent_names(filters)
    agents: defaultdict[str, dict[str, dict[str, CellSample]]] = defaultdict(lambda: defaultdict(dict))
    teams: defaultdict[str, dict[str, CellSample]] = defaultdict(lambda: defaultdict(CellSample))
    rubric: defaultdict[str, CellSample] = defaultdict(CellSample)
    for ((team, agent_id), column), sample in samples.items():
        agents[team][agent_id][column] = sample
        teams[team][column] += sample
        rubric[column] += sample

    def estimates(cell: dict[str, CellSample], pools: Callable[[str], list]) -> list[Estimate]:
        return [scorecard_estimate(cell.get(c.key, CellSample()), pools(c.key)) for c in columns]

    def rubric_pool(column: str) -> list[tuple[CorrectionLevel, CellSample]]:
        return [(CorrectionLevel.RUBRIC, rubric[column])]

    sort_index = next((i for i, column in enumerate(columns) if column.key == sort), len(columns) - 1)
    team_rows = sorted(
        (ScorecardRow(team, None, None, estimates(cells, rubric_pool)) for team, cells in teams.items()),
        key=lambda row: _sort_key(row.cells[sort_index]),
    )
    rows = []
    for team_row in team_rows:
        team = team_row.team

        def team_pool(column: str, team: str = team) -> list[tuple[CorrectionLevel, CellSample]]:
            return [(CorrectionLevel.TEAM, teams[team][column]), (CorrectionLevel.RUBRIC, rubric[column])]

        agent_rows = [
            ScorecardRow(team, agent_id, names.get(agent_id, ""), estimates(cells, team_pool))
            for agent_id, cells in agents[team].items()
        ]
        rows += [team_row, *sorted(agent_rows, key=lambda row: _sort_key(row.cells[sort_index]))]
    return Scorecard(
        rubric=filters.rubric, columns=columns, rows=rows, totals=estimates(rubric, lambda column: [])
    )


def _agent_names(filters: ReportFilters) -> dict[str, str]:
    return dict(_judged_recordings(filters).values_list("agent_id").annotate(name=Max("agent_name")))


def agent_card(filters: ReportFilters, agent_id: str) -> AgentCard | None:
    """The agent's estimates against their team's, week by week, and what to coach; None without calls.

    The team compared with is the team of most of the agent's calls in the period.
    """
    found = (
        _judged_recordings(filters)
        .filter(agent_id=agent_id)
        .values("team")
        .annotate(calls=Count("pk"), name=Max("agent_name"))
        .order_by("-calls", "team")
        .first()
    )
    if found is None:
        return None
    team = found["team"]
    columns = columns_of(filters.rubric)
    period = ReportFilters(rubric=filters.rubric, date_from=filters.date_from, date_to=filters.date_to)
    samples = _samples(period, _by_week_around(agent_id, team))
    # Per column: the agent's, the team's and the rubric's samples, each overall and per week.
    whole: defaultdict[tuple[str, str], CellSample] = defaultdict(CellSample)
    weekly: defaultdict[tuple[str, str, date], CellSample] = defaultdict(CellSample)
    for ((week, is_agent, in_team), column), sample in samples.items():
        scopes = ["rubric", *(["agent"] if is_agent else []), *(["team"] if in_team else [])]
        for scope in scopes:
            whole[(scope, column)] += sample
            if week is not None:
                weekly[(scope, column, week.date())] += sample
    weeks = sorted({week for (_, _, week) in weekly})

    def estimates(sample: Callable[[str], CellSample], column: str) -> tuple[Estimate, Estimate]:
        rubric = (CorrectionLevel.RUBRIC, sample("rubric"))
        team_estimate = scorecard_estimate(sample("team"), [rubric])
        agent_estimate = scorecard_estimate(sample("agent"), [(CorrectionLevel.TEAM, sample("team")), rubric])
        return agent_estimate, team_estimate

    coaching = _coaching(period, agent_id)
    criteria = []
    for column in columns:
        agent, team_estimate = estimates(lambda scope: whole[(scope, column.key)], column.key)
        points = [
            WeekPoint(week, *estimates(lambda scope, week=week: weekly[(scope, column.key, week)], column.key))
            for week in weeks
        ]
        criteria.append(
            AgentCriterion(
                column=column,
                agent=agent,
                team=team_estimate,
                weeks=points,
                coaching=coaching[(column.key, True)],
                unverified=coaching[(column.key, False)],
            )
        )
    return AgentCard(rubric=filters.rubric, agent_id=agent_id, agent_name=found["name"], team=team, criteria=criteria)


def _coaching(filters: ReportFilters, agent_id: str) -> defaultdict[tuple[str, bool], list[CoachingCall]]:
    """Per (criterion key, evidence verified): the agent's lowest current scores, in one query."""
    rank = Window(
        RowNumber(),
        partition_by=[F("criterion_id"), F("evidence_verified")],
        order_by=[F("value").asc(), F("run__recording__occurred_at").desc(nulls_last=True), F("pk").desc()],
    )
    scores = (
        _current_scores(filters, Q(value__isnull=False), Q(run__recording__agent_id=agent_id))
        .annotate(rank=rank)
        .filter(rank__lte=COACHING_CALLS)
        .select_related("criterion", "run__recording")
        .order_by("criterion__order", "criterion_id", "rank")
    )
    scores = list(scores)
    humans = human_references(recording_ids={score.run.recording_id for score in scores})
    calls: defaultdict[tuple[str, bool], list[CoachingCall]] = defaultdict(list)
    for score in scores:
        recording = score.run.recording
        calls[(score.criterion.key, score.evidence_verified)].append(
            CoachingCall(
                recording_id=recording.pk,
                external_id=recording.external_id,
                occurred_at=recording.occurred_at,
                value=score.value,
                evidence=score.evidence,
                verification_status=score.verification_status,
                rationale=score.rationale,
                human=humans.get((recording.pk, score.criterion.key)),
            )
        )
    return calls
