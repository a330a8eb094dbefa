"""The reports' weekly rollup per criterion (insights.reports.rollup): whatever the period, team, agent or
reader, the counts summed from the rollup are those of the calls themselves, before and after the data
changes; and the dashboard and the deviation report read one and the same counts."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db.models import Q

from access.models import Role, Workspace
from access.scope import scope_for
from access.services import member_add
from qa.models import Recording, Score
from insights.dashboard.selectors import dashboard
from reviews.filters import ReportFilters
from insights.models import CriterionDay, CriterionWeek
from insights.reports import selectors
from insights.reports.rollup import CALLS, call_tallies, rollup_tallies, tallies
from insights.reports.selectors import deviation_report, evidence_report, period_tallies
from reviews.services import CriterionAdjustment, review_create
from rubrics.models import Criterion
from insights.scorecards.moments import judged_calls
from insights.scorecards.services import scorecard_weeks_refresh
from reviews.periods import PeriodSplit
from tests.factories import JudgeRunFactory, ScoreFactory, UserFactory, judged_recording, published_rubric

pytestmark = pytest.mark.django_db

AGENTS = [("a1", "north"), ("a2", "north"), ("a3", "south")]
START = datetime(2026, 3, 2, 12, tzinfo=UTC)  # a Monday


@pytest.fixture
def month(db):
    """Four weeks of calls of three agents: c1 critical (fails at 2), some quotes unverified, some calls
    judged twice, reviewed once or twice (blind), and a call with no time."""
    rng = random.Random(1931)
    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    Criterion.objects.filter(rubric=rubric, key="c1").update(critical=True, fail_at=2)
    ana, ben = (UserFactory(username=name, groups=["Supervisors"]) for name in ("ana", "ben"))
    for index in range(48):
        agent_id, team = AGENTS[index % 3]
        occurred = None if index == 47 else START + timedelta(days=rng.randrange(28), hours=rng.randrange(8))
        recording = judged_recording(
            rubric=rubric,
            agent_id=agent_id,
            team=team,
            occurred_at=occurred,
            values={"c1": rng.randint(1, 5), "c2": rng.randint(1, 5)},
        )
        if rng.random() < 0.3:
            recording.current_run.scores.filter(criterion__key=rng.choice(["c1", "c2"])).update(
                evidence_verified=False, confidence=0
            )
        if rng.random() < 0.2:  # judged again: the evidence counts both runs, the auto-fail the current
            run = JudgeRunFactory(recording=recording)
            for criterion in rubric.criteria.all():
                ScoreFactory(run=run, criterion=criterion, value=rng.randint(1, 5))
            Recording.objects.filter(pk=recording.pk).update(current_run=run)
            recording.refresh_from_db()
        if rng.random() < 0.5:
            review_create(
                recording=recording, decision="approve", reviewer="ana", user=ana,
                criteria=[CriterionAdjustment(key, rng.randint(1, 5), comment="heard it") for key in ("c1", "c2")],
            )  # fmt: skip
            if rng.random() < 0.5:
                review_create(
                    recording=recording, decision="approve", reviewer="ben", user=ben, blind=True,
                    replace_final=True, criteria=[CriterionAdjustment(key, rng.randint(1, 5), comment="mine") for key in ("c1", "c2")],
                )  # fmt: skip
    return rubric


def _from_calls(monkeypatch, filters: ReportFilters) -> dict:
    with monkeypatch.context() as patch:
        patch.setattr(selectors, "rollups_readable", lambda **_: False)  # as while the beat is behind
        return dict(period_tallies(filters))


def _periods() -> list[tuple[date | None, date | None]]:
    return [
        (None, None),
        (date(2026, 3, 2), date(2026, 3, 29)),  # four whole weeks
        (date(2026, 3, 4), date(2026, 3, 25)),  # two whole weeks and the days at either end
        (date(2026, 3, 10), date(2026, 3, 12)),  # days within one week
        (None, date(2026, 3, 18)),
    ]


def test_the_rollup_gives_the_calls_counts_for_any_period_team_agent_and_reader(month, monkeypatch):
    north = UserFactory(username="marta")
    member_add(user=north, workspace=Workspace.objects.get(pk=month.workspace_id), role=Role.SUPERVISOR, teams=["north"])
    readers = [None, scope_for(north)]
    for since, until in _periods():
        for team, agent, scope in [("", "", None), ("north", "", None), ("", "a3", None), ("", "", readers[1])]:
            filters = ReportFilters(rubric=month, date_from=since, date_to=until, team=team, agent=agent, scope=scope)
            got = dict(period_tallies(filters))
            assert got == _from_calls(monkeypatch, filters), (since, until, team, agent, scope)
    everything = period_tallies(ReportFilters(rubric=month))
    # Not trivially equal: the counts are there (48 calls, two runs' scores on some, pairs of both kinds).
    c1 = Score.objects.filter(criterion__rubric=month, criterion__key="c1")
    assert everything[CALLS].calls == 48 and everything["c1"].scores == c1.count() > 48  # some calls judged twice
    assert everything["c1"].unverified == c1.filter(evidence_verified=False).count() > 0
    assert everything["c1"].failed > 0 and everything["c1"].judge_pairs() and everything["c1"].human_units > 0
    assert CriterionWeek.objects.filter(rubric=month).exists()  # the first read built the rollup


def test_a_change_after_the_last_read_is_in_the_next_one(month, monkeypatch):
    filters = ReportFilters(rubric=month, date_from=date(2026, 3, 2), date_to=date(2026, 3, 29))
    before = period_tallies(filters)
    recording = Recording.objects.filter(rubric=month, occurred_at__isnull=False, reviews__isnull=True).first()
    review_create(
        recording=recording, decision="approve", reviewer="eva", criteria=[CriterionAdjustment("c1", 5, comment="x")]
    )
    after = period_tallies(filters)
    assert after["c1"].judge_pairs().total() == before["c1"].judge_pairs().total() + 1
    assert dict(after) == _from_calls(monkeypatch, filters)


def test_the_dashboard_and_the_reports_read_the_same_counts(month):
    filters = ReportFilters(rubric=month, date_from=date(2026, 3, 4), date_to=date(2026, 3, 25), team="north")
    board = dashboard(filters)
    assert board.evidence == evidence_report(filters).tally
    ceiling = deviation_report(filters).ceiling
    assert board.furthest == sorted(
        [row for row in ceiling if row.judge_human_qwk is not None], key=lambda row: row.judge_human_qwk
    )[:3]
    calls = Recording.objects.filter(rubric=month, team="north", occurred_at__gte=datetime(2026, 3, 4, tzinfo=UTC))
    calls = calls.filter(occurred_at__lt=datetime(2026, 3, 26, tzinfo=UTC))
    failing = [r for r in calls if r.current_run.scores.filter(criterion__key="c1", value__lte=2, evidence_verified=True)]
    assert (board.judged, board.auto_failed) == (calls.count(), len(failing))


def test_each_days_rows_are_its_calls_counts_and_a_weeks_rows_the_sum_of_its_days(month):
    """The day rollup, read alone: every day's rows count that day's calls, and every week's rows are the sum
    of its seven days' rows."""
    scorecard_weeks_refresh(rubric=month)
    days = set(CriterionDay.objects.filter(rubric=month).values_list("day", flat=True))
    assert len(days) > 10
    for day in [date(2026, 3, 1) + timedelta(days=offset) for offset in range(30)]:
        expected = tallies()
        for found in call_tallies(month, Recording.objects.filter(judged_calls(month, day, day)(""))).values():
            for key, tally in found.items():
                expected[key].add(tally)
        got = rollup_tallies(month, split=PeriodSplit(whole_weeks=False, edges=[(day, day)]), where=Q())
        assert dict(got) == dict(expected), day
        assert bool(expected) == (day in days)
    for monday in (date(2026, 3, 2) + timedelta(weeks=weeks) for weeks in range(4)):
        week = rollup_tallies(month, split=PeriodSplit(whole_weeks=True, first_week=monday, last_week=monday), where=Q())
        its_days = PeriodSplit(whole_weeks=False, edges=[(monday, monday + timedelta(days=6))])
        assert dict(week) == dict(rollup_tallies(month, split=its_days, where=Q()))
        assert week[CALLS].calls > 0
