from __future__ import annotations

import json

import pytest

from experiments.services import ArmSpec, experiment_create
from tests.api.conftest import key_client, new_key
from tests.experiments.conftest import reviewed  # noqa: F401  (the fixture: 30 reviewed recordings)
from tests.support.fake_openai import error
from webhooks.services import subscription_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


def test_a_finished_experiment_arrives_as_the_api_gives_it(
    reviewed, fake_llm, receiver, settings, django_capture_on_commit_callbacks  # noqa: F811
):
    settings.QA_PUBLIC_URL = "http://testserver"
    subscription_create(url=receiver.url, events=["experiment.finished"])
    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec()], limit=5)

    [request] = receiver.requests  # one event for the experiment, none for its items' judgments
    body = json.loads(request.body)
    assert (body["event"], body["recording"]) == ("experiment.finished", None)
    _api_key, key = new_key("owner-tool", can_run_experiments=True)
    api = key_client(key).get(f"/api/experiments/{experiment.pk}/").json()
    assert body["data"] == api and api["status"] == "finished" and api["progress"]["done"] == 5


def test_a_failed_experiment_is_told_too(reviewed, fake_llm, receiver, django_capture_on_commit_callbacks):  # noqa: F811
    subscription_create(url=receiver.url, events=["experiment.finished"])
    fake_llm.script(*[error(400, "bad request")] * 2)  # every call of the candidate fails
    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec()], limit=2)

    [request] = receiver.requests
    data = json.loads(request.body)["data"]
    assert data["id"] == experiment.pk and data["status"] == "failed"
