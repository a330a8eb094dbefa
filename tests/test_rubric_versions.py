import pytest

from rubrics.models import Criterion, CriterionException, Rubric, RubricFrozenError
from rubrics.services import rubric_new_version, rubric_publish
from tests.factories import CriterionExceptionFactory, CriterionFactory, RubricFactory


@pytest.mark.django_db
def test_publishing_freezes_rubric_criteria_and_exceptions():
    criterion = CriterionFactory(rubric=RubricFactory(slug="care"))
    exception = CriterionExceptionFactory(criterion=criterion)
    rubric_publish(rubric=criterion.rubric)

    criterion.refresh_from_db()
    criterion.title = "Changed"
    with pytest.raises(RubricFrozenError):
        criterion.save()
    with pytest.raises(RubricFrozenError):
        criterion.delete()
    with pytest.raises(RubricFrozenError):
        exception.save()
    with pytest.raises(RubricFrozenError):
        CriterionFactory(rubric=criterion.rubric)
    assert Criterion.objects.get(pk=criterion.pk).title != "Changed"


@pytest.mark.django_db
def test_a_stale_copy_of_a_draft_cannot_overwrite_the_published_version():
    rubric = CriterionFactory().rubric
    stale = Rubric.objects.get(pk=rubric.pk)
    rubric_publish(rubric=rubric)
    stale.name = "Overwritten"
    with pytest.raises(RubricFrozenError):
        stale.save()


@pytest.mark.django_db
def test_new_version_clones_into_a_draft_and_publishing_it_archives_the_old_one():
    criterion = CriterionFactory(rubric=RubricFactory(slug="care"), key="greets")
    CriterionExceptionFactory(criterion=criterion, text="Transferred", outcome=CriterionException.Outcome.MET)
    v1 = rubric_publish(rubric=criterion.rubric)

    v2 = rubric_new_version(rubric=v1)
    assert (v2.slug, v2.version, v2.status) == ("care", 2, Rubric.Status.DRAFT)
    cloned = v2.criteria.get()
    assert cloned.key == "greets" and cloned.pk != criterion.pk
    assert [(e.text, e.outcome) for e in cloned.exceptions.all()] == [("Transferred", "met")]

    with pytest.raises(RubricFrozenError):
        rubric_new_version(rubric=v1)  # one draft per slug at a time

    rubric_publish(rubric=v2)
    v1.refresh_from_db()
    assert v1.status == Rubric.Status.ARCHIVED


@pytest.mark.django_db
def test_publishing_needs_criteria_and_a_draft():
    empty = RubricFactory()
    with pytest.raises(RubricFrozenError):
        rubric_publish(rubric=empty)
    published = rubric_publish(rubric=CriterionFactory().rubric)
    with pytest.raises(RubricFrozenError):
        rubric_publish(rubric=published)
