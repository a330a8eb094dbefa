"""The counts the dashboard and the reports add up per criterion, read two ways: from the calls
(`call_tallies`), or from their weekly rollup (`week_tallies`: `CriterionWeek`, `CriterionPairWeek`), which
`criterion_weeks_replace` keeps from the calls with `call_tallies`. A period sums the rollup's whole weeks
and the calls of the days at either end (`reviews.periods.period_split`), as the scorecards do.

Every count adds up over calls, so any set of agent-weeks is the sum of its rows:
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

from qa.models import JUDGE_VALUE_EXISTS, JudgeRun, Recording, Score
from insights.models import CriterionPairWeek, CriterionWeek
from insights.reports.ceiling import Agent, human_pairs_by_agent, judge_pairs_by_agent
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


def call_tallies(rubric: Rubric, calls: QuerySet[Recording]) -> defaultdict[Agent, Tallies]:
    """The counts of `calls` (the rubric's judged recordings) per team and agent: five GROUP BY queries
    and the supervisors' ratings of the calls reviewed more than once."""
    found: defaultdict[Agent, Tallies] = defaultdict(tallies)
    calls = calls.order_by()
    # A week's or a day's calls as a list of ids: as a subquery, PostgreSQL expects one call and plans the
    # human references from every review of the rubric (0.3 s for a day's 381 calls, 3 ms as a list;
    # bench/dashboard/README.md). Past a statement's parameters, the subquery.
    ids = list(calls.values_list("pk", flat=True)[: IDS_AS_LIST + 1])
    if not ids:
        return found
    if len(ids) <= IDS_AS_LIST:
        calls = Recording.objects.filter(pk__in=ids).order_by()
    for row in calls.values("team", "agent_id").annotate(n=Count("pk")):
        found[(row["team"], row["agent_id"])][CALLS].calls = row["n"]
    evidence = (
        Score.objects.filter(run__recording__in=calls, run__rubric=rubric, run__status=JudgeRun.Status.SUCCEEDED)
        .values(team=F("run__recording__team"), agent_id=F("run__recording__agent_id"), key=F("criterion__key"))
        .annotate(n=Count("pk"), unverified=Count("pk", filter=Q(evidence_verified=False)))
        .order_by()
    )
    for row in evidence:
        tally = found[(row["team"], row["agent_id"])][row["key"]]
        tally.scores, tally.unverified = row["n"], row["unverified"]
    failing = Score.objects.filter(
        JUDGE_VALUE_EXISTS,
        run__in=calls.values("current_run_id"),
        criterion__critical=True,
        value__lte=F("criterion__fail_at"),
    ).order_by()
    agent = {"team": F("run__recording__team"), "agent_id": F("run__recording__agent_id")}
    for row in failing.values(**agent, key=F("criterion__key")).annotate(n=Count("pk")):
        found[(row["team"], row["agent_id"])][row["key"]].failed = row["n"]
    for row in failing.values(**agent).annotate(n=Count("run_id", distinct=True)):
        found[(row["team"], row["agent_id"])][CALLS].failed = row["n"]
    recording_ids = ids if len(ids) <= IDS_AS_LIST else calls.values("pk")
    for place, by_key in judge_pairs_by_agent(recording_ids).items():
        for key, pairs in by_key.items():
            found[place][key].pairs.update(pairs)
    for place, by_key in human_pairs_by_agent(rubric, recording_ids).items():
        for key, (pairs, units) in by_key.items():
            found[place][key].pairs.update({("human", a, b): n for (a, b), n in pairs.items()})
            found[place][key].human_units += units
    return found


def criterion_weeks_replace(*, rubric: Rubric, week: date | None, agents: set[str], calls: QuerySet[Recording]) -> None:
    """Replace the rollup rows of `agents` in `week` by the counts of `calls` (their judged calls there).
    The caller holds the rubric's refresh lock (insights.scorecards.services.scorecard_weeks_refresh)."""
    found = call_tallies(rubric, calls)
    CriterionWeek.objects.filter(rubric=rubric, week=week, agent_id__in=agents).delete()
    CriterionPairWeek.objects.filter(rubric=rubric, week=week, agent_id__in=agents).delete()
    place = {"rubric": rubric, "week": week}
    CriterionWeek.objects.bulk_create(
        CriterionWeek(
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
    CriterionPairWeek.objects.bulk_create(
        CriterionPairWeek(
            **place, team=team, agent_id=agent_id, criterion_key=key, source=source, first=first, second=second, n=n
        )
        for (team, agent_id), by_key in found.items()
        for key, tally in by_key.items()
        for (source, first, second), n in tally.pairs.items()
    )


def week_tallies(rubric: Rubric, *, first_week: date | None, last_week: date | None, where: Q) -> Tallies:
    """The rollup's counts of the rubric's weeks from `first_week` to `last_week` (None: unbounded; either
    bound leaves out the calls with no time), of the rows `where` selects (a team, an agent, a scope): two
    queries."""
    weeks = Q(rubric=rubric)
    if first_week:
        weeks &= Q(week__gte=first_week)
    if last_week:
        weeks &= Q(week__lte=last_week)
    found = tallies()
    counts = (
        CriterionWeek.objects.filter(weeks, where)
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
            setattr(tally, name, value or 0)
    pairs = (
        CriterionPairWeek.objects.filter(weeks, where)
        .values("criterion_key", "source", "first", "second")
        .annotate(n=Sum("n"))
        .order_by()
    )
    for row in pairs:
        found[row["criterion_key"]].pairs[(row["source"], row["first"], row["second"])] += row["n"]
    return found
