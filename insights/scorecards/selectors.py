"""Reads for the scorecards: per team and agent, per criterion and overall, the
mean human value estimated from the human values known and the judge's verified
values corrected by the random audit, by stratum (`reviews.figures.stats.scorecard_estimate`).

Constant cost in the number of agents, and nearly in the number of calls: the
moments of a period's whole weeks come from the weekly rollup, those of the
days at either end from the daily one (`insights.scorecards.moments`, which also
says which calls count and what the overall is). While Celery beat refreshes
the rollups every minute a read takes them as they are, and the page says as of
when (`insights.scorecards.freshness`); without a beat every read first brings
them up to date with the calls (`scorecard_weeks_refresh`), or reads the calls
themselves while too many are marked (`REFRESH_IN_READ_MAX`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import BooleanField, Case, Count, F, Max, Q, QuerySet, Value, When, Window
from django.db.models.functions import RowNumber
from django.utils.translation import gettext_lazy as _

from core.memory import collector_paused
from qa.models import JUDGE_VALUE_EXISTS, Recording, Score
from reviews.filters import ReportFilters, place_q
from insights.reports.selectors import report_scores_q, rollups_for
from reviews.figures.stats import CellSample, CorrectionLevel, Estimate, scorecard_estimate
from reviews.periods import period_split
from insights.scorecards.moments import (
    Calls,
    OVERALL,
    Grouping,
    Samples,
    by_agent,
    by_week_around,
    call_samples,
    judged_calls,
    rollup_samples,
)
from insights.scorecards.services import rollups_readable
from reviews.reference import HumanReference, human_references
from reviews.selectors import blind_recordings_for
from rubrics.models import Rubric

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
    totals: list[Estimate]  # the calls the rows cover: what the correction does, column by column
    totals_whole: bool = True  # False: the reader sees only some teams, and the totals are of those teams' calls


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
    coaching: list[CoachingCall]  # lowest scores whose value exists (verified): the evidence to coach with
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
    return [*criteria, Column(OVERALL, str(_("Quality score")), 0, 100)]


def _calls(filters: ReportFilters) -> QuerySet[Recording]:
    return Recording.objects.filter(judged_calls(filters.rubric, filters.date_from, filters.date_to)("")).order_by()


def _current_scores(filters: ReportFilters, *conditions: Q) -> QuerySet[Score]:
    """Scores of the recordings' current runs. "Current" as a semi-join on the current_run ids, since a
    join condition (run.recording.current_run = run) makes PostgreSQL expect a handful of rows and
    choose nested loops over a hundred thousand."""
    current = _calls(filters).values("current_run_id")
    return Score.objects.filter(report_scores_q(filters), *conditions, run__in=current)


@collector_paused()  # thousands of small sums: core.memory
def period_samples(filters: ReportFilters, grouping: Grouping, *, narrowed: bool = False) -> Samples:
    """Each group's sample per column key in the period: its whole weeks and the days at either end from the
    rollups, brought up to date first. Whatever the number of groups, three queries, plus one per week the
    refresh reads again (bench/scorecards/README.md).
    `narrowed`: only the calls of the filters' team and agent and in the reader's scope (the dashboard's
    trend); else every call of the rubric, which a scorecard needs for its corrections."""
    rubric = filters.rubric
    place = place_q(filters) if narrowed else (lambda prefix: Q())

    def calls(since: date | None, until: date | None) -> Calls:
        judged = judged_calls(rubric, since, until)
        return lambda prefix: judged(prefix) & place(prefix)

    if not (rollups_for(filters) if narrowed else rollups_readable(rubric=rubric)):
        return call_samples(rubric, calls(filters.date_from, filters.date_to), grouping)
    split = period_split(filters.date_from, filters.date_to)
    # The rollup's rows carry their calls' team and agent; their workspace is their rubric's.
    rows = place_q(filters, workspace="rubric__workspace")("") if narrowed else Q()
    return rollup_samples(rubric, split, grouping, rows)


def _sort_key(cell: Estimate) -> tuple:
    """Highest lower bound first; cells without an interval after every cell with one."""
    return (cell.lower is None, -(cell.lower if cell.lower is not None else cell.estimate or 0.0))


@collector_paused()  # thousands of small sums: core.memory
def scorecard(filters: ReportFilters, *, sort: str = OVERALL) -> Scorecard:
    """Every team, then its agents, each ordered by the lower bound of the `sort` column."""
    columns = columns_of(filters.rubric)
    # A source-bound key's scorecard is of its calls alone, pools included: the rubric's other calls are
    # other systems'. Everyone else's rows are cut by team below, over the whole rubric's pools.
    by_source = filters.scope is not None and filters.scope.by_source
    samples = period_samples(filters, by_agent, narrowed=by_source)
    names = samples.agent_names
    agents: defaultdict[str, dict[str, dict[str, CellSample]]] = defaultdict(lambda: defaultdict(dict))
    teams: defaultdict[str, dict[str, CellSample]] = defaultdict(lambda: defaultdict(CellSample))
    rubric: defaultdict[str, CellSample] = defaultdict(CellSample)
    for ((team, agent_id), column), sample in samples.cells.items():
        agents[team][agent_id][column] = sample
        teams[team][column] += sample
        rubric[column] += sample
    every_team = len(teams)
    if filters.scope is not None and not by_source:  # a supervisor's own teams' rows; the pools stay the rubric's
        workspace_id = filters.rubric.workspace_id
        agents = {team: cells for team, cells in agents.items() if filters.scope.sees_team(workspace_id, team)}
        teams = defaultdict(lambda: defaultdict(CellSample), {team: teams[team] for team in agents})

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
    # The totals are of the calls the rows cover. A team-limited supervisor reads no figure of another team's
    # calls, so theirs are their teams' calls only, corrected (where their own audit is too small) by the
    # rubric's audit, as each of their rows is: the pools are how the estimate is made, not a figure shown.
    # A reader of every team gets the whole rubric's, which has no pool above it.
    whole = len(teams) == every_team
    if whole:
        totals = estimates(rubric, lambda column: [])
    else:
        seen: defaultdict[str, CellSample] = defaultdict(CellSample)
        for cells in teams.values():
            for column, sample in cells.items():
                seen[column] += sample
        totals = estimates(seen, rubric_pool)
    return Scorecard(rubric=filters.rubric, columns=columns, rows=rows, totals=totals, totals_whole=whole)


def _day(week: date | datetime | str) -> date:
    """A week's start: a date from the rollup; from the calls' raw rows, a datetime on PostgreSQL and text on
    SQLite (no converter runs)."""
    if isinstance(week, datetime):
        return week.date()
    return week if isinstance(week, date) else date.fromisoformat(week[:10])


@collector_paused()  # thousands of small sums: core.memory
def agent_card(filters: ReportFilters, agent_id: str, *, viewer: AbstractBaseUser | None = None) -> AgentCard | None:
    """The agent's estimates against their team's, week by week, and what to coach; None without calls.

    The team compared with is the team of most of the agent's calls in the period. With `viewer`, the
    calls to coach with leave out those the viewer must see blind (reviews.selectors.blind_recordings_for).
    """
    found = (
        _calls(filters)
        .filter(filters.scope.recordings_q() if filters.scope is not None else Q())
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
    period = ReportFilters(
        rubric=filters.rubric, date_from=filters.date_from, date_to=filters.date_to, scope=filters.scope
    )
    samples = period_samples(period, by_week_around(agent_id))
    workspace_id = filters.rubric.workspace_id

    def counts_for_agent(call_team: str) -> bool:
        # The agent's calls in a team the reader does not see are no figure of theirs (a team-limited
        # supervisor's); they stay in the rubric's pool, which only corrects.
        return filters.scope is None or filters.scope.contains_calls(workspace_id, call_team, agent_id)

    # Per column: the agent's, the team's and the rubric's samples, each overall and per week.
    whole: defaultdict[tuple[str, str], CellSample] = defaultdict(CellSample)
    weekly: defaultdict[tuple[str, str, date], CellSample] = defaultdict(CellSample)
    for ((week, is_agent, call_team), column), sample in samples.cells.items():
        is_agent = is_agent and counts_for_agent(call_team)
        scopes = ["rubric", *(["agent"] if is_agent else []), *(["team"] if call_team == team else [])]
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

    coaching = _coaching(period, agent_id, viewer=viewer)
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


def _coaching(
    filters: ReportFilters, agent_id: str, *, viewer: AbstractBaseUser | None = None
) -> defaultdict[tuple[str, bool], list[CoachingCall]]:
    """Per (criterion key, whether the judge value exists): the agent's lowest current scores, in one query."""
    exists = Case(When(JUDGE_VALUE_EXISTS, then=Value(True)), default=Value(False), output_field=BooleanField())
    rank = Window(
        RowNumber(),
        partition_by=[F("criterion_id"), F("has_value")],
        order_by=[F("value").asc(), F("run__recording__occurred_at").desc(nulls_last=True), F("pk").desc()],
    )
    scores = (
        _current_scores(
            filters,
            Q(value__isnull=False),
            Q(run__recording__agent_id=agent_id),
            # The agent's blind calls only (the same set here): the viewer's every blind call took a scan of
            # every call (bench/scorecards/README.md).
            *([~Q(run__recording__in=blind_recordings_for(viewer).filter(agent_id=agent_id))] if viewer else []),
        )
        .annotate(has_value=exists)
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
        calls[(score.criterion.key, score.value_exists)].append(
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
