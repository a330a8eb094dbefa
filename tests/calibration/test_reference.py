"""The agreed value of a closed calibration session comes first in the human reference."""

from __future__ import annotations

from calibration.selectors import CallSelection
from calibration.services import agreed_value_set, calibration_close, calibration_create
from reviews.reference import HumanReference, human_references
from reviews.services import CriterionAdjustment, review_create


def agree(session, lead, recording, key, value, not_applicable=False):
    agreed_value_set(
        session=session, recording_id=recording.pk, criterion_key=key, value=value, not_applicable=not_applicable,
        note="", user=lead,
    )  # fmt: skip


def test_agreed_values_come_first_then_the_latest_final_review(
    session, lead, supervisors, calls, cal_rubric, django_assert_num_queries
):
    first, second, third, _fourth = calls
    review = review_create(
        recording=first, decision="approve", reviewer="s", criteria=[CriterionAdjustment("c1", 5, comment="x")]
    )
    review_create(recording=second, decision="approve", reviewer="s")
    # An open session's agreed values do not count (they cannot be recorded before close anyway).
    calibration_close(session=session, user=lead)
    agree(session, lead, first, "c1", 2)
    agree(session, lead, third, "c2", None, not_applicable=True)
    # A later session on the same call overrides the earlier one's agreement.
    later = calibration_create(
        name="again", rubric=cal_rubric, lead=lead, participants=supervisors[:2],
        selection=CallSelection(recording_ids=(third.pk,)),
    )  # fmt: skip
    calibration_close(session=later, user=lead)
    agree(later, lead, third, "c2", 4)

    with django_assert_num_queries(2):
        references = human_references(recording_ids=[call.pk for call in calls])
    call_run = session.calls.get(recording=first).run_id
    assert references[(first.pk, "c1")] == HumanReference(2, False, "agreed", None, call_run)
    assert references[(first.pk, "c2")] == HumanReference(3, False, "review", review.pk, first.current_run_id)
    assert references[(second.pk, "c1")].source == "review"
    assert references[(third.pk, "c2")] == HumanReference(4, False, "agreed", None, third.current_run_id)
    assert (third.pk, "c1") not in references  # neither agreed nor reviewed
