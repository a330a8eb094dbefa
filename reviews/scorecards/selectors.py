"""Reads for the scorecards: per team and agent, per criterion and overall, the
judge's mean over every judged call corrected by the random audit
(`reviews.reports.stats.scorecard_estimate`).

Constant cost in the number of agents: two GROUP BY queries (the judge's
values, and the audited pairs) return additive moments per group, per
criterion and overall, and teams and the rubric are sums of them. They read
one row per call, the values stored with it (`Recording.current_values`, set
by the judging, and the review's `human_values`), not the scores: 100,000
calls of 12 criteria are 100,000 rows, not 1.2 million (bench/scorecards).

Which calls count
    Judged: each recording's current run (its latest successful judgment),
    with a value (a criterion the judge found not applicable has none).
    Audited: those of them in the random-audit group whose latest review is
    final and judged that current run; the human value is the human reference's
    rule (`review_values`, stored on the review), a supervisor's N/A is no value. Flagged calls are
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
from datetime import date, datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    Case,
    Count,
    Expression,
    F,
    Func,
    IntegerField,
    Max,
    Q,
    QuerySet,
    When,
    Window,
)
from django.db.models.functions import RowNumber, TruncWeek
from django.utils.translation import gettext_lazy as _

from qa.models import Recording, Score
from qa.routing import ReviewGroup, in_review_group
from reviews.models import Review
from reviews.reports.selectors import ReportFilters, report_run_q
from reviews.reports.stats import CellSample, CorrectionLevel, Estimate, Moments, scorecard_estimate
from reviews.selectors import FINAL_DECISIONS, HumanReference, day_start, human_references, latest_reviews
from rubrics.models import Criterion, Rubric

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


def _judged(filters: ReportFilters, prefix: str = "") -> Q:
    """The rubric's judged calls in the period, any team and agent, reached through `prefix`."""
    judged = Q(**{f"{prefix}rubric": filters.rubric, f"{prefix}current_run__isnull": False})
    if filters.date_from:
        judged &= Q(**{f"{prefix}occurred_at__gte": day_start(filters.date_from)})
    if filters.date_to:
        judged &= Q(**{f"{prefix}occurred_at__lt": day_start(filters.date_to + timedelta(days=1))})
    return judged


def _judged_recordings(filters: ReportFilters) -> QuerySet[Recording]:
    """The judged calls. One table, so PostgreSQL estimates its rows well (a join on
    run.recording.current_run = run it takes for a handful)."""
    return Recording.objects.filter(_judged(filters)).order_by()


def _current_scores(filters: ReportFilters, *conditions: Q) -> QuerySet[Score]:
    """Scores of the recordings' current runs. "Current" as a semi-join on the current_run ids, since a
    join condition (run.recording.current_run = run) makes PostgreSQL expect a handful of rows and
    choose nested loops over a hundred thousand."""
    current = _judged_recordings(filters).values("current_run_id")
    return Score.objects.filter(report_run_q(filters, "run__"), *conditions, run__in=current)


class StoredValue(Func):
    """The integer at `key` in a JSON object column of values per criterion key (NULL where absent or null).
    Not KeyTextTransform: on PostgreSQL it reads a key of digits, which a criterion's slug may be, as an
    array index."""

    output_field = IntegerField()

    def __init__(self, column: str, key: str) -> None:
        self.key = key
        super().__init__(F(column))

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, tuple]:
        column, params = compiler.compile(self.source_expressions[0])
        return f"JSON_EXTRACT({column}, %s)", (*params, f'$."{self.key}"')

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, tuple]:
        column, params = compiler.compile(self.source_expressions[0])
        return f"(({column}) ->> %s)::integer", (*params, self.key)


def _audited_reviews(filters: ReportFilters) -> QuerySet[Review]:
    """The final reviews that are the latest of a judged call of the random-audit group and judged its
    current run. From the review, so that "the latest" is a NOT EXISTS on the review itself, which PostgreSQL
    runs as one anti-join (from the recording it checked each call's reviews one by one, three times dearer)."""
    return (
        latest_reviews(decisions=FINAL_DECISIONS)
        .filter(
            _judged(filters, "recording__"),
            in_review_group(ReviewGroup.RANDOM_AUDIT, "recording__review_reasons"),
            run=F("recording__current_run"),
        )
        .order_by()
    )


def _grouped(rows: QuerySet, groups: dict[str, Expression], *fields: str, **columns: Expression) -> QuerySet:
    """values() of the group keys, the model's `fields` and `columns`; a key that is the model's own field is
    named as such."""
    own = [name for name, expression in groups.items() if isinstance(expression, F) and expression.name == name]
    return rows.values(*own, *fields, **{name: groups[name] for name in groups if name not in own}, **columns)


def _real(number: float) -> str:
    return f"CAST({float(number)!r} AS DOUBLE PRECISION)"


def _overall(criteria: list[Criterion], columns: list[str]) -> str:
    """SQL for a call's overall from its per-criterion columns: the weighted mean share (0–100) of each
    value on its criterion's scale, over the criteria with a value. Constants in double precision: with
    PostgreSQL's numeric (what a literal 1.0 is), the query cost half as much again."""
    shares, weights = [], []
    for criterion, column in zip(criteria, columns, strict=True):
        per_point = 100.0 * criterion.weight / (criterion.scale_max - criterion.scale_min)
        shares.append(f"COALESCE(({column} - {criterion.scale_min}) * {_real(per_point)}, {_real(0)})")
        weights.append(f"CASE WHEN {column} IS NULL THEN {_real(0)} ELSE {_real(criterion.weight)} END")
    return f"({' + '.join(shares)}) / NULLIF({' + '.join(weights)}, {_real(0)})"


def _rows(sql: str, params: Iterable[Any]) -> list[dict[str, Any]]:
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # A hundred sums over a hundred thousand rows have a cost that switches JIT compilation on,
            # and compiling them takes longer than running them; the groups (and the audited calls, which
            # PostgreSQL may sort to group) stay in memory (bench/scorecards/README.md).
            cursor.execute("SET LOCAL jit = off")
            cursor.execute("SET LOCAL work_mem = '64MB'")
        cursor.execute(sql, list(params))
        names = [column[0] for column in cursor.description]  # DB-API: the name first, on every backend
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _fenced(sql: str) -> str:
    """`sql` as a subquery the planner runs as written, once per row: OFFSET 0 keeps PostgreSQL and SQLite from
    merging it into the query around it, which would compute each of its columns once per sum that uses it.
    (A MATERIALIZED CTE does the same but stores every row first: twice the time, bench/scorecards.)"""
    no_limit = connection.ops.no_limit_value()  # SQLite takes an OFFSET only after a LIMIT
    limit = "" if no_limit is None else f"LIMIT {no_limit} "
    return f"({sql} {limit}OFFSET 0)"


def _per_group(calls: QuerySet, keys: list[str], overalls: dict[str, str], sums: dict[str, str]) -> list[dict]:
    """Sum per-call figures per group. `calls` has one row per call, with the group keys and a value
    column per criterion; `overalls` are SQL over those columns, `sums` SQL over both, all plain
    identifiers. Each step is a fenced subquery, so a value read from JSON or an overall is computed once
    per call, not once per sum that uses it."""
    quote = connection.ops.quote_name
    calls_sql, params = calls.query.get_compiler(using=calls.db).as_sql()
    grouped = ", ".join(quote(key) for key in keys)
    with_overalls = ", ".join(f"{expression} AS {quote(name)}" for name, expression in overalls.items())
    selected = ", ".join(f"{expression} AS {quote(name)}" for name, expression in sums.items())
    figures = _fenced(f"SELECT calls.*, {with_overalls} FROM {_fenced(calls_sql)} calls")
    return _rows(f"SELECT {grouped}, {selected} FROM {figures} figures GROUP BY {grouped}", params)


def _moment_sums(name: str, value: str) -> dict[str, str]:
    return {
        f"{name}_n": f"COUNT({value})",
        f"{name}_total": f"SUM({value})",
        f"{name}_squares": f"SUM(({value}) * ({value}))",
    }


def _moments(row: dict[str, Any], name: str) -> Moments:
    return Moments(row[f"{name}_n"] or 0, float(row[f"{name}_total"] or 0), float(row[f"{name}_squares"] or 0))


@dataclass(frozen=True)
class Samples:
    cells: dict[tuple[tuple, str], CellSample]  # by group and column key
    agent_names: dict[str, str]  # by agent id, when the groups are agents: read in the same pass


def _samples(filters: ReportFilters, grouping: Grouping) -> Samples:
    """Each group's sample per column key, in two queries whatever the number of groups.

    Each query reads one row per call (the values stored with it: `Recording.current_values` and the
    review's `human_values`), computes the call's overall and sums per group: the moments of every
    column at once.
    """
    criteria = list(filters.rubric.criteria.all())
    columns = {f"k{index}": criterion.key for index, criterion in enumerate(criteria)}
    names = [*columns, "overall"]
    keys = list(grouping(""))
    samples: dict[tuple[tuple, str], CellSample] = {}

    def column_key(name: str) -> str:
        return columns.get(name, OVERALL)

    def stored(side: str, column: str) -> dict[str, Expression]:
        return {f"{side}_{name}": StoredValue(column, key) for name, key in columns.items()}

    def overall(side: str) -> dict[str, str]:
        return {f"{side}_overall": _overall(criteria, [f"{side}_{name}" for name in columns])}

    named = "agent_id" in keys
    judged = _grouped(
        _judged_recordings(filters),
        grouping(""),
        *(["agent_name"] if named else []),
        **stored("judge", "current_values"),
    )
    sums = {"agent_name": "MAX(agent_name)"} if named else {}
    for name in names:
        sums |= _moment_sums(f"judged_{name}", f"judge_{name}")
    agent_names = {}
    for row in _per_group(judged, keys, overall("judge"), sums):
        group = tuple(row[key] for key in keys)
        for name in names:
            samples[(group, column_key(name))] = CellSample(judged=_moments(row, f"judged_{name}"))
        if named:
            agent_names[row["agent_id"]] = row["agent_name"]

    audited = _grouped(
        _audited_reviews(filters),
        grouping("recording__"),
        **stored("judge", "recording__current_values"),
        **stored("human", "human_values"),
    )
    sums = {}
    for name in names:
        human, judge = f"human_{name}", f"judge_{name}"
        sums |= _moment_sums(f"human_{name}", human)
        sums |= _moment_sums(f"difference_{name}", f"{human} - {judge}")
        sums |= _moment_sums(f"paired_{name}", f"{human} + 0 * {judge}")  # null unless the judge has a value
    for row in _per_group(audited, keys, overall("judge") | overall("human"), sums):
        group = tuple(row[key] for key in keys)
        for name in names:
            cell = (group, column_key(name))  # an audited call is a judged call of the same group
            samples[cell] = CellSample(
                judged=samples[cell].judged,
                human=_moments(row, f"human_{name}"),
                difference=_moments(row, f"difference_{name}"),
                paired_human=_moments(row, f"paired_{name}"),
            )
    return Samples(samples, agent_names)


def _sort_key(cell: Estimate) -> tuple:
    """Highest lower bound first; cells without an interval after every cell with one."""
    return (cell.lower is None, -(cell.lower if cell.lower is not None else cell.estimate or 0.0))


def scorecard(filters: ReportFilters, *, sort: str = OVERALL) -> Scorecard:
    """Every team, then its agents, each ordered by the lower bound of the `sort` column."""
    columns = columns_of(filters.rubric)
    samples = _samples(filters, _by_agent)
    names = samples.agent_names
    agents: defaultdict[str, dict[str, dict[str, CellSample]]] = defaultdict(lambda: defaultdict(dict))
    teams: defaultdict[str, dict[str, CellSample]] = defaultdict(lambda: defaultdict(CellSample))
    rubric: defaultdict[str, CellSample] = defaultdict(CellSample)
    for ((team, agent_id), column), sample in samples.cells.items():
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


def _day(week: datetime | str) -> date:
    """A week's start from a raw row: a datetime on PostgreSQL, text on SQLite (no converter runs)."""
    return week.date() if isinstance(week, datetime) else date.fromisoformat(week[:10])


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
    for ((week, is_agent, in_team), column), sample in samples.cells.items():
        scopes = ["rubric", *(["agent"] if is_agent else []), *(["team"] if in_team else [])]
        for scope in scopes:
            whole[(scope, column)] += sample
            if week is not None:
                weekly[(scope, column, _day(week))] += sample
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
