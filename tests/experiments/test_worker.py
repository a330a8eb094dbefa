"""An experiment run by a real `celery worker` on Redis, against the fake LLM,
with the production retry rules and a duplicated message."""

from __future__ import annotations

import time

import pytest

from experiments.models import Experiment, Item
from experiments.selectors import experiment_comparison
from experiments.services import ArmSpec, experiment_create
from experiments.tasks import item_run
from rubrics.models import Rubric
from rubrics.services import rubric_new_version
from tests.judge.test_worker import _worker
from tests.support.fake_openai import error

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(fake_llm):
    yield from _worker(fake_llm)


def test_a_worker_runs_an_experiment_with_retries_and_duplicates(reviewed, fake_llm, worker):
    rubric_new_version(rubric=Rubric.objects.get(slug="care"))
    fake_llm.script(error(503, "busy"))

    experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec(rubric_version=2)], limit=8, seed=5)
    item_run.delay(Item.objects.filter(arm__experiment=experiment).first().pk)  # a duplicated message
    deadline = time.monotonic() + 90
    while Experiment.objects.get(pk=experiment.pk).is_active:
        assert worker.poll() is None, "the worker exited"
        assert time.monotonic() < deadline, "the worker did not finish in time"
        time.sleep(0.2)

    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.FINISHED
    items = Item.objects.filter(arm__experiment=experiment)
    assert set(items.values_list("status", flat=True)) == {Item.Status.SUCCEEDED}
    assert items.filter(attempts=2).count() == 1  # the one that met the 503, retried with backoff
    assert len(fake_llm.requests) == 8 + 1
    comparison = experiment_comparison(experiment)
    assert comparison.progress.done == 8 and {d.verdict for d in comparison.deltas} == {"better"}
