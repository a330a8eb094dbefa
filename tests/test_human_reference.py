"""The human reference (docs/dev/design.md): what a supervisor stands behind, per recording and criterion."""

from datetime import timedelta

import pytest

from qa.models import Recording
from calibration.selectors import CallSelection
from calibration.services import agreed_value_set, calibration_close, calibration_create
from reviews.models import Review
from reviews.reference import HumanReference, human_reference_rows, human_references
from reviews.services import CriterionAdjustment, review_create
from tests.factories import UserFactory, judged_recording, published_rubric


def _review(recording, decision, *criteria, at=None, reviewer="s1", comment=""):
    review = review_create(
        recording=recording, decision=decision, reviewer=reviewer, criteria=list(criteria), comment=comment,
        replace_final=True,  # these tests stack reviews on purpose, as "start a new review" does
    )
    if at is not None:  # reviews are append-only; tests place them in time directly
        Review.objects.filter(pk=review.pk).update(created_at=at)
    return review


def _values(references, recording):
    return {
        key: ("N/A" if reference.not_applicable else reference.value)
        for (recording_id, key), reference in references.items()
        if recording_id == recording.pk
    }


@pytest.mark.django_db
def test_approval_stands_behind_the_judges_values_and_adjustments_replace_them():
    recording = judged_recording(values={"c1": 4, "c2": 2, "c3": 5}, status=Recording.Status.IN_REVIEW)
    review = _review(recording, "approve", CriterionAdjustment("c2", adjusted_value=3, comment="Partly met"))

    references = human_references(recording_ids=[recording.pk])

    assert _values(references, recording) == {"c1": 4, "c2": 3, "c3": 5}
    assert references[(recording.pk, "c1")] == HumanReference(
        value=4, not_applicable=False, source="review", review_id=review.pk, run_id=recording.current_run_id
    )


@pytest.mark.django_db
def test_a_reject_gives_only_the_values_the_supervisor_set_and_marked_wrong_criteria_have_none():
    recording = judged_recording(values={"c1": 4, "c2": 2, "c3": 5}, status=Recording.Status.IN_REVIEW)
    _review(
        recording,
        "reject",
        CriterionAdjustment("c1", adjusted_value=1, rejected=True, comment="Never greeted"),
        CriterionAdjustment("c3", rejected=True, comment="Wrong quote"),
    )
    assert _values(human_references(recording_ids=[recording.pk]), recording) == {"c1": 1}

    approved = judged_recording(values={"c1": 4, "c2": 2, "c3": 5}, status=Recording.Status.IN_REVIEW)
    _review(approved, "approve", CriterionAdjustment("c2", rejected=True, comment="Not what was said"))
    assert _values(human_references(recording_ids=[approved.pk]), approved) == {"c1": 4, "c3": 5}


@pytest.mark.django_db
def test_not_applicable_is_a_reference_but_never_a_number():
    rubric = published_rubric(not_applicable=("c1", "c2"))
    recording = judged_recording(rubric=rubric, values={"c1": 4, "c2": None, "c3": 5}, status=Recording.Status.IN_REVIEW)
    _review(recording, "approve", CriterionAdjustment("c1", not_applicable=True, comment="Transferred at once"))

    references = human_references(recording_ids=[recording.pk])

    # c1: the supervisor's N/A over the judge's 4; c2: the judge's N/A, approved as it was.
    assert _values(references, recording) == {"c1": "N/A", "c2": "N/A", "c3": 5}
    assert references[(recording.pk, "c1")].value is None


@pytest.mark.django_db
def test_the_latest_final_review_counts_and_a_later_needs_review_does_not_replace_it():
    recording = judged_recording(values={"c1": 4, "c2": 2, "c3": 5}, status=Recording.Status.IN_REVIEW)
    start = recording.created_at
    _review(recording, "approve", CriterionAdjustment("c1", adjusted_value=2, comment="a"), at=start)
    latest = _review(recording, "approve", CriterionAdjustment("c1", adjusted_value=3, comment="b"), at=start + timedelta(minutes=1))
    _review(recording, "needs_review", at=start + timedelta(minutes=2))

    references = human_references(recording_ids=[recording.pk])

    assert _values(references, recording) == {"c1": 3, "c2": 2, "c3": 5}
    assert {reference.review_id for reference in references.values()} == {latest.pk}


@pytest.mark.django_db
def test_only_the_asked_recordings_and_only_reviewed_ones_in_two_queries(django_assert_num_queries):
    rubric = published_rubric()
    reviewed = [judged_recording(rubric=rubric, values={"c1": n, "c2": 3, "c3": 3}) for n in (1, 2, 5)]
    for recording in reviewed:
        _review(recording, "approve")
    pending = judged_recording(rubric=rubric, values={"c1": 4, "c2": 4, "c3": 4})
    _review(pending, "needs_review")
    unreviewed = judged_recording(rubric=rubric)

    with django_assert_num_queries(2):  # the reviews, and the agreed values of calibration sessions
        references = human_references(recording_ids=[reviewed[0].pk, reviewed[2].pk, pending.pk, unreviewed.pk])

    assert {recording_id for recording_id, _ in references} == {reviewed[0].pk, reviewed[2].pk}
    assert _values(references, reviewed[2]) == {"c1": 5, "c2": 3, "c3": 3}


def _references_from_rows(rows):
    return {
        (row["recording_id"], row["criterion_key"]): HumanReference(
            value=row["human_value"],
            not_applicable=bool(row["human_not_applicable"]),
            source=row["source"],
            review_id=row["review_id"],
            run_id=row["reference_run_id"],
        )
        for row in rows
    }


@pytest.mark.django_db
def test_the_sql_form_gives_the_same_references_as_the_python_one():
    """human_reference_rows (counted in the database by the experiments) against human_references,
    over every rule: approvals, adjustments, rejects, marked-wrong criteria, both kinds of N/A,
    superseded and non-final reviews, and agreed values of closed sessions, the latest first."""
    rubric = published_rubric(not_applicable=("c1", "c2"))
    lead = UserFactory(username="lead", groups=["QA leads"])
    supervisors = [UserFactory(username=name, groups=["Supervisors"]) for name in ("ana", "ben")]
    values = {"c1": 4, "c2": None, "c3": 5}
    adjusted, rejected, marked_wrong, not_applicable, superseded, pending, unreviewed, agreed = (
        judged_recording(rubric=rubric, values=values, status=Recording.Status.IN_REVIEW) for _ in range(8)
    )
    _review(adjusted, "approve", CriterionAdjustment("c3", adjusted_value=3, comment="Partly met"))
    _review(rejected, "reject", CriterionAdjustment("c1", adjusted_value=1, rejected=True, comment="No"),
            CriterionAdjustment("c3", rejected=True, comment="Wrong quote"))  # fmt: skip
    _review(marked_wrong, "approve", CriterionAdjustment("c3", rejected=True, comment="Not said"))
    _review(not_applicable, "approve", CriterionAdjustment("c1", not_applicable=True, comment="Transferred"))
    start = superseded.created_at
    _review(superseded, "approve", CriterionAdjustment("c1", adjusted_value=2, comment="a"), at=start)
    later = start + timedelta(minutes=1)
    _review(superseded, "reject", CriterionAdjustment("c1", adjusted_value=3, comment="b"), at=later)
    _review(superseded, "needs_review", at=start + timedelta(minutes=2))
    _review(pending, "needs_review")
    _review(agreed, "approve")
    sessions = (
        ("first", [(agreed, "c1", 2, False), (agreed, "c3", 1, False), (adjusted, "c2", None, True),
                   (unreviewed, "c1", 5, False)]),
        ("second", [(agreed, "c3", 4, False), (adjusted, "c1", None, True)]),
    )  # fmt: skip
    for name, agreements in sessions:
        session = calibration_create(
            name=name, rubric=rubric, lead=lead, participants=supervisors,
            selection=CallSelection(recording_ids=tuple(sorted({call.pk for call, *_ in agreements}))),
        )  # fmt: skip
        calibration_close(session=session, user=lead)
        for call, key, value, is_not_applicable in agreements:
            agreed_value_set(session=session, recording_id=call.pk, criterion_key=key, value=value,
                             not_applicable=is_not_applicable, note="", user=lead)  # fmt: skip
    asked = [
        call.pk for call in (adjusted, rejected, marked_wrong, not_applicable, superseded, pending, unreviewed, agreed)
    ]

    python_form = human_references(recording_ids=asked)
    sql_form = _references_from_rows(human_reference_rows(recording_ids=asked))

    assert sql_form == python_form
    # The fixtures do exercise every rule (a vacuous agreement would prove nothing).
    assert _values(python_form, agreed) == {"c1": 2, "c2": "N/A", "c3": 4}  # the later session's c3
    assert _values(python_form, adjusted) == {"c1": "N/A", "c2": "N/A", "c3": 3}
    assert _values(python_form, rejected) == {"c1": 1}
    assert _values(python_form, marked_wrong) == {"c1": 4, "c2": "N/A"}
    assert _values(python_form, superseded) == {"c1": 3}
    assert _values(python_form, unreviewed) == {"c1": 5} and not _values(python_form, pending)
    # Asked by a subquery, as the experiments ask, the same rows come back.
    subquery = Recording.objects.filter(pk__in=asked).values("pk")
    assert _references_from_rows(human_reference_rows(recording_ids=subquery)) == python_form
