import pytest

from core.errors import InvalidInputError
from qa.models import Recording
from reviews.models import CriterionReview, Review, ReviewClaim
from reviews.services import CriterionAdjustment, RecordingNotJudgedError, review_create
from rubrics.models import CriterionException
from rubrics.services import rubric_publish
from tests.factories import (
    CriterionExceptionFactory,
    CriterionFactory,
    RecordingFactory,
    RubricFactory,
    judged_recording,
    published_rubric,
)


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
        recording=recording, decision="approve", reviewer="s", blind=True, criteria=[CriterionAdjustment("c1", 2)],
        replace_final=True,
    )
    assert Review.objects.filter(recording=recording).count() == 2


@pytest.mark.django_db
def test_a_recording_not_judged_yet_cannot_be_reviewed():
    recording = RecordingFactory(status=Recording.Status.QUEUED)
    with pytest.raises(RecordingNotJudgedError):
        review_create(recording=recording, decision="approve", reviewer="s")
    assert not Review.objects.exists()


def review(recording: Recording, *criteria: CriterionAdjustment, blind: bool = False) -> Review:
    return review_create(recording=recording, decision="approve", reviewer="s", blind=blind, criteria=criteria)


@pytest.mark.django_db
def test_not_applicable_is_stored_for_a_criterion_with_that_exception():
    recording = judged_recording(values={"c1": 4}, rubric=published_rubric(not_applicable=("c1",)))
    [entry] = review(recording, CriterionAdjustment("c1", not_applicable=True), blind=True).criteria.all()
    assert (entry.criterion.key, entry.adjusted_value, entry.not_applicable) == ("c1", None, True)


@pytest.mark.django_db
def test_not_applicable_is_refused_where_the_rubric_has_no_such_exception_and_nothing_is_stored():
    draft = RubricFactory()
    CriterionFactory(rubric=draft, key="c1", title="Greets the customer")
    other = CriterionFactory(rubric=draft, key="c2", title="Confirms the address")
    CriterionExceptionFactory(criterion=other, outcome=CriterionException.Outcome.MET)  # an exception, not this one
    recording = judged_recording(values={"c1": 4}, rubric=rubric_publish(rubric=draft))
    with pytest.raises(InvalidInputError) as caught:
        review(
            recording,
            CriterionAdjustment("c1", not_applicable=True),
            CriterionAdjustment("c2", not_applicable=True),
            blind=True,
        )
    messages = caught.value.errors["criteria"]
    assert set(messages) == {"0", "1"}
    # Named by title, as a person reads them, never by the internal key.
    assert "“Greets the customer” cannot be marked not applicable" in messages["0"]
    assert "“Confirms the address” cannot be marked not applicable" in messages["1"]
    assert not Review.objects.exists() and not CriterionReview.objects.exists()


@pytest.mark.django_db
def test_a_value_and_not_applicable_together_are_refused():
    recording = judged_recording(values={"c1": 4}, rubric=published_rubric(not_applicable=("c1",)))
    with pytest.raises(InvalidInputError) as caught:
        review(recording, CriterionAdjustment("c1", adjusted_value=2, not_applicable=True), blind=True)
    assert caught.value.errors == {"criteria": {"0": "“Criterion 1” has a value and is marked not applicable: choose one."}}
    assert not Review.objects.exists()


@pytest.mark.django_db
def test_not_applicable_over_a_model_number_needs_a_comment_outside_blind_mode():
    recording = judged_recording(values={"c1": 4, "c2": 4}, rubric=published_rubric(not_applicable=("c1", "c2")))
    recording.current_run.scores.filter(criterion__key="c2").update(value=None)
    with pytest.raises(InvalidInputError) as caught:
        review(recording, CriterionAdjustment("c1", not_applicable=True), CriterionAdjustment("c2", not_applicable=True))
    # c2 agrees with the model's own "not applicable": nothing changed, no comment needed.
    assert caught.value.errors == {"criteria": {"0": "Marking “Criterion 1” not applicable needs a comment saying why."}}
    assert not Review.objects.exists()

    review(recording, CriterionAdjustment("c1", not_applicable=True, comment="The customer hung up at once."))
    assert CriterionReview.objects.get().not_applicable


class TestRejectSaysWhatWasWrong:
    """A reject must mark at least one criterion wrong or changed, with its comment; the API shares the rule."""

    pytestmark = pytest.mark.django_db

    def reject(self, recording: Recording, *criteria: CriterionAdjustment, **fields) -> Review:
        return review_create(
            recording=recording, decision="reject", reviewer="s", criteria=criteria, replace_final=True, **fields
        )

    @pytest.mark.parametrize(
        "criteria",
        [
            (),
            (CriterionAdjustment("c1", comment="Not sure about this one."),),  # a comment marks nothing
            (CriterionAdjustment("c1", rejected=True),),  # marked wrong, but no reason given
            (CriterionAdjustment("c1", adjusted_value=4, comment="Same as the model."),),  # no change
        ],
    )
    def test_a_reject_that_marks_nothing_with_a_reason_is_refused_and_stores_nothing(self, criteria):
        recording = judged_recording(values={"c1": 4})
        with pytest.raises(InvalidInputError) as caught:
            self.reject(recording, *criteria)
        assert "A reject must say what was wrong" in caught.value.errors["decision"]
        assert not Review.objects.exists()

    def test_a_criterion_marked_wrong_or_changed_with_a_comment_is_enough(self):
        recording = judged_recording(values={"c1": 4, "c2": 4})
        self.reject(recording, CriterionAdjustment("c1", rejected=True, comment="The quote is from the customer."))
        self.reject(recording, CriterionAdjustment("c2", adjusted_value=2, comment="Only partly met."))
        assert Review.objects.filter(decision="reject").count() == 2

    def test_the_overall_reason_is_stored_and_only_a_reject_may_have_one(self):
        recording = judged_recording(values={"c1": 4})
        marked = CriterionAdjustment("c1", rejected=True, comment="Paraphrase.")
        review = self.reject(recording, marked, reject_reason="unsupported_quote")
        assert review.get_reject_reason_display() == "The quote doesn't support the score"
        with pytest.raises(InvalidInputError) as caught:
            review_create(
                recording=recording, decision="approve", reviewer="s", reject_reason="wrong_score", replace_final=True
            )
        assert caught.value.errors == {"reject_reason": "Only a reject has a reject reason."}
        with pytest.raises(InvalidInputError) as caught:
            self.reject(recording, marked, reject_reason="bored")
        assert "Unknown reject reason 'bored'" in caught.value.errors["reject_reason"]
        assert Review.objects.count() == 1
