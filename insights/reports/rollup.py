"""The counts the dashboard and the reports add up per criterion, read two ways: from the calls
(`call_tallies`), or from their rollups per agent-week and agent-day (`rollup_tallies`: `CriterionWeek`,
`CriterionPairWeek`, `CriterionDay`, `CriterionPairDay`), which `criterion_weeks_write` keeps from the calls
with `call_tallies`. A period sums the rollup's whole weeks and the days at either end
(`reviews.periods.period_split`, read as `period_q`), as the scorecards do.

The deviation report's cube (`deviation_cube`) is rolled up the same way, by the same refresh
(`DeviationWeek`, `DeviationDay`; read by `rollup_deviation`).

Every count adds up over calls, so any set of agent-weeks or agent-days is the sum of its rows:
    the evidence tally: the judge's scores of every successful run, and the unverified among them;
    the auto-fail: the current runs' values that exist at or below a critical criterion's fail value, and
    the calls with one (of the judged calls);
    the human ceiling: pairs (judge value, human reference) by the reference's source, and the supervisors'
    pooled pairs with the number of calls they come from (`insights.reports.ceiling`);
    the deviation cube: the reviewed scores of the calls whose latest review is final, per cell (a call's
    cells are the same wherever it is summed: its reasons are a key, its groups follow from them).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.db import connection
from django.db.models import Count, Expression, F, Q, QuerySet, Sum
from django.db.models.functions import TruncDate

from core.sql import queryset_sql
from qa.models import JUDGE_VALUE_EXISTS, JudgeRun, Recording, Score
from insights.models import (
    CriterionDay, CriterionPairDay, CriterionPairWeek, CriterionWeek, DeviationDay, DeviationWeek,
)  # fmt: skip
from insights.reports.ceiling import AgentDay, human_pairs_by_agent, judge_pairs_by_agent
from qa.filters import occurred_q
from reviews.periods import PeriodSplit, day_start
from reviews.reference import FINAL_DECISIONS, HUMAN_VALUE, IS_REJECTED, latest_reviews, with_review_entry
from rubrics.models import Criterion, Rubric

CALLS = ""  # the criterion key of the calls' own counts
IDS_AS_LIST = 20_000  # PostgreSQL takes at most 65,535 parameters a statement


@dataclass
class CriterionTally:
    calls: int = 0
    scores: int = 0
    unverified: int = 0
    failed: int = 0
    human_units: int = 0
    pairs: Counter = field(default_factory=Counter)  # (source, first, second) -> n

    def add(self, other: CriterionTally) -> None:
        self.calls += other.calls
        self.scores += other.scores
        self.unverified += other.unverified
        self.failed += other.failed
        self.human_units += other.human_units
        self.pairs.update(other.pairs)

    def judge_pairs(self) -> Counter:
        return Counter({pair: n for pair, n in self.pairs.items() if pair[0] != "human"})

    def human_pairs(self) -> Counter:
        return Counter({(first, second): n for (source, first, second), n in self.pairs.items() if source == "human"})


Tallies = defaultdict[str, CriterionTally]  # by criterion key; CALLS: the calls'


def tallies() -> Tallies:
    return defaultdict(CriterionTally)


def as_date(value: date | str) -> date:
    """A day from a raw row: a date on PostgreSQL, its text on SQLite (no converter runs)."""
    return date.fromisoformat(value[:10]) if isinstance(value, str) else value


def call_ids(calls: QuerySet[Recording]) -> list[int] | QuerySet:
    """The calls' ids as a list, or as a subquery past a statement's parameters (IDS_AS_LIST). As a subquery,
    PostgreSQL expects one call and plans the human references from every review of the rubric (0.3 s for a
    day's 381 calls, 3 ms as a list; bench/dashboard/README.md)."""
    ids = list(calls.order_by().values_list("pk", flat=True)[: IDS_AS_LIST + 1])
    return ids if len(ids) <= IDS_AS_LIST else calls.order_by().values("pk")


def call_tallies(rubric: Rubric, calls: QuerySet[Recording]) -> defaultdict[AgentDay, Tallies]:
    """The counts of `calls` (the rubric's judged recordings) per team, agent and day: five GROUP BY queries
    and the supervisors' ratings of the calls reviewed more than once."""
    return ids_tallies(rubric, call_ids(calls))


def ids_tallies(rubric: Rubric, recording_ids: list[int] | QuerySet) -> defaultdict[AgentDay, Tallies]:
    """`call_tallies` of the calls `call_ids` gave."""
    found: defaultdict[AgentDay, Tallies] = defaultdict(tallies)
    if isinstance(recording_ids, list) and not recording_ids:
        return found
    calls = Recording.objects.filter(pk__in=recording_ids).order_by()
    for row in calls.values("team", "agent_id", day=TruncDate("occurred_at")).annotate(n=Count("pk")):
        found[(row["team"], row["agent_id"], row["day"])][CALLS].calls = row["n"]
    agent = {
        "team": F("run__recording__team"),
        "agent_id": F("run__recording__agent_id"),
        "day": TruncDate("run__recording__occurred_at"),
    }
    evidence = (
        Score.objects.filter(run__recording__in=calls, run__rubric=rubric, run__status=JudgeRun.Status.SUCCEEDED)
        .values(**agent, key=F("criterion__key"))
        .annotate(n=Count("pk"), unverified=Count("pk", filter=Q(evidence_verified=False)))
        .order_by()
    )
    for row in evidence:
        tally = found[(row["team"], row["agent_id"], row["day"])][row["key"]]
        tally.scores, tally.unverified = row["n"], row["unverified"]
    failing = Score.objects.filter(
        JUDGE_VALUE_EXISTS,
        run__in=calls.values("current_run_id"),
        criterion__critical=True,
        value__lte=F("criterion__fail_at"),
    ).order_by()
    for row in failing.values(**agent, key=F("criterion__key")).annotate(n=Count("pk")):
        found[(row["team"], row["agent_id"], row["day"])][row["key"]].failed = row["n"]
    for row in failing.values(**agent).annotate(n=Count("run_id", distinct=True)):
        found[(row["team"], row["agent_id"], row["day"])][CALLS].failed = row["n"]
    for place, by_key in judge_pairs_by_agent(recording_ids).items():
        for key, pairs in by_key.items():
            found[place][key].pairs.update(pairs)
    for place, by_key in human_pairs_by_agent(rubric, recording_ids).items():
        for key, (pairs, units) in by_key.items():
            found[place][key].pairs.update({("human", a, b): n for (a, b), n in pairs.items()})
            found[place][key].human_units += units
    return found


def _replace(counts: type, pairs: type, place: dict, found: dict[tuple[str, str], Tallies]) -> None:
    """Write `found` (Tallies per team and agent) as rows of `counts` and `pairs` at `place` (a week, a day)."""
    counts.objects.bulk_create(
        counts(
            **place,
            team=team,
            agent_id=agent_id,
            criterion_key=key,
            calls=tally.calls,
            scores=tally.scores,
            unverified=tally.unverified,
            failed=tally.failed,
            human_units=tally.human_units,
        )
        for (team, agent_id), by_key in found.items()
        for key, tally in by_key.items()
    )
    pairs.objects.bulk_create(
        pairs(**place, team=team, agent_id=agent_id, criterion_key=key, source=source, first=first, second=second, n=n)
        for (team, agent_id), by_key in found.items()
        for key, tally in by_key.items()
        for (source, first, second), n in tally.pairs.items()
    )


def reviewed_scores(where: Q, *, reviews: Q | None = None) -> QuerySet[Score]:
    """The scores `where` selects of the runs judged by each recording's latest review, when that review is
    final (`reviews`: a condition that narrows the reviews to look among, to the same recordings).

    One filter() call, so the join to the review is made once and reused by `with_review_entry`'s."""
    final_reviews = latest_reviews().filter(decision__in=FINAL_DECISIONS)
    if reviews is not None:
        final_reviews = final_reviews.filter(reviews)
    return Score.objects.filter(where, run__reviews__in=final_reviews)


def deviation_cube(scores: QuerySet[Score], **also: Expression) -> QuerySet:
    """The deviation report's cube: `scores` (of `reviewed_scores`) counted by criterion, the judge's value
    and whether its quote verified, the human value, whether it is rejected, whether the review's entry says
    "does not apply" (NULL without an entry), the call's review reasons, and `also` (the rollup's team, agent
    and day). Rows of those and `count`."""
    return (
        with_review_entry(scores)
        .values(
            "criterion_id",
            "value",
            "evidence_verified",
            human=HUMAN_VALUE,
            rejected=IS_REJECTED,
            human_not_applicable=F("cr_not_applicable"),
            # The call's reasons as they are, a few dozen distinct lists, rather than its groups: testing each
            # group's reasons on every score cost more than grouping by one more column.
            reasons=F("run__recording__review_reasons"),
            **also,
        )
        .annotate(count=Count("pk"))
        .order_by()
    )


CUBE_FIELDS = ("criterion_key", "value", "evidence_verified", "human", "rejected", "human_not_applicable", "reasons")


def deviation_write(*, rubric: Rubric, calls: list[int] | QuerySet, week: date | None, days: set[date]) -> None:
    """Write the deviation cube of `calls` (ids of the rubric's judged calls of `week`) as its `DeviationWeek`
    rows and the `DeviationDay` rows of `days`. Two INSERT … SELECT over `deviation_cube`, so no row passes
    through Python: through the ORM, the ten thousand rows of a day's changed calls cost the refresh about
    a CPU-second more (bench/reports/README.md)."""
    scores = reviewed_scores(Q(run__recording__in=calls, run__rubric=rubric), reviews=Q(recording__in=calls))
    agent = {"team": F("run__recording__team"), "agent_id": F("run__recording__agent_id")}
    _cube_insert(DeviationWeek, deviation_cube(scores, **agent), rubric=rubric, place=("%s", [week]))
    if days:
        in_days = Q()
        for day in days:
            in_days |= occurred_q(day_start(day), day_start(day + timedelta(days=1)), prefix="run__recording__")
        by_day = deviation_cube(scores.filter(in_days), **agent, day=TruncDate("run__recording__occurred_at"))
        _cube_insert(DeviationDay, by_day, rubric=rubric, place=(f"cube.{connection.ops.quote_name('day')}", []))


def _cube_insert(model: type, cube: QuerySet, *, rubric: Rubric, place: tuple[str, list]) -> None:
    """Insert the rows of `cube` (a `deviation_cube` by team and agent) as rows of `model`, with `place`
    (SQL and its parameters) as their week or day."""
    q = connection.ops.quote_name
    cube_sql, cube_params = queryset_sql(cube)
    columns = ", ".join(q(name) for name in ("rubric_id", "team", "agent_id", *CUBE_FIELDS, "n"))
    place_column = q("week" if model is DeviationWeek else "day")
    sql = (
        f"INSERT INTO {q(model._meta.db_table)} ({columns}, {place_column})"
        f" SELECT %s, cube.{q('team')}, cube.{q('agent_id')}, c.{q('key')}, cube.{q('value')},"
        f" cube.{q('evidence_verified')}, cube.{q('human')}, cube.{q('rejected')},"
        # "Does not apply" is NULL without an entry for the criterion: false, as the report reads it.
        f" COALESCE(cube.{q('human_not_applicable')}, %s), cube.{q('reasons')}, cube.{q('count')}, {place[0]}"
        f" FROM ({cube_sql}) cube JOIN {q(Criterion._meta.db_table)} c ON c.{q('id')} = cube.{q('criterion_id')}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [rubric.pk, False, *place[1], *cube_params])


def criterion_weeks_delete(*, rubric: Rubric, week: date | None, agents: set[str], days: set[date]) -> None:
    """Delete the rollup rows of `agents` in `week` and in `days` (of that week), before `criterion_weeks_write`
    writes them again. The caller holds the rubric's refresh lock (insights.scorecards.services)."""
    CriterionWeek.objects.filter(rubric=rubric, week=week, agent_id__in=agents).delete()
    CriterionPairWeek.objects.filter(rubric=rubric, week=week, agent_id__in=agents).delete()
    CriterionDay.objects.filter(rubric=rubric, day__in=days, agent_id__in=agents).delete()
    CriterionPairDay.objects.filter(rubric=rubric, day__in=days, agent_id__in=agents).delete()
    DeviationWeek.objects.filter(rubric=rubric, week=week, agent_id__in=agents).delete()
    DeviationDay.objects.filter(rubric=rubric, day__in=days, agent_id__in=agents).delete()


def criterion_weeks_write(*, rubric: Rubric, week: date | None, days: set[date], calls: QuerySet[Recording]) -> None:
    """Write the rollup rows of `calls` (judged calls of `week`) for the week and for `days` of it: a week's
    rows are the sums of its days'. After `criterion_weeks_delete`, under the rubric's refresh lock."""
    found_days: defaultdict[date, dict[tuple[str, str], Tallies]] = defaultdict(dict)
    weekly: defaultdict[tuple[str, str], Tallies] = defaultdict(tallies)
    recording_ids = call_ids(calls)
    if isinstance(recording_ids, list) and not recording_ids:
        return
    for (team, agent_id, day), by_key in ids_tallies(rubric, recording_ids).items():
        for key, tally in by_key.items():
            weekly[(team, agent_id)][key].add(tally)
        if day is not None and as_date(day) in days:
            found_days[as_date(day)][(team, agent_id)] = by_key
    _replace(CriterionWeek, CriterionPairWeek, {"rubric": rubric, "week": week}, weekly)
    for day, found in found_days.items():
        _replace(CriterionDay, CriterionPairDay, {"rubric": rubric, "day": day}, found)
    deviation_write(rubric=rubric, calls=recording_ids, week=week, days=days)


def period_q(rubric: Rubric, split: PeriodSplit) -> tuple[Q | None, Q | None]:
    """The rubric's period `split` as conditions on a weekly rollup's rows (its whole weeks) and on a daily
    rollup's (its edges' days); None where the period has none."""
    weeks = days = None
    if split.whole_weeks:
        weeks = Q(rubric=rubric)
        if split.first_week:
            weeks &= Q(week__gte=split.first_week)
        if split.last_week:
            weeks &= Q(week__lte=split.last_week)  # either bound leaves out the calls with no time
    if split.edges:
        days = Q()
        for first, last in split.edges:
            days |= Q(day__gte=first, day__lte=last)
        days &= Q(rubric=rubric)
    return weeks, days


def rollup_tallies(rubric: Rubric, *, split: PeriodSplit, where: Q) -> Tallies:
    """The rollups' counts of the rubric's period `split`: its whole weeks' rows and its edges' days' rows,
    of those `where` selects (a team, an agent, a scope). Two queries per kind of row."""
    found = tallies()
    weeks, days = period_q(rubric, split)
    if weeks is not None:
        _add_rows(found, CriterionWeek, CriterionPairWeek, weeks & where)
    if days is not None:
        _add_rows(found, CriterionDay, CriterionPairDay, days & where)
    return found


def rollup_deviation(rubric: Rubric, *, split: PeriodSplit, where: Q) -> list[dict]:
    """The deviation cube of the rubric's period `split` from its rollup, rows as `deviation_cube`'s but keyed
    by `criterion_key`: its whole weeks' rows and its edges' days' rows, of those `where` selects. One query
    per kind of row; a cell may come once from each."""
    rows: list[dict] = []
    for model, chosen in zip((DeviationWeek, DeviationDay), period_q(rubric, split), strict=True):
        if chosen is not None:
            rows += model.objects.filter(chosen & where).values(*CUBE_FIELDS).annotate(count=Sum("n")).order_by()
    return rows


def _add_rows(found: Tallies, counts_model: type, pairs_model: type, rows: Q) -> None:
    """The counts and pairs of `rows` of a rollup's two tables, added to `found`: two queries."""
    counts = (
        counts_model.objects.filter(rows)
        .values("criterion_key")
        .annotate(
            calls=Sum("calls"),
            scores=Sum("scores"),
            unverified=Sum("unverified"),
            failed=Sum("failed"),
            human_units=Sum("human_units"),
        )
        .order_by()
    )
    for row in counts:
        tally = found[row.pop("criterion_key")]
        for name, value in row.items():
            setattr(tally, name, getattr(tally, name) + (value or 0))
    pairs = (
        pairs_model.objects.filter(rows)
        .values("criterion_key", "source", "first", "second")
        .annotate(n=Sum("n"))
        .order_by()
    )
    for row in pairs:
        found[row["criterion_key"]].pairs[(row["source"], row["first"], row["second"])] += row["n"]
