"""The deviation report's cube from its rollup per agent-week and agent-day (insights.reports.rollup:
`DeviationWeek`, `DeviationDay`): for any period, team, agent or reader, the report read from the rollup is the
report read from the scores, before and after reviews change; and the rollup is read only while it is current."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import pytest

from access.models import Role, Workspace
from access.scope import scope_for
from access.services import member_add
from insights.models import DeviationDay, DeviationWeek
from insights.reports import selectors
from insights.reports.selectors import deviation_report
from insights.scorecards.services import scorecard_weeks_refresh
from qa.models import Recording
from reviews.filters import Group, ReportFilters
from reviews.services import CriterionAdjustment, review_create
from tests.factories import JudgeRunFactory, ScoreFactory, UserFactory, judged_recording
from tests.reports.conftest import APPROVE, AUDIT, LOW, NEEDS_REVIEW, REJECT, UNVERIFIED, add_review

pytestmark = pytest.mark.django_db

AGENTS = [("a1", "north"), ("a2", "north"), ("a3", "south")]
START = datetime(2026, 3, 4, 9, tzinfo=UTC)  # a Wednesday: the calls' first and last weeks are partial
REASONS = [[], [AUDIT], [AUDIT, LOW], [LOW], [UNVERIFIED], [Recording.ReviewReason.WARM_UP]]


def _entries(rng: random.Random, decision: str) -> dict[str, dict]:
    """A review's entries: adjusted values, "does not apply", criteria marked wrong, or none."""
    entries: dict[str, dict] = {}
    for key, scale in (("c1", (1, 5)), ("c2", (0, 3))):
        pick = rng.random()
        if pick < 0.3:
            entries[key] = {"adjusted_value": rng.randint(*scale), "comment": "heard it"}
        elif pick < 0.4:
            entries[key] = {"not_applicable": True, "comment": "does not apply"}
        elif pick < 0.5 and decision == APPROVE:
            entries[key] = {"rejected": True, "comment": "wrong"}
    return entries


@pytest.fixture
def weeks(care_rubric):
    """Five weeks of calls from a Wednesday, three agents in two teams, every review reason, unverified quotes;
    reviews that approve, reject and ask for another review, some superseded, one of a run no longer
    current; and a reviewed call with no time."""
    rng = random.Random(4545)
    for index in range(90):
        agent_id, team = AGENTS[index % 3]
        occurred = None if index == 89 else START + timedelta(days=rng.randrange(33), hours=rng.randrange(10))
        recording = judged_recording(
            rubric=care_rubric,
            agent_id=agent_id,
            team=team,
            occurred_at=occurred,
            review_reasons=rng.choice(REASONS),
            values={"c1": rng.randint(1, 5), "c2": rng.randint(0, 3)},
        )
        if rng.random() < 0.25:
            recording.current_run.scores.filter(criterion__key=rng.choice(["c1", "c2"])).update(evidence_verified=False)
        if rng.random() < 0.15 and index != 89:
            continue  # never reviewed
        when = (occurred or START) + timedelta(days=1)
        for extra in range(rng.choice([1, 1, 1, 2])):  # some reviewed twice: the latest counts
            decision = rng.choices([APPROVE, REJECT, NEEDS_REVIEW], weights=[6, 2, 1])[0]
            add_review(recording, decision, when=when + timedelta(hours=extra), entries=_entries(rng, decision))
        if rng.random() < 0.1:  # judged again after its review: the reviewed run's scores count
            run = JudgeRunFactory(recording=recording, prompt_version="v2")
            for criterion in care_rubric.criteria.all():
                ScoreFactory(run=run, criterion=criterion, value=rng.randint(0, 3))
            Recording.objects.filter(pk=recording.pk).update(current_run=run, rollup_stale=True)
    return care_rubric


def _from_scores(monkeypatch, filters: ReportFilters):
    """The report as it reads while the rollups are behind: the cube from the scores."""
    with monkeypatch.context() as patch:
        patch.setattr(selectors, "rollups_readable", lambda **_: False)
        return deviation_report(filters)


def _from_rollup(monkeypatch, filters: ReportFilters):
    """The report from the rollups; reading the scores' cube would fail the test."""
    with monkeypatch.context() as patch:

        def refused(*args, **kwargs):
            raise AssertionError("the report read the scores, not the rollup")

        patch.setattr(selectors, "deviation_cube", refused)
        return deviation_report(filters)


PERIODS = [
    (None, None),
    (date(2026, 3, 9), date(2026, 3, 29)),  # three whole weeks
    (date(2026, 3, 4), date(2026, 4, 5)),  # every call with a time: a partial week at both ends
    (date(2026, 3, 11), date(2026, 3, 31)),  # from a Wednesday to a Tuesday: two whole weeks and both edges
    (date(2026, 3, 17), date(2026, 3, 19)),  # days within one week
    (None, date(2026, 3, 24)),
    (date(2026, 3, 20), None),
]


def _readers(rubric) -> list:
    north = UserFactory(username="marta")
    workspace = Workspace.objects.get(pk=rubric.workspace_id)
    member_add(user=north, workspace=workspace, role=Role.SUPERVISOR, teams=["north"])
    return [None, scope_for(north)]


def _filters(rubric, readers) -> list[ReportFilters]:
    return [
        ReportFilters(rubric=rubric, date_from=since, date_to=until, team=team, agent=agent, scope=scope)
        for since, until in PERIODS
        for team, agent, scope in [("", "", None), ("north", "", None), ("", "a3", None), ("", "", readers[1])]
    ]


def test_the_report_from_the_rollup_is_the_report_from_the_scores(weeks, monkeypatch):
    everything = deviation_report(ReportFilters(rubric=weeks))  # the first read builds the rollups
    assert DeviationWeek.objects.filter(rubric=weeks).exists() and DeviationDay.objects.filter(rubric=weeks).exists()
    for filters in _filters(weeks, _readers(weeks)):
        got = _from_rollup(monkeypatch, filters)
        assert got == _from_scores(monkeypatch, filters), filters
    # Not trivially equal: every group has reviewed scores, with pairs, rejections, N/A and unverified quotes.
    for group in Group:
        c1 = everything.groups[group].criteria[0]
        assert c1.agreement.reviewed > 0 and c1.agreement.n > 0, group
    all_c1 = everything.groups[Group.ALL].criteria[0]
    assert all_c1.agreement.rejected > 0 and all_c1.unverified.reviewed > 0 and all_c1.verified.reviewed > 0
    assert all_c1.agreement.reviewed > all_c1.agreement.n  # some entries say "does not apply", or have no value
    assert everything.groups[Group.ALL].needs_review > 0


def _reviewable(recordings) -> list[Recording]:
    """Those whose judge's values all exist (an approve may not carry an unverified one) and whose run is the
    one reviewed, oldest first."""
    return [r for r in recordings.order_by("pk") if r.current_run.scores.filter(evidence_verified=False).count() == 0]


def test_reviews_changed_after_a_refresh_are_in_the_next_read(weeks, monkeypatch):
    filters = ReportFilters(rubric=weeks, date_from=date(2026, 3, 11), date_to=date(2026, 3, 31))
    before = deviation_report(filters)
    assert not Recording.objects.filter(rubric=weeks, rollup_stale=True).exists()  # the read refreshed
    ana = UserFactory(username="ana", groups=["Supervisors"])
    reviewed = Recording.objects.filter(rubric=weeks, reviews__decision__in=[APPROVE, REJECT]).distinct()
    final = [r for r in _reviewable(reviewed) if r.reviews.first().is_final]  # the latest review is final
    edge_days = {date(2026, 3, 11) + timedelta(days=n) for n in range(5)} | {date(2026, 3, 30), date(2026, 3, 31)}
    edge = next(r for r in final if r.occurred_at and r.occurred_at.date() in edge_days)
    whole = next(r for r in final if r.occurred_at and date(2026, 3, 16) <= r.occurred_at.date() <= date(2026, 3, 29))
    never = next(r for r in _reviewable(Recording.objects.filter(rubric=weeks, reviews__isnull=True))
                 if r.occurred_at and r.occurred_at.date() in edge_days)  # fmt: skip
    # A first review at an edge; a final review there replaced by a reject; one in a whole week replaced by
    # "needs review", which takes its call out of the figures.
    review_create(recording=never, decision=APPROVE, reviewer="ana", user=ana,
                  criteria=[CriterionAdjustment("c1", 1, comment="no greeting")])  # fmt: skip
    other = (edge.current_run.scores.get(criterion__key="c2").value + 1) % 4  # not the judge's
    review_create(recording=edge, decision=REJECT, reviewer="ana", user=ana, replace_final=True, comment="wrong",
                  criteria=[CriterionAdjustment("c2", other, comment="did not confirm")])  # fmt: skip
    review_create(recording=whole, decision=NEEDS_REVIEW, reviewer="ana", user=ana, replace_final=True)
    after = deviation_report(filters)  # brings the rollups up to date first
    assert after != before
    assert after.groups[Group.ALL].needs_review == before.groups[Group.ALL].needs_review + 1
    assert after == _from_scores(monkeypatch, filters)
    # Every period and reader again, on the rows the refresh replaced.
    for each in _filters(weeks, _readers(weeks)):
        assert _from_rollup(monkeypatch, each) == _from_scores(monkeypatch, each), each


def test_a_rollup_behind_its_calls_is_not_read(weeks, monkeypatch):
    """While calls are marked and not refreshed (more than a read refreshes itself), the report reads the
    scores: the calls' figures, not the stale rows'."""
    filters = ReportFilters(rubric=weeks)
    before = deviation_report(filters)
    reviewed = Recording.objects.filter(rubric=weeks, reviews__decision__in=[APPROVE, REJECT]).distinct()
    call = next(r for r in reviewed.order_by("pk") if r.reviews.first().is_final)
    review_create(recording=call, decision=NEEDS_REVIEW, reviewer="eva", replace_final=True)
    with monkeypatch.context() as patch:
        patch.setattr(selectors, "rollups_readable", lambda **_: True)  # the rows as they are, not refreshed
        stale = deviation_report(filters)
    behind = _from_scores(monkeypatch, filters)  # as with too many calls marked
    scorecard_weeks_refresh(rubric=weeks)
    current = _from_rollup(monkeypatch, filters)
    assert behind == current
    assert stale.groups[Group.ALL].criteria != current.groups[Group.ALL].criteria  # the stale rows count the call
    assert stale.groups[Group.ALL].criteria == before.groups[Group.ALL].criteria
