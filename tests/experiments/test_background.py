"""Without a broker (the first-run default) an experiment's judgments run in a thread of the web process:
the page that starts one answers at once with the progress page, and the judging goes on behind it."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from qa.models import Judge
from experiments.models import Experiment, Item
from tests.experiments.test_browser import role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)  # the thread reads what the request committed

CALLS = 4
LATENCY = 1.0  # seconds the judge takes per call: judged in the request, the start would take CALLS of them


def test_starting_an_experiment_answers_at_once_and_judging_goes_on(reviewed, fake_llm, settings):
    role("Rubric owners", "add_experiment", "change_experiment", "view_experiment")
    settings.QA_BACKGROUND_THREADS = True
    fake_llm.latency = LATENCY
    judge = Judge.objects.create(
        name="candidate", base_url=fake_llm.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY"
    )
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(UserFactory(groups=["Rubric owners"]))
    form = {"rubric": "care", "candidate_version": 1, "judge": judge.pk, "baseline": "stored", "group": "all",
            "seed": 0, "limit": CALLS}  # fmt: skip

    started = time.monotonic()
    created = client.post("/experiments/", form)
    took = time.monotonic() - started
    experiment = Experiment.objects.get()
    assert created.status_code == 302 and created.url == f"/experiments/{experiment.pk}/"
    assert took < LATENCY * CALLS / 2, took
    assert Item.objects.filter(arm__experiment=experiment, status=Item.Status.SUCCEEDED).count() < CALLS
    page = client.get(created.url).content.decode()
    assert "<progress" in page and 'http-equiv="refresh"' in page

    deadline = time.monotonic() + 60
    while experiment.is_active and time.monotonic() < deadline:
        time.sleep(0.5)
        experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.FINISHED
    assert Item.objects.filter(arm__experiment=experiment, status=Item.Status.SUCCEEDED).count() == CALLS
    assert len(fake_llm.requests) == CALLS
    assert 'http-equiv="refresh"' not in client.get(created.url).content.decode()
