"""The scorecard's cells from the database: pooling, N/A, flagged calls, overall, queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviews.filters import ReportFilters
from reviews.figures.stats import CorrectionLevel
from insights.scorecards.selectors import agent_card, scorecard
from rubrics.selectors import rubric_quality_policy
from tests.factories import UserFactory, published_rubric
from qa.models import Recording
from calibration.selectors import CallSelection
from calibration.services import agreed_value_set, calibration_close, calibration_create
from reviews.models import Review
from reviews.services import CriterionAdjustment, review_create
from tests.reports.conftest import AUDIT, LOW, UNVERIFIED
from tests.scorecards.conftest import call

pytestmark = pytest.mark.django_db


def cells(card, column: str = "c1") -> dict[tuple[str, str | None], object]:
    index = [c.key for c in card.columns].index(column)
    return {(row.team, row.agent_id): row.cells[index] for row in card.rows}


def test_pooling_team_then_rubric_and_flagged_calls_never_correct(teams_data):
    by_row = cells(scorecard(ReportFilters(rubric=teams_data)))
    a1, a2, a3 = by_row[("north", "a1")], by_row[("north", "a2")], by_row[("south", "a3")]
    assert (a1.judged_n, a1.audited_n, a1.judge_mean, a1.human_audit_mean) == (20, 10, 3.0, 3.5)
    assert (a1.known_n, a1.estimated_n, a1.waiting_n, a1.unverified_n) == (10, 10, 0, 0)
    assert a1.estimate == pytest.approx(2.5) and a1.correction_level == CorrectionLevel.CELL
    assert (a2.judged_n, a2.audited_n, a2.correction_level, a2.correction_n) == (6, 4, CorrectionLevel.TEAM, 14)
    assert a2.estimate == pytest.approx(11 / 6)
    assert (a3.judged_n, a3.audited_n, a3.correction_level, a3.correction_n) == (4, 0, CorrectionLevel.RUBRIC, 14)
    assert (a3.known_n, a3.estimated_n) == (1, 3)
    assert a3.estimate == pytest.approx(1.375)


def test_not_applicable_is_no_value_on_either_side_and_the_overall_weighs_the_criteria(not_applicable_data):
    card = scorecard(ReportFilters(rubric=not_applicable_data))
    c2 = cells(card, "c2")[("t", "x")]
    assert (c2.judged_n, c2.audited_n, c2.judge_mean, c2.human_audit_mean) == (15, 10, pytest.approx(3.4), 2.0)
    assert (c2.known_n, c2.estimated_n, c2.correction_level, c2.correction_n) == (10, 3, CorrectionLevel.CELL, 10)
    assert c2.estimate == pytest.approx(32 / 13)
    overall = cells(card, "overall")[("t", "x")]
    assert (overall.judged_n, overall.audited_n, overall.correction_n) == (20, 14, 14)
    assert (overall.known_n, overall.estimated_n) == (14, 6)
    assert overall.judge_mean == pytest.approx(66.5625)
    assert overall.human_audit_mean == pytest.approx(675 / 14)
    assert overall.estimate == pytest.approx((675 + 506.25 - 6 * 150 / 14) / 20)


def test_too_few_audited_calls_anywhere_leave_the_estimate_uncorrected(db):
    rubric = published_rubric(criteria=1, slug="small")
    for _ in range(9):
        call(rubric, "a", "t", {"c1": 4}, reasons=(AUDIT,), human={"c1": 2})
    call(rubric, "a", "t", {"c1": 2})
    for row in scorecard(ReportFilters(rubric=rubric)).rows:
        cell = row.cells[0]
        # The nine reviewed calls count with their human value, the tenth with the judge's, uncorrected.
        assert (cell.judged_n, cell.audited_n, cell.estimate, cell.ci, cell.corrected) == (10, 9, 2.0, None, False)


def test_an_agent_whose_quotes_are_all_unverified_has_no_judge_mean_and_waits_for_reviews(teams_data):
    for value in (5, 5, 4):
        recording = call(teams_data, "u1", "east", {"c1": value}, reasons=(UNVERIFIED,))
        recording.current_run.scores.update(evidence_verified=False, verification_status="not_found", confidence=0)
    Recording.objects.filter(agent_id="u1").update(rollup_stale=True)  # as reverify marks what it changes
    cell = cells(scorecard(ReportFilters(rubric=teams_data)))[("east", "u1")]
    assert (cell.judged_n, cell.unverified_n, cell.waiting_n, cell.known_n) == (0, 3, 3, 0)
    assert (cell.judge_mean, cell.estimate, cell.ci, cell.corrected) == (None, None, None, False)
    overall = cells(scorecard(ReportFilters(rubric=teams_data)), "overall")[("east", "u1")]
    assert (overall.judge_mean, overall.estimate, overall.waiting_n) == (None, None, 3)


def test_a_flagged_call_corrected_by_a_supervisor_counts_with_the_human_value(teams_data):
    recording = call(teams_data, "f1", "west", {"c1": 4}, reasons=(LOW,))
    before = cells(scorecard(ReportFilters(rubric=teams_data)))[("west", "f1")]
    # West has no flagged audited call, nor has the rubric: the judge's 4 stands, uncorrected.
    assert (before.estimate, before.corrected, before.known_n) == (4.0, False, 0)
    review_create(
        recording=recording,
        decision=Review.Decision.APPROVE,
        reviewer="sup",
        criteria=[CriterionAdjustment(criterion_key="c1", adjusted_value=3, comment="Verified late.")],
    )
    after = agent_card(ReportFilters(rubric=teams_data), "f1").criteria[0].agent
    assert (after.estimate, after.ci, after.known_n, after.estimated_n) == (3.0, (3.0, 3.0), 1, 0)
    assert after.judge_mean == 4.0  # the judge's mean still shows what the judge said, beside it


def test_the_period_filters_the_calls_by_day(teams_data):
    from datetime import date

    day = date(2026, 3, 2)  # every call of teams_data is on 2 March
    assert scorecard(ReportFilters(rubric=teams_data, date_from=day, date_to=day)).rows
    assert not scorecard(ReportFilters(rubric=teams_data, date_from=date(2026, 3, 3))).rows


def test_queries_do_not_grow_with_the_number_of_agents(teams_data):
    rubric_quality_policy(teams_data)  # a published version's quality policy is read once per process
    with CaptureQueriesContext(connection) as few:
        scorecard(ReportFilters(rubric=teams_data))
    for index in range(6):
        for _ in range(2):
            call(teams_data, f"new-{index}", f"team-{index % 3}", {"c1": 3}, reasons=(AUDIT,), human={"c1": 2})
    with CaptureQueriesContext(connection) as many:
        card = scorecard(ReportFilters(rubric=teams_data))
    assert len(card.rows) == 3 + 2 + 6 + 3  # teams north, south, team-0..2; agents a1..a3, new-0..5
    assert len(many) == len(few)


def test_the_coaching_list_takes_verified_scores_only_and_lists_unverified_ones_apart(teams_data):
    recording = call(teams_data, "a3", "south", {"c1": 1})
    recording.current_run.scores.update(evidence="no lo sé", evidence_verified=False, verification_status="not_found")
    card = agent_card(ReportFilters(rubric=teams_data), "a3")
    c1 = card.criteria[0]
    assert [call.value for call in c1.coaching] == [3, 3, 3, 5]  # lowest first; the unverified 1 is not there
    assert [(call.recording_id, call.value) for call in c1.unverified] == [(recording.pk, 1)]
    flagged = next(call for call in c1.coaching if call.value == 5)
    assert flagged.human.value == 1  # the supervisor's word from the human reference
    assert (card.team, card.agent_name) == ("south", "A3")
    # The unverified score is no value: a3's flagged stratum has the reviewed 5 (human 1) and the new call
    # waiting for a review; the plain one three 3s with the rubric's correction −1.5: (1 + 3 · 1.5) / 4.
    assert (c1.agent.estimate, c1.team.estimate) == (pytest.approx(1.375), pytest.approx(1.375))
    assert (c1.agent.judge_mean, c1.agent.unverified_n, c1.agent.waiting_n) == (3.5, 1, 1)
    assert card.criteria[-1].column.key == "overall" and card.criteria[-1].coaching == []


def test_the_weekly_trend_pools_each_week_like_the_whole_period(teams_data):
    card = agent_card(ReportFilters(rubric=teams_data), "a1")
    (week,) = card.criteria[0].weeks  # every call is on Monday 2 March 2026
    assert week.week.isoformat() == "2026-03-02"
    assert week.agent.estimate == pytest.approx(2.5) and week.agent.correction_level == CorrectionLevel.CELL


def test_an_agent_without_calls_has_no_card(teams_data):
    assert agent_card(ReportFilters(rubric=teams_data), "nobody") is None


def test_a_calibrations_agreed_value_is_the_calls_human_value(teams_data):
    """The human reference's first rule: a closed session's agreed value outranks the review's, and the
    rollup follows it (recording an agreed value marks the call)."""
    lead = UserFactory(username="lead", groups=["QA leads"])
    supervisors = [UserFactory(username=name, groups=["Supervisors"]) for name in ("ana", "ben")]
    flagged = Recording.objects.get(agent_id="a3", review_reasons=[LOW])  # judge 5, the supervisor said 1
    scorecard(ReportFilters(rubric=teams_data))  # the rollup is built
    session = calibration_create(
        name="March", rubric=teams_data, lead=lead, participants=supervisors,
        selection=CallSelection(recording_ids=(flagged.pk,)),
    )  # fmt: skip
    calibration_close(session=session, user=lead)
    agreed_value_set(session=session, recording_id=flagged.pk, criterion_key="c1", value=3, not_applicable=False,
                     note="", user=lead)  # fmt: skip
    a3 = cells(scorecard(ReportFilters(rubric=teams_data)))[("south", "a3")]
    assert a3.estimate == pytest.approx((3 + 3 * 1.5) / 4)  # was (1 + 3 · 1.5) / 4
