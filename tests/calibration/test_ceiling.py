"""The human ceiling in the deviation report: human–human agreement beside the judge's."""

from __future__ import annotations

from fractions import Fraction

from rest_framework.test import APIClient

from calibration.services import agreed_value_set, calibration_close
from reviews.filters import ReportFilters
from insights.reports.selectors import deviation_report
from reviews.figures.stats import quadratic_weighted_kappa
from reviews.services import CriterionAdjustment, review_create
from tests.calibration.conftest import score
from tests.factories import judged_recording
from tests.review.conftest import client_for


def by_key(ceilings):
    return {row.criterion.key: row for row in ceilings}


def test_the_judge_exactly_at_the_ceiling(session, lead, supervisors, calls, cal_rubric):
    ana, ben, _eva = supervisors
    # The judge gave c1 = 1, 2, 3, 4. Ana says the same; Ben swaps the first two, and his values are agreed.
    for call, a, b in zip(calls, (1, 2, 3, 4), (2, 1, 3, 4)):
        score(session, ana, call, a)
        score(session, ben, call, b)
    calibration_close(session=session, user=lead)
    for call, value in zip(calls, (2, 1, 3, 4)):
        agreed_value_set(
            session=session, recording_id=call.pk, criterion_key="c1", value=value, not_applicable=False, note="",
            user=lead,
        )  # fmt: skip

    c1 = by_key(deviation_report(ReportFilters(rubric=cal_rubric)).ceiling)["c1"]
    # Judge vs agreed and Ana vs Ben are the same four pairs: (1,2) (2,1) (3,3) (4,4).
    same_pairs = quadratic_weighted_kappa({(1, 2): 1, (2, 1): 1, (3, 3): 1, (4, 4): 1})
    assert (c1.judge_human_qwk, c1.judge_human_n, c1.agreed_n) == (same_pairs, 4, 4)
    assert (c1.human_human_qwk, c1.human_human_n) == (same_pairs, 4)
    assert c1.degradation == 0
    assert c1.reading == "The judge agrees with supervisors as well as they agree with each other."

    body = client_for(lead).get("/api/reports/deviation/", {"rubric": "care"}).json()
    ceiling = {row["criterion_key"]: row for row in body["ceiling"]}
    assert ceiling["c1"] == {
        "criterion_key": "c1", "judge_human_qwk": same_pairs, "judge_human_n": 4, "agreed_n": 4,
        "human_human_qwk": same_pairs, "human_human_n": 4, "degradation": 0.0,
        "reading": "The judge agrees with supervisors as well as they agree with each other.",
    }  # fmt: skip


def test_no_human_human_data_is_shown_as_such_not_as_zero(cal_rubric, supervisors, lead):
    ana = supervisors[0]
    for value in (1, 3, 5):
        recording = judged_recording(rubric=cal_rubric, values={"c1": value, "c2": 3})
        review_create(recording=recording, decision="approve", reviewer="ana", user=ana)
    c1 = by_key(deviation_report(ReportFilters(rubric=cal_rubric)).ceiling)["c1"]
    assert (c1.judge_human_qwk, c1.judge_human_n) == (1.0, 3)
    assert (c1.human_human_qwk, c1.human_human_n, c1.degradation) == (None, 0, None)
    assert c1.reading.startswith("No human–human data yet")

    api = APIClient()
    api.force_authenticate(lead)
    row = api.get("/api/reports/deviation/", {"rubric": "care"}).json()["ceiling"][0]
    assert (row["human_human_qwk"], row["human_human_n"], row["degradation"]) == (None, 0, None)
    html = client_for(lead).get("/reports/deviation/", {"rubric": "care"}).content.decode()
    section = html.split('id="ceiling"')[1].split("</section>")[0]
    c1_row = section.split('data-criterion="c1"')[1].split("</tr>")[0]
    assert "No human–human data yet" in c1_row and "0.00" not in c1_row.replace("1.00", "")


def test_independent_reviews_count_and_a_review_that_saw_the_first_does_not(cal_rubric, supervisors):
    ana, ben, eva = supervisors
    values = [(2, 3), (4, 4), (5, 3)]  # (ana, ben) on three calls; the judge gave 3 on each
    for a, b in values:
        recording = judged_recording(rubric=cal_rubric, values={"c1": 3, "c2": 3})
        # Ana reviews first (she saw the judge, not another human); Ben audits blind later.
        review_create(
            recording=recording, decision="approve", reviewer="ana", user=ana,
            criteria=[CriterionAdjustment("c1", a, comment="mine")] if a != 3 else [],
        )  # fmt: skip
        review_create(
            recording=recording, decision="approve", reviewer="ben", user=ben, blind=True, replace_final=True,
            criteria=[CriterionAdjustment("c1", b), CriterionAdjustment("c2", 3)],
        )  # fmt: skip
        # Eva reviews after seeing both: not independent, left out.
        review_create(
            recording=recording, decision="approve", reviewer="eva", user=eva, replace_final=True,
            criteria=[CriterionAdjustment("c1", 1, comment="saw theirs")],
        )  # fmt: skip
    c1 = by_key(deviation_report(ReportFilters(rubric=cal_rubric)).ceiling)["c1"]
    pairs = {(2, 3): 1, (3, 2): 1, (4, 4): 2, (5, 3): 1, (3, 5): 1}
    assert (c1.human_human_n, c1.human_human_qwk) == (3, quadratic_weighted_kappa(pairs))
    # The judge is compared with the latest review (Eva's 1 everywhere): a constant judge against a constant
    # human, so QWK 0, below the supervisors' own agreement.
    assert (c1.judge_human_n, c1.judge_human_qwk) == (3, 0.0)
    assert c1.degradation == -c1.human_human_qwk
    assert c1.reading.endswith(f"{c1.human_human_qwk:.2f} below how well they agree with each other.")


def test_the_reading_says_how_far_below_the_ceiling_the_judge_is(session, lead, supervisors, calls, cal_rubric):
    ana, ben, _eva = supervisors
    for call, a, b in zip(calls, (1, 2, 3, 4), (1, 2, 3, 4)):
        score(session, ana, call, a)
        score(session, ben, call, b)
    calibration_close(session=session, user=lead)
    for call, value in zip(calls, (1, 3, 2, 4)):  # the judge's 2 and 3 are swapped against the agreed values
        agreed_value_set(
            session=session, recording_id=call.pk, criterion_key="c1", value=value, not_applicable=False, note="",
            user=lead,
        )  # fmt: skip
    c1 = by_key(deviation_report(ReportFilters(rubric=cal_rubric)).ceiling)["c1"]
    judge = 1 - Fraction(2 * 4, sum((a - b) ** 2 for a in (1, 2, 3, 4) for b in (1, 2, 3, 4)))
    assert c1.human_human_qwk == 1.0 and c1.judge_human_qwk == float(judge)
    gap = f"{1 - float(judge):.2f}"
    assert c1.reading == f"The judge agrees with supervisors {gap} below how well they agree with each other."
