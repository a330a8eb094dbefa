"""The counts the dashboard and the reports add up per criterion, read two ways: from the calls
(`call_tallies`), or from their rollups per agent-week and agent-day (`rollup_tallies`: `CriterionWeek`,
`CriterionPairWeek`, `CriterionDay`, `CriterionPairDay`), which `criterion_weeks_write` keeps from the calls
with `call_tallies`. A period sums the rollup's whole weeks and the days at either end
(`reviews.periods.period_split`), as the scorecards do.

Every count adds up over calls, so any set of agent-weeks or agent-days is the sum of its rows:
    the evidence tally: the judge's scores of every successful run, and the unverified among them;
    the auto-fail: the current runs' values that exist at or below a critical criterion's fail value, and
    the calls with one (of the judged calls);
    the human ceiling: pairs (judge value, human reference) by the reference's source, and the supervisors'
    pooled pairs with the number of calls they come from (`insights.reports.ceiling`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date

from django.db.models import Count, F, Q, QuerySet, Sum
from django.db.models.functions import TruncDate

from qa.models import JUDGE_VALUE_EXISTS, JudgeRun, Recording, Score
from insights.models import CriterionDay, CriterionPairDay, CriterionPairWeek, CriterionWeek
from insights.reports.ceiling import AgentDay, human_pairs_by_agent, judge_pairs_by_agent
from reviews.periods import PeriodSplit
from rubrics.models import Rubric

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


def call_tallies(rubric: Rubric, calls: QuerySet[Recording]) -> defaultdict[AgentDay, Tallies]:
    """The counts of `calls` (the rubric's judged recordings) per team, agent and day: five GROUP BY queries
    and the supervisors' ratings of the calls reviewed more than once."""
    found: defaultdict[AgentDay, Tallies] = defaultdict(tallies)
    calls = calls.order_by()
    # A week's or a day's calls as a list of ids: as a subquery, PostgreSQL expects one call and plans the
    # human references from every review of the rubric (0.3 s for a day's 381 calls, 3 ms as a list;
    # bench/dashboard/README.md). Past a statement's parameters, the subquery.
    ids = list(calls.values_list("pk", flat=True)[: IDS_AS_LIST + 1])
    if not ids:
        return found
    if len(ids) <= IDS_AS_LIST:
        calls = Recording.objects.filter(pk__in=ids).order_by()
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
    recording_ids = ids if len(ids) <= IDS_AS_LIST else calls.values("pk")
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


def criterion_weeks_delete(*, rubric: Rubric, week: date | None, agents: set[str], days: set[date]) -> None:
    """Delete the rollup rows of `agents` in `week` and in `days` (of that week), before `criterion_weeks_write`
    writes them again. The caller holds the rubric's refresh lock (insights.scorecards.services)."""
    CriterionWeek.objects.filter(rubric=rubric, week=week, agent_id__in=agents).delete()
    CriterionPairWeek.objects.filter(rubric=rubric, week=week, agent_id__in=agents).delete()
    CriterionDay.objects.filter(rubric=rubric, day__in=days, agent_id__in=agents).delete()
    CriterionPairDay.objects.filter(rubric=rubric, day__in=days, agent_id__in=agents).delete()


def criterion_weeks_write(*, rubric: Rubric, week: date | None, days: set[date], calls: QuerySet[Recording]) -> None:
    """Write the rollup rows of `calls` (judged calls of `week`) for the week and for `days` of it: a week's
    rows are the sums of its days'. After `criterion_weeks_delete`, under the rubric's refresh lock."""
    found_days: defaultdict[date, dict[tuple[str, str], Tallies]] = defaultdict(dict)
    weekly: defaultdict[tuple[str, str], Tallies] = defaultdict(tallies)
    for (team, agent_id, day), by_key in call_tallies(rubric, calls).items():
        for key, tally in by_key.items():
            weekly[(team, agent_id)][key].add(tally)
        if day is not None and as_date(day) in days:
            found_days[as_date(day)][(team, agent_id)] = by_key
    _replace(CriterionWeek, CriterionPairWeek, {"rubric": rubric, "week": week}, weekly)
    for day, found in found_days.items():
        _replace(CriterionDay, CriterionPairDay, {"rubric": rubric, "day": day}, found)


def rollup_tallies(rubric: Rubric, *, split: PeriodSplit, where: Q) -> Tallies:
    """The rollups' counts of the rubric's period `split`: its whole weeks' rows and its edges' days' rows,
    of those `where` selects (a team, an agent, a scope). Two queries per kind of row."""
    found = tallies()
    if split.whole_weeks:
        weeks = Q(rubric=rubric)
        if split.first_week:
            weeks &= Q(week__gte=split.first_week)
        if split.last_week:
            weeks &= Q(week__lte=split.last_week)  # either bound leaves out the calls with no time
        _add_rows(found, CriterionWeek, CriterionPairWeek, weeks & where)
    if split.edges:
        days = Q()
        for first, last in split.edges:
            days |= Q(day__gte=first, day__lte=last)
        _add_rows(found, CriterionDay, CriterionPairDay, Q(rubric=rubric) & days & where)
    return found


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
