"""An experiment tests its draft as it was when the experiment was created: each
worker process builds that question once (a draft costs what a published
version costs), a draft edited since is never judged nor published on the
experiment's word."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from qa import execution, judging
from core.errors import InvalidInputError
from experiments.models import Experiment, Item, Promotion
from experiments.services import ArmSpec, experiment_create, experiment_promote, item_execute
from rubrics.models import Criterion, Rubric
from rubrics.services import rubric_new_version
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

CHANGED = "the draft changed after the experiment was created; create a new experiment"


@pytest.fixture
def draft(reviewed):
    return rubric_new_version(rubric=Rubric.objects.get(slug="care"))


@pytest.fixture(autouse=True)
def fresh_process():
    """Forget what this process cached about rubric versions, as a newly started worker would have."""

    def forget():
        judging._question.cache_clear()
        judging._question_as_created.cache_clear()
        execution._frozen_rubrics.clear()
        execution._bound_drafts.clear()

    forget()
    yield forget
    forget()


def items_of(experiment: Experiment, version: int) -> list[int]:
    return list(
        Item.objects.filter(arm__experiment=experiment, arm__rubric__version=version).values_list("pk", flat=True)
    )


def run_all(item_ids: list[int], django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):  # the settle after each item's commit
        for item_id in item_ids:
            item_execute(item_id=item_id)


def test_the_draft_question_is_built_once_per_process_and_costs_what_a_published_one_costs(
    draft, fake_llm, monkeypatch
):
    experiment = experiment_create(
        rubric_slug="care", candidates=[ArmSpec(rubric_version=1), ArmSpec(rubric_version=2)], publish=False
    )
    published, drafted = items_of(experiment, 1), items_of(experiment, 2)
    built, original = [], judging._question_build

    def counting(rubric, shape):
        built.append(rubric.version)
        return original(rubric, shape)

    monkeypatch.setattr(judging, "_question_build", counting)

    queries = {}
    for version, item_ids in ((1, published), (2, drafted)):
        item_execute(item_id=item_ids[0])  # the process's first item of the arm builds its question
        with CaptureQueriesContext(connection) as captured:
            for item_id in item_ids[1:11]:
                item_execute(item_id=item_id)
        queries[version] = len(captured)

    assert built == [1, 2]  # once per arm for 11 items each
    assert queries[2] == queries[1]  # the draft's criteria and rubric row are not read again
    assert Item.objects.filter(status=Item.Status.SUCCEEDED).count() == 22
    arm = experiment.arms.get(rubric=draft)
    assert set(arm.items.filter(status="succeeded").values_list("prompt_version", flat=True)) == {arm.prompt_version}


def test_a_draft_edited_after_creation_fails_the_items_left_and_cannot_be_published(
    draft, fake_llm, fresh_process, django_capture_on_commit_callbacks
):
    experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec(rubric_version=2)], publish=False)
    item_ids = items_of(experiment, 2)
    run_all(item_ids[:10], django_capture_on_commit_callbacks)

    criterion = Criterion.objects.get(rubric=draft, key="c1")
    criterion.description = "The agent greets the customer by name within the first ten seconds."
    criterion.save()
    run_all(item_ids[10:15], django_capture_on_commit_callbacks)  # this process keeps asking the question it built
    requests = len(fake_llm.requests)
    fresh_process()  # a worker started after the edit
    run_all(item_ids[15:], django_capture_on_commit_callbacks)

    assert len(fake_llm.requests) == requests  # the edited draft was never asked
    items = Item.objects.filter(pk__in=item_ids)
    assert items.filter(status=Item.Status.SUCCEEDED).count() == 15
    failed = list(items.filter(status=Item.Status.FAILED))
    assert len(failed) == 15 and all(CHANGED in item.error for item in failed)
    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.FINISHED

    arm = experiment.arms.get(order=1)
    with pytest.raises(InvalidInputError, match="no longer asks the question this experiment tested"):
        experiment_promote(experiment=experiment, arm=arm, action="publish_rubric", user=UserFactory())
    assert Rubric.objects.get(pk=draft.pk).is_draft and not Promotion.objects.exists()


def test_an_unchanged_draft_is_published_and_its_prompt_version_shows(
    draft, fake_llm, fresh_process, client, django_capture_on_commit_callbacks
):
    experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec(rubric_version=2)], publish=False)
    run_all(items_of(experiment, 2), django_capture_on_commit_callbacks)
    fresh_process()
    experiment.refresh_from_db()
    arm = experiment.arms.get(order=1)
    owner = UserFactory(groups=["Rubric owners"])
    client.force_login(owner)

    assert f"<code>{arm.prompt_version}</code>" in client.get(f"/experiments/{experiment.pk}/").content.decode()
    experiment_promote(experiment=experiment, arm=arm, action="publish_rubric", user=owner)
    assert Rubric.objects.get(pk=draft.pk).status == Rubric.Status.PUBLISHED
