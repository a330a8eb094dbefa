import pytest

from qa.errors import InvalidInputError
from qa.models import Recording
from reviews.models import Review, ReviewClaim
from reviews.services import CriterionAdjustment, RecordingNotJudgedError, review_create
from tests.factories import RecordingFactory, judged_recording


@pytest.mark.django_db
def test_review_is_recorded_with_adjustments_and_closes_the_recording(supervisor):
    recording = judged_recording(values={"c1": 4, "c2": 2, "c3": 5}, status=Recording.Status.IN_REVIEW)
    ReviewClaim.objects.create(recording=recording, user=supervisor, expires_at=recording.created_at)

    review = review_create(
        recording=recording,
        decision="approve",
        reviewer="supervisor-1",
        user=supervisor,
        adjusted_mean=3.8,
        criteria=[CriterionAdjustment("c2", adjusted_value=3, comment="Partly met at 02:10")],
    )

    assert review.run_id == recording.current_run_id
    assert [(c.criterion.key, c.adjusted_value) for c in review.criteria.all()] == [("c2", 3)]
    recording.refresh_from_db()
    assert recording.status == Recording.Status.REVIEWED
    assert not ReviewClaim.objects.filter(recording=recording).exists()


@pytest.mark.django_db
def test_needs_review_sends_the_recording_on(supervisor):
    recording = judged_recording(status=Recording.Status.IN_REVIEW)
    review_create(recording=recording, decision="needs_review", reviewer="s1", user=supervisor)
    recording.refresh_from_db()
    assert recording.status == Recording.Status.IN_REVIEW


@pytest.mark.django_db
def test_every_bad_field_is_named_and_nothing_is_stored():
    recording = judged_recording(values={"c1": 4})
    with pytest.raises(InvalidInputError) as caught:
        review_create(
            recording=recording,
            decision="maybe",
            reviewer=" ",
            adjusted_mean=7,
            criteria=[
                CriterionAdjustment("nope", adjusted_value=3),
                CriterionAdjustment("c1", adjusted_value=9, comment="x"),
                CriterionAdjustment("c2", adjusted_value=1),
            ],
        )
    errors = caught.value.errors
    assert set(errors) == {"decision", "reviewer", "adjusted_mean", "criteria"}
    assert set(errors["criteria"]) == {"0", "1", "2"}
    assert "nope" in errors["criteria"]["0"]
    assert "between 1 and 5" in errors["criteria"]["1"]
    assert "comment" in errors["criteria"]["2"]
    assert not Review.objects.exists()


@pytest.mark.django_db
def test_an_unchanged_value_needs_no_comment_and_a_blind_value_neither():
    recording = judged_recording(values={"c1": 4})
    review_create(recording=recording, decision="approve", reviewer="s", criteria=[CriterionAdjustment("c1", 4)])
    review_create(
        recording=recording, decision="approve", reviewer="s", blind=True, criteria=[CriterionAdjustment("c1", 2)]
    )
    assert Review.objects.filter(recording=recording).count() == 2


@pytest.mark.django_db
def test_a_recording_not_judged_yet_cannot_be_reviewed():
    recording = RecordingFactory(status=Recording.Status.QUEUED)
    with pytest.raises(RecordingNotJudgedError):
        review_create(recording=recording, decision="approve", reviewer="s")
    assert not Review.objects.exists()
