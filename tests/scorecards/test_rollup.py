"""The scorecards' weekly rollup: a page's figures are the calls' own, whatever the period and however the
data changed since the last read, and a read reads again only the agent-weeks that changed."""

from __future__ import annotations

import importlib
import random
import re
import threading
from dataclasses import fields
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from qa.execution import judge_run_execute
from qa.judging import judge_run_reverify, recording_enqueue_judging
from qa.models import JudgeRun, Recording, values_by_key
from insights.models import ScorecardDay, ScorecardWeek
from reviews.models import Review
from reviews.figures.stats import Stratum
from reviews.filters import ReportFilters
from reviews.periods import PeriodSplit, period_split
from insights.scorecards.moments import (
    PARTS,
    Samples,
    by_agent,
    by_week_around,
    call_samples,
    judged_calls,
    rollup_samples,
)
from insights.scorecards.selectors import period_samples, scorecard
from insights.scorecards import freshness
from insights.scorecards.services import scorecard_weeks_refresh
from reviews.services import CriterionAdjustment, review_create
from tests.factories import JudgeRunFactory, RecordingFactory, ScoreFactory, judged_recording, published_rubric
from tests.judge.conftest import fake_llm, judge_rubric  # noqa: F401 (a fixture)
from tests.reports.conftest import APPROVE, AUDIT, LOW, NEEDS_REVIEW, REJECT, add_review
from tests.support.fake_openai import answer_for, completion

pytestmark = pytest.mark.django_db

MON, TUE, WED, SUN = date(2026, 3, 2), date(2026, 3, 3), date(2026, 3, 4), date(2026, 3, 8)


@pytest.mark.parametrize(
    ("since", "until", "whole_weeks", "first", "last", "edges"),
    [
        (None, None, True, None, None, []),
        (MON, SUN + timedelta(weeks=7), True, MON, MON + timedelta(weeks=7), []),  # 8 whole weeks
        (WED, WED + timedelta(weeks=8), True, MON + timedelta(weeks=1), MON + timedelta(weeks=7),
         [(WED, SUN), (MON + timedelta(weeks=8), WED + timedelta(weeks=8))]),
        (SUN, SUN, False, None, None, [(SUN, SUN)]),  # one day: no whole week
        (WED, TUE + timedelta(weeks=1), False, None, None, [(WED, TUE + timedelta(weeks=1))]),
        (None, WED, True, None, MON - timedelta(weeks=1), [(MON, WED)]),
        (WED, None, True, MON + timedelta(weeks=1), None, [(WED, SUN)]),
    ],
)  # fmt: skip
def test_a_period_is_its_whole_weeks_and_the_days_at_either_end(since, until, whole_weeks, first, last, edges):
    split = period_split(since, until)
    assert (split.whole_weeks, split.first_week, split.last_week, split.edges) == (whole_weeks, first, last, edges)


def _week_key(value: object) -> object:
    """A week as the calls' raw rows give it (a datetime; text on SQLite) or as the rollup does (a date)."""
    if isinstance(value, datetime):
        return value.date()
    try:
        return date.fromisoformat(value[:10]) if isinstance(value, str) else value
    except ValueError:
        return value  # a team or an agent


def assert_same_samples(got: Samples, expected: Samples) -> None:
    def normalised(samples: Samples) -> dict:
        return {(tuple(_week_key(key) for key in group), column): cell for (group, column), cell in samples.cells.items()}

    got_cells, expected_cells = normalised(got), normalised(expected)
    assert got_cells.keys() == expected_cells.keys()
    for cell, sample in expected_cells.items():
        for stratum in Stratum:
            for part in PARTS:
                mine, theirs = getattr(got_cells[cell].of(stratum), part), getattr(sample.of(stratum), part)
                if isinstance(theirs, int):
                    assert mine == theirs, (cell, stratum, part)
                    continue
                for inner in fields(theirs):
                    assert getattr(mine, inner.name) == pytest.approx(getattr(theirs, inner.name)), (cell, stratum, part)
    assert got.agent_names == expected.agent_names


def rejudge(recording: Recording, values: dict[str, int | None]) -> None:
    """A new current run with `values`, marked as the judging marks it: earlier reviews judged another run."""
    run = JudgeRunFactory(recording=recording)
    for criterion in recording.rubric.criteria.all():
        ScoreFactory(run=run, criterion=criterion, value=values[criterion.key])
    Recording.objects.filter(pk=recording.pk).update(
        current_run=run, current_values=values_by_key(run.scores.select_related("criterion")), rollup_stale=True
    )


def unverify(recording: Recording, key: str) -> None:
    """The current run's score for `key` unverified, and the call marked, as `reverify` marks what it changes."""
    recording.current_run.scores.filter(criterion__key=key).update(
        evidence_verified=False, verification_status="not_found", confidence=0
    )
    Recording.objects.filter(pk=recording.pk).update(rollup_stale=True)


def random_calls(rubric, rng: random.Random, count: int) -> list[Recording]:
    """Calls over six weeks of March and April 2026 at any hour (some with no time), five agents in two teams
    (a4 moves team), audited, flagged, reviewed once or twice, some judged again after their review."""
    calls = []
    for _ in range(count):
        agent = rng.choice(["a1", "a2", "a3", "a4", "a5"])
        moment = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(minutes=rng.randrange(45 * 24 * 60))
        team = "north" if agent in ("a1", "a2") or (agent == "a4" and moment.day < 20 and moment.month == 3) else "south"
        values = {key: rng.choice([1, 2, 3, 4, 5]) for key in ("c1", "c2")} | {"c3": rng.choice([None, 2, 4])}
        recording = judged_recording(
            rubric=rubric,
            values=values,
            agent_id=agent,
            agent_name=agent.upper(),
            team=team,
            occurred_at=None if rng.random() < 0.04 else moment,
            review_reasons=[reason for reason, rate in ((AUDIT, 0.5), (LOW, 0.15)) if rng.random() < rate],
        )  # a None in values is the judge's N/A, as judged_recording scores it
        if rng.random() < 0.25:  # a quote that did not verify: no value, and the call is in the flagged stratum
            unverify(recording, rng.choice(["c1", "c2", "c3"]))
        for _ in range(rng.choice([0, 1, 1, 2])):
            entries = {key: {"adjusted_value": rng.choice([1, 3, 5])} for key in ("c1", "c2") if rng.random() < 0.4}
            if rng.random() < 0.2:
                entries["c3"] = {"not_applicable": True}
            add_review(recording, rng.choice([APPROVE, APPROVE, REJECT, NEEDS_REVIEW]), when=moment, entries=entries)
            moment += timedelta(hours=1)
        if rng.random() < 0.1:
            rejudge(recording, {key: rng.choice([1, 5]) for key in ("c1", "c2", "c3")})
        calls.append(recording)
    return calls


PERIODS = [
    (None, None),
    (date(2026, 3, 2), date(2026, 4, 12)),  # whole weeks only
    (date(2026, 3, 4), date(2026, 4, 8)),  # Wednesday to Wednesday: two partial weeks
    (date(2026, 3, 29), date(2026, 3, 29)),  # one day, the one the clocks go forward in Madrid
    (None, date(2026, 3, 25)),
    (date(2026, 3, 18), None),
]


def test_the_rollup_gives_the_calls_own_figures_for_any_period_and_after_any_change(settings):
    settings.TIME_ZONE = "Europe/Madrid"  # weeks start at local midnight; summer time starts on 29 March
    rubric = published_rubric(criteria=3, not_applicable=("c3",))
    rng = random.Random(20261201)

    def check() -> None:
        for since, until in PERIODS:
            filters = ReportFilters(rubric=rubric, date_from=since, date_to=until)
            from_calls = judged_calls(rubric, since, until)
            assert_same_samples(period_samples(filters, by_agent), call_samples(rubric, from_calls, by_agent))
            around = by_week_around("a4")
            assert_same_samples(period_samples(filters, around), call_samples(rubric, from_calls, around))

    random_calls(rubric, rng, 80)
    check()  # built from nothing
    calls = random_calls(rubric, rng, 40)  # new calls, reviews and re-judged calls in weeks already rolled up
    for recording in rng.sample(calls + list(Recording.objects.filter(rubric=rubric)[:30]), 15):
        add_review(recording, APPROVE, when=datetime(2026, 4, 20, tzinfo=UTC), entries={"c1": {"adjusted_value": 2}})
    for recording in rng.sample(list(Recording.objects.filter(rubric=rubric)), 10):
        rejudge(recording, {"c1": 3, "c2": None, "c3": 4})
    for recording in rng.sample(list(Recording.objects.filter(rubric=rubric)), 10):
        unverify(recording, "c2")
    check()  # brought up to date
    assert ScorecardWeek.objects.filter(rubric=rubric, week__isnull=True).exists()  # calls with no time have a row
    assert not Recording.objects.filter(rollup_stale=True).exists()


def test_each_days_rows_are_its_calls_own_and_a_weeks_rows_the_sum_of_its_days(settings):
    """The day rollup, read alone: every day's rows give that day's calls' figures (across the change to
    summer time), and every week's rows are the sum of its seven days' rows."""
    settings.TIME_ZONE = "Europe/Madrid"
    rubric = published_rubric(criteria=3, not_applicable=("c3",))
    random_calls(rubric, random.Random(20261204), 60)
    assert scorecard_weeks_refresh(rubric=rubric) == 60
    days = sorted(set(ScorecardDay.objects.filter(rubric=rubric).values_list("day", flat=True)))
    assert len(days) > 20  # not trivially equal: most days of the six weeks have calls
    for day in [date(2026, 3, 1) + timedelta(days=offset) for offset in range(46)]:  # with and without calls
        one_day = PeriodSplit(whole_weeks=False, edges=[(day, day)])
        from_calls = call_samples(rubric, judged_calls(rubric, day, day), by_agent)
        assert_same_samples(rollup_samples(rubric, one_day, by_agent), from_calls)
        assert bool(from_calls.cells) == (day in days)
    for monday in sorted(set(ScorecardWeek.objects.filter(rubric=rubric, week__isnull=False).values_list("week", flat=True))):
        week = PeriodSplit(whole_weeks=True, first_week=monday, last_week=monday)
        its_days = PeriodSplit(whole_weeks=False, edges=[(monday, monday + timedelta(days=6))])
        assert_same_samples(rollup_samples(rubric, week, by_agent), rollup_samples(rubric, its_days, by_agent))
    assert not ScorecardDay.objects.filter(rubric=rubric, day__isnull=True).exists()  # calls with no time: weeks only


def lowest_reply(request: dict) -> object:
    """Every criterion at its scale minimum."""
    answer = answer_for(request)
    schema = request["response_format"]["json_schema"]["schema"]["properties"]["scores"]["properties"]
    for key, item in schema.items():
        answer["scores"][key]["value"] = min(value for value in item["properties"]["value"]["enum"] if value is not None)
    return completion(answer)


def test_a_scorecard_shows_a_judgment_or_a_review_as_soon_as_it_is_stored(fake_llm, supervisor):  # noqa: F811
    rubric = judge_rubric(audit_rate=1.0)  # every call in the random audit
    first, second = (RecordingFactory(rubric=rubric, occurred_at=datetime(2026, 3, day, 10, tzinfo=UTC)) for day in (3, 4))
    for recording in (first, second):
        judge_run_execute(run_id=recording_enqueue_judging(recording=recording).pk)

    def greeting() -> object:
        agent = next(row for row in scorecard(ReportFilters(rubric=rubric)).rows if row.agent_id)
        return agent.cells[0]  # "saludo", 1–5

    assert (greeting().judged_n, greeting().judge_mean) == (2, 5)
    fake_llm.script(lowest_reply)
    judge_run_execute(run_id=recording_enqueue_judging(recording=first).pk)  # judged again: 1
    assert greeting().judge_mean == 3

    second.refresh_from_db()
    review_create(
        recording=second,
        decision=Review.Decision.REJECT,
        reviewer="sup",
        user=supervisor,
        criteria=[CriterionAdjustment("saludo", adjusted_value=2, comment="no name given")],
    )
    cell = greeting()
    assert (cell.audited_n, cell.human_audit_mean) == (1, 2)


def statements(queries: CaptureQueriesContext) -> list[str]:
    """What a refresh asked the database, without the savepoints of the test's transaction."""
    return [query["sql"] for query in queries if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]


def test_a_read_reads_again_only_the_agent_weeks_that_changed(supervisor):
    rubric = published_rubric(criteria=2)
    calls = {
        (agent, day): judged_recording(
            rubric=rubric, agent_id=agent, team="t", occurred_at=datetime(2026, 3, day, 12, tzinfo=UTC)
        )
        for agent in ("a1", "a2")
        for day in (3, 10, 17)
    }
    assert scorecard_weeks_refresh(rubric=rubric) == 6
    assert ScorecardWeek.objects.count() == 2 * 3 * 3  # agents × weeks × (2 criteria and the overall)

    def refreshed(*changed: tuple[str, int]) -> tuple[set, int]:
        """Review `changed` calls and refresh: the agent-weeks whose rows were replaced, and the queries."""
        rows = dict(ScorecardWeek.objects.values_list("pk", "week"))
        agents = dict(ScorecardWeek.objects.values_list("pk", "agent_id"))
        for key in changed:
            review_create(recording=calls[key], decision=Review.Decision.APPROVE, reviewer="s", user=supervisor, criteria=[])
        with CaptureQueriesContext(connection) as queries:
            assert scorecard_weeks_refresh(rubric=rubric) == len(changed)
        replaced = {(rows[pk], agents[pk]) for pk in rows if not ScorecardWeek.objects.filter(pk=pk).exists()}
        return replaced, len(queries)

    one, one_queries = refreshed(("a1", 10))
    assert one == {(date(2026, 3, 9), "a1")}
    both, both_queries = refreshed(("a1", 17), ("a2", 17))
    assert both == {(date(2026, 3, 16), "a1"), (date(2026, 3, 16), "a2")}
    assert both_queries == one_queries  # per week, whatever the number of its agents
    assert ScorecardWeek.objects.count() == 2 * 3 * 3

    with CaptureQueriesContext(connection) as queries:
        assert scorecard_weeks_refresh(rubric=rubric) == 0
    assert len(statements(queries)) == 2  # the lock and the marked calls: nothing to read


def test_the_migration_marks_every_judged_call_for_the_first_read():
    rubric = published_rubric(criteria=1)
    judged = judged_recording(rubric=rubric)
    waiting = RecordingFactory(rubric=rubric)
    Recording.objects.update(rollup_stale=False)
    migration = importlib.import_module("qa.migrations.0011_recording_rollup_stale")
    migration.judged_mark(apps, None)
    assert set(Recording.objects.filter(rollup_stale=True)) == {judged}
    assert waiting.pk not in Recording.objects.filter(rollup_stale=True).values_list("pk", flat=True)


def test_after_a_time_zone_change_marking_every_call_draws_the_weeks_again(settings):
    """As the scorecards page says to do after changing TIME_ZONE, with the command it gives."""
    rubric = published_rubric(criteria=1)
    for day, hour in ((1, 23), (2, 3), (4, 12)):  # a Sunday night, a Monday morning and a Wednesday, in UTC
        judged_recording(rubric=rubric, agent_id="a1", team="t", occurred_at=datetime(2026, 3, day, hour, tzinfo=UTC))
    filters = ReportFilters(rubric=rubric, date_from=date(2026, 3, 2), date_to=date(2026, 3, 8))
    from_calls = judged_calls(rubric, filters.date_from, filters.date_to)
    assert_same_samples(period_samples(filters, by_agent), call_samples(rubric, from_calls, by_agent))

    settings.TIME_ZONE = "Asia/Tokyo"  # UTC+9: Sunday 23:00 UTC is Monday morning there
    stale = period_samples(filters, by_agent).cells[(("t", "a1"), "c1")].whole.judged.n
    assert stale != call_samples(rubric, from_calls, by_agent).cells[(("t", "a1"), "c1")].whole.judged.n

    readme = (Path(__file__).resolve().parents[2] / "docs/user/scorecards.md").read_text()
    command = re.search(r'`python manage.py shell -c "([^"]*rollup_stale[^"]*)"`', readme).group(1)
    call_command("shell", command=command)
    assert_same_samples(period_samples(filters, by_agent), call_samples(rubric, from_calls, by_agent))


def test_with_too_many_changed_calls_a_read_reads_the_calls_and_leaves_the_rollup_to_the_beat(monkeypatch):
    rubric = published_rubric(criteria=2)
    for day in (3, 4, 10):
        judged_recording(rubric=rubric, agent_id="a1", team="t", occurred_at=datetime(2026, 3, day, tzinfo=UTC))
    filters = ReportFilters(rubric=rubric, date_from=date(2026, 3, 2), date_to=date(2026, 3, 15))
    from_calls = call_samples(rubric, judged_calls(rubric, filters.date_from, filters.date_to), by_agent)

    assert freshness.REFRESH_IN_READ_MAX == 5_000  # the scorecards page's figure; here, fewer calls do
    monkeypatch.setattr(freshness, "REFRESH_IN_READ_MAX", 2)
    assert_same_samples(period_samples(filters, by_agent), from_calls)
    assert Recording.objects.filter(rollup_stale=True).count() == 3 and not ScorecardWeek.objects.exists()

    monkeypatch.setattr(freshness, "REFRESH_IN_READ_MAX", 3)
    assert_same_samples(period_samples(filters, by_agent), from_calls)
    assert not Recording.objects.filter(rollup_stale=True).exists() and ScorecardWeek.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_review_committed_while_a_refresh_runs_is_read_by_the_next_one(monkeypatch):
    """Another connection reviews a call of the week being read again, after the refresh read its calls and
    before it commits: the refresh's rows miss the review, but the call stays marked for the next one."""
    rubric = published_rubric(criteria=1)
    first, second = (
        judged_recording(
            rubric=rubric, agent_id="a1", team="t", review_reasons=[AUDIT], occurred_at=datetime(2026, 3, day, tzinfo=UTC)
        )
        for day in (3, 4)
    )
    scorecard_weeks_refresh(rubric=rubric)
    Recording.objects.filter(pk=first.pk).update(rollup_stale=True)  # the refresh below reads first's week

    def review_elsewhere() -> None:
        try:
            review_create(
                recording=Recording.objects.get(pk=second.pk),
                decision=Review.Decision.REJECT,
                # No user: a transactional test's flush leaves the Supervisors group without its
                # permissions, and who may review is not what this test is about.
                reviewer="sup",
                criteria=[CriterionAdjustment("c1", adjusted_value=1, comment="wrong")],
            )
        finally:
            connection.close()

    real_insert = ScorecardWeek.objects.bulk_create

    def insert_after_a_review(rows):
        thread = threading.Thread(target=review_elsewhere)
        thread.start()
        thread.join()
        return real_insert(rows)

    monkeypatch.setattr(ScorecardWeek.objects, "bulk_create", insert_after_a_review)
    assert scorecard_weeks_refresh(rubric=rubric) == 1
    monkeypatch.undo()

    week = ScorecardWeek.objects.get(rubric=rubric, column_key="c1")
    assert week.human_n == 0  # the review came after this refresh read the calls
    assert Recording.objects.filter(pk=second.pk, rollup_stale=True).exists()
    assert scorecard_weeks_refresh(rubric=rubric) == 1
    assert ScorecardWeek.objects.get(rubric=rubric, column_key="c1").human_n == 1


def test_a_reverified_score_that_no_longer_verifies_leaves_the_scorecard_at_the_next_read():
    """As the scorecards page says: re-verifying a score whose confidence changes routes the call again, which marks
    it, so the rollup reads its week again and the value stops counting as the judge's."""
    rubric = published_rubric(criteria=1)
    recording = judged_recording(rubric=rubric, values={"c1": 5}, agent_id="a1", team="t")
    filters = ReportFilters(rubric=rubric)

    def cell():
        return next(row for row in scorecard(filters).rows if row.agent_id).cells[0]

    assert (cell().judged_n, cell().judge_mean) == (1, 5)  # the rollup is built, nothing marked now
    Recording.objects.filter(pk=recording.pk).update(transcript="AGENTE: Buenas tardes.")  # the quote is gone
    assert judge_run_reverify(run=JudgeRun.objects.select_related("recording").get(pk=recording.current_run_id)) == 1
    assert Recording.objects.get(pk=recording.pk).rollup_stale
    assert (cell().judged_n, cell().judge_mean, cell().unverified_n, cell().waiting_n) == (0, None, 1, 1)


def test_a_weeks_rows_and_its_days_rows_add_into_the_same_cells():
    """The rollups' rows are read as the cursor gives them (insights.scorecards.moments._summed): a week from
    the weekly rows is a date column, from the daily rows PostgreSQL's date_trunc of a date (a datetime). Both
    must come out as the same date, or a period's whole weeks and its edge days would be two cells apart."""
    rubric = published_rubric(criteria=3, not_applicable=("c3",))
    random_calls(rubric, random.Random(45), 30)
    assert scorecard_weeks_refresh(rubric=rubric) == 30
    monday = ScorecardWeek.objects.filter(rubric=rubric, week__isnull=False).order_by("week").values_list("week", flat=True)[0]
    agent_id = Recording.objects.filter(rubric=rubric).order_by("pk").values_list("agent_id", flat=True)[0]
    grouping = by_week_around(agent_id)
    whole = rollup_samples(rubric, PeriodSplit(whole_weeks=True, first_week=monday, last_week=monday), grouping)
    days = rollup_samples(rubric, PeriodSplit(whole_weeks=False, edges=[(monday, monday + timedelta(days=6))]), grouping)
    assert whole.cells and whole.cells.keys() == days.cells.keys()
    for samples in (whole, days):
        assert {type(week) for ((week, _, _), _) in samples.cells} == {date}
    both = whole + days  # as a period adds its weeks and its edges: one cell each, twice the sums
    assert both.cells.keys() == whole.cells.keys()
    for cell, sample in whole.cells.items():
        assert both.cells[cell].whole.judged.n == 2 * sample.whole.judged.n
