"""The deviation figures, checked against values worked out by hand from the
table in conftest.deviation_data. Fractions are written as the hand
computation gives them; Python's float division rounds them the same way."""

from __future__ import annotations

from datetime import date
from fractions import Fraction

import pytest

from qa.models import Recording
from reviews.models import CriterionReview
from reviews.filters import Group, ReportFilters
from insights.reports.selectors import deviation_recordings, deviation_report, deviation_scores
from reviews.figures.stats import Agreement
from rubrics.services import rubric_new_version, rubric_publish
from tests.factories import RecordingFactory, judged_recording
from tests.reports.conftest import APPROVE, AUDIT, add_review, at


def figures(filters: ReportFilters) -> dict[tuple[Group, str], Agreement]:
    report = deviation_report(filters)
    return {(group, row.criterion.key): row.agreement for group, data in report.groups.items() for row in data.criteria}


def test_every_figure_per_group_and_criterion(care_rubric, deviation_data, django_assert_max_num_queries):
    figures(ReportFilters(rubric=care_rubric))  # the first read after the calls changed refreshes the rollup
    # The criteria, the groups, the disputes; whether the rollups are current (asked once); from the weekly
    # rollups, the human ceiling's counts and pairs and the cube.
    with django_assert_max_num_queries(3 + 1 + 2 + 1):
        got = figures(ReportFilters(rubric=care_rubric))
    expected = {
        # c1 audit: r1 (4,4) r2 (3,2) r3 (5,3,R) r9 (3,3). QWK: observed Σ(i-j)² = 0+1+4+0 = 5;
        # marginals model {4:1, 3:2, 5:1}, human {4:1, 2:1, 3:2}: n·expected = 6 + 4 + 18 = 28;
        # kappa = 1 - 5·4/28 = 2/7.
        (Group.RANDOM_AUDIT, "c1"): Agreement(
            4, 15 / 4, 12 / 4, 3 / 4, 3 / 4, 2 / 4, 3 / 4, float(Fraction(2, 7)), 4, 1, 1 / 4, 0
        ),
        # c1 flagged: r3 (5,3,R) r4 (2,2) r5 (1,4). observed 4+0+9 = 13; model {5,2,1}, human {3,2,4}:
        # n·expected = 14 + 5 + 14 = 33; kappa = 1 - 13·3/33 = -2/11.
        (Group.FLAGGED, "c1"): Agreement(
            3, 8 / 3, 9 / 3, -1 / 3, 5 / 3, 1 / 3, 1 / 3, float(Fraction(-2, 11)), 3, 1, 1 / 3, 0
        ),
        # c1 all: r1 r2 r3 r4 r5 r7 (5,5) r9. sums 23 and 23; |diff| 0+1+2+0+3+0+0 = 6;
        # observed 14; model {4:1, 3:2, 5:2, 2:1, 1:1}, human {4:2, 2:2, 3:2, 5:1}:
        # n·expected = 11 + 16 + 56 + 19 + 44 = 146; kappa = 1 - 14·7/146 = 24/73.
        (Group.ALL, "c1"): Agreement(7, 23 / 7, 23 / 7, 0.0, 6 / 7, 4 / 7, 5 / 7, float(Fraction(24, 73)), 7, 1, 1 / 7, 0),
        # c2 audit: r1 (2,2) r2 (1,1) r3 (0,none) r9 (1,1): perfect on 3 pairs with two values -> kappa 1.
        # r3 rejects the call for its c1: its c2, which it did not mark, is not rejected.
        (Group.RANDOM_AUDIT, "c2"): Agreement(3, 4 / 3, 4 / 3, 0.0, 0.0, 1.0, 1.0, 1.0, 4, 0, 0.0, 0),
        # c2 flagged: only r5 (2,2) has a human value: one value on both sides, kappa undefined. r4 marked it wrong.
        (Group.FLAGGED, "c2"): Agreement(1, 2.0, 2.0, 0.0, 0.0, 1.0, 1.0, None, 3, 1, 1 / 3, 0),
        # c2 all: r1 r2 r5 r7 (3,1) r9 with values, r3 r4 without. observed 4; model {2:2, 1:2, 3:1},
        # human {2:2, 1:3}: n·expected = 6 + 4 + 14 = 24; kappa = 1 - 4·5/24 = 1/6.
        (Group.ALL, "c2"): Agreement(5, 9 / 5, 7 / 5, 2 / 5, 2 / 5, 4 / 5, 4 / 5, float(Fraction(1, 6)), 7, 1, 1 / 7, 0),
        # No warm-up recording in the table.
        (Group.WARM_UP, "c1"): Agreement(0, None, None, None, None, None, None, None, 0, 0, None, 0),
        (Group.WARM_UP, "c2"): Agreement(0, None, None, None, None, None, None, None, 0, 0, None, 0),
    }
    assert got == expected


def test_warm_up_reviews_have_their_own_group(care_rubric, deviation_data):
    # w1: warm-up alone; w2: warm-up and drawn by the audit, so in both groups; neither is flagged.
    w1 = judged_recording(rubric=care_rubric, values={"c1": 2, "c2": 1}, review_reasons=["warm_up"], occurred_at=at(2))
    add_review(w1, APPROVE, when=at(3), entries={"c1": {"adjusted_value": 4, "comment": "Better."}})
    w2 = judged_recording(
        rubric=care_rubric, values={"c1": 5, "c2": 2}, review_reasons=["warm_up", AUDIT], occurred_at=at(2)
    )
    add_review(w2, APPROVE, when=at(3))

    got = figures(ReportFilters(rubric=care_rubric))
    groups = deviation_report(ReportFilters(rubric=care_rubric)).groups

    assert (got[(Group.WARM_UP, "c1")].n, got[(Group.WARM_UP, "c1")].model_mean, got[(Group.WARM_UP, "c1")].human_mean) == (
        2, 7 / 2, 9 / 2
    )
    assert (groups[Group.WARM_UP].recordings, groups[Group.RANDOM_AUDIT].recordings, groups[Group.FLAGGED].recordings) == (
        2, 5, 3
    )
    assert {r.recording_id for r in deviation_recordings(ReportFilters(rubric=care_rubric), Group.WARM_UP)} == {w1.pk, w2.pk}


def test_recordings_and_needs_review_per_group(care_rubric, deviation_data):
    groups = deviation_report(ReportFilters(rubric=care_rubric)).groups
    assert {group: (data.recordings, data.needs_review) for group, data in groups.items()} == {
        Group.RANDOM_AUDIT: (4, 0),  # r1 r2 r3 r9 (r8 is not reviewed)
        Group.FLAGGED: (3, 1),  # r3 r4 r5, and r6 waiting for another review
        Group.WARM_UP: (0, 0),
        Group.ALL: (7, 1),
    }


def test_filters_by_team_agent_call_date_and_rubric_version(care_rubric, deviation_data):
    # r10: another team and agent, called late on 20 March (UTC): only it matches those filters.
    r10 = judged_recording(
        rubric=care_rubric,
        values={"c1": 1, "c2": 0},
        review_reasons=[AUDIT],
        team="sales",
        agent_id="a2",
        occurred_at=at(20, 23),
    )
    add_review(r10, APPROVE, when=at(21), entries={"c1": {"adjusted_value": 2, "comment": "Partly."}})

    def all_c1(**narrowing) -> tuple[int, float | None]:
        result = figures(ReportFilters(rubric=care_rubric, **narrowing))[(Group.ALL, "c1")]
        return result.n, result.human_mean

    assert all_c1() == (8, 25 / 8)
    assert all_c1(team="sales") == all_c1(agent="a2") == (1, 2.0)
    assert all_c1(team="support") == (7, 23 / 7)
    assert all_c1(date_from=date(2026, 3, 20), date_to=date(2026, 3, 20)) == (1, 2.0)
    assert all_c1(date_from=date(2026, 3, 21)) == (0, None)
    assert all_c1(date_to=date(2026, 3, 19)) == (7, 23 / 7)  # the fixture's calls are on 1 March
    # A newer version of the rubric has its own criteria and no reviews yet.
    newer = rubric_publish(rubric=rubric_new_version(rubric=care_rubric))
    assert figures(ReportFilters(rubric=newer))[(Group.ALL, "c1")].n == 0


def test_drilldown_rows_carry_human_values_and_comments(care_rubric, deviation_data):
    c1 = care_rubric.criteria.get(key="c1")
    rows = deviation_scores(ReportFilters(rubric=care_rubric), Group.FLAGGED, c1)
    got = {
        row.run.recording.external_id: (row.value, row.human_value, row.is_rejected, row.cr_comment, row.review_comment)
        for row in rows
    }
    assert got == {
        "r3": (5, 3, True, "Half.", "Wrong call."),
        "r4": (2, 2, False, None, ""),
        "r5": (1, 4, False, "Greeted after all.", ""),  # the latest review, not the first
    }


def test_recordings_list_compares_model_mean_of_the_reviewed_run_with_adjusted_mean(care_rubric, deviation_data):
    rows = list(deviation_recordings(ReportFilters(rubric=care_rubric), Group.ALL))
    assert [(row.recording.external_id, row.model_mean, row.adjusted_mean) for row in rows[:2]] == [
        ("r2", 2.0, 3.0),  # |2.0 - 3.0| = 1 first
        ("r7", 4.0, 3.5),
    ]
    assert all(row.adjusted_mean is None for row in rows[2:])
    assert {row.recording.external_id: row.model_mean for row in rows}["r9"] == 2.0  # run A (3, 1), not current (5, 3)
    # r6 (latest review needs_review) and r8 (not reviewed) are not listed.
    assert {row.recording.external_id for row in rows} == {"r1", "r2", "r3", "r4", "r5", "r7", "r9"}
    audited = deviation_recordings(ReportFilters(rubric=care_rubric), Group.RANDOM_AUDIT)
    assert {row.recording.external_id for row in audited} == {"r1", "r2", "r3", "r9"}


def test_a_not_applicable_entry_leaves_its_pair_out_of_the_figures(care_rubric):
    # na: c1 (2, N/A) c2 (1, 1); valued: c1 (4, 4) c2 (1, 1); both random audits, approved.
    na = judged_recording(rubric=care_rubric, values={"c1": 2, "c2": 1}, review_reasons=[AUDIT], external_id="na")
    add_review(na, APPROVE, when=at(10), entries={"c1": {"not_applicable": True, "comment": "Transferred at once."}})
    valued = judged_recording(rubric=care_rubric, values={"c1": 4, "c2": 1}, review_reasons=[AUDIT])
    add_review(valued, APPROVE, when=at(10))
    filters = ReportFilters(rubric=care_rubric)
    c1 = care_rubric.criteria.get(key="c1")

    got = figures(filters)
    # c1: one pair, (4, 4); the N/A entry is reviewed, neither a pair nor a rejection, but a dispute:
    # the judge gave it a 2.
    assert got[(Group.RANDOM_AUDIT, "c1")] == Agreement(1, 4.0, 4.0, 0.0, 0.0, 1.0, 1.0, None, 2, 0, 0.0, 1)
    assert got[(Group.RANDOM_AUDIT, "c2")].n == 2  # only c1 was marked
    rows = deviation_scores(filters, Group.RANDOM_AUDIT, c1)
    assert {row.run.recording.external_id: (row.human_value, row.is_rejected) for row in rows}["na"] == (None, False)

    # The same entry with a value instead is a pair: (2, 5) and (4, 4), |diff| 3 + 0, one of two equal.
    CriterionReview.objects.filter(not_applicable=True).update(not_applicable=False, adjusted_value=5)
    Recording.objects.filter(pk=na.pk).update(rollup_stale=True)  # as every change of a review marks its call
    with_value = figures(filters)[(Group.RANDOM_AUDIT, "c1")]
    assert (with_value.n, with_value.human_mean, with_value.mae, with_value.exact_agreement) == (2, 9 / 2, 3 / 2, 1 / 2)


def test_a_reject_rejects_only_the_criteria_it_says_the_judge_got_wrong(care_rubric):
    from reviews.services import CriterionAdjustment, review_create

    call = judged_recording(rubric=care_rubric, values={"c1": 4, "c2": 2}, review_reasons=[AUDIT], occurred_at=at(2))
    review_create(
        recording=call, decision="reject", reviewer="sup",
        criteria=[CriterionAdjustment(criterion_key="c1", adjusted_value=2, comment="No name given.")],
    )  # fmt: skip
    got = figures(ReportFilters(rubric=care_rubric))
    # c1 was given another value: rejected. c2 the supervisor left as the judge said: not rejected, not 100%.
    assert (got[(Group.ALL, "c1")].rejected, got[(Group.ALL, "c1")].rejection_rate) == (1, 1.0)
    assert (got[(Group.ALL, "c2")].rejected, got[(Group.ALL, "c2")].rejection_rate) == (0, 0.0)


@pytest.mark.django_db
def test_the_groups_of_a_calls_reasons_are_those_the_sql_condition_gives():
    """The cube groups by the call's reasons and works out their groups in Python: the same groups as
    `in_review_group`, for every reason alone and for every pair."""
    from itertools import combinations

    from qa.models import Recording
    from qa.routing import Reason, ReviewGroup, in_review_group
    from insights.reports.selectors import _groups_of_reasons

    sets = [[], *([reason] for reason in Reason.values), *(list(pair) for pair in combinations(Reason.values, 2))]
    recordings = [RecordingFactory(review_reasons=reasons) for reasons in sets]
    for group in ReviewGroup:
        found = Recording.objects.filter(in_review_group(group), pk__in=[r.pk for r in recordings])
        in_sql = set(found.values_list("pk", flat=True))
        pairs = zip(recordings, sets, strict=True)
        in_python = {r.pk for r, reasons in pairs if Group(group) in _groups_of_reasons(reasons)}
        assert in_python == in_sql, group
    assert all(_groups_of_reasons(reasons)[0] == Group.ALL for reasons in sets)


def test_the_cubes_planner_settings_do_not_outlast_it(care_rubric, deviation_data):
    """The cube is grouped with sorting off and more work memory (`_hashed`), and the first read refreshes the
    rollups from the calls with more work memory too (`insights.scorecards.moments._rows`); the caller's
    transaction, the test's here, goes on with the settings it had."""
    from django.db import connection

    def settings() -> tuple[str, str]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('enable_sort'), current_setting('work_mem')")
            return cursor.fetchone()

    before = settings()
    deviation_report(ReportFilters(rubric=care_rubric))
    assert settings() == before == ("on", before[1])
