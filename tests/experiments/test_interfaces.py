"""The experiment's interfaces: the API (shape, permissions, schema), the
command, and the pages (permissions, drill-down, confirmed promotion)."""

from __future__ import annotations

import uuid

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from qa.api.services import api_key_create
from qa.models import Judge
from experiments.models import Experiment, Promotion
from experiments.services import ArmSpec, experiment_create
from rubrics.models import Rubric
from rubrics.services import rubric_new_version
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ARM_FIELDS = {"label", "rubric_version", "judge", "model", "samples", "tokens", "cost", "cost_per_call", "criteria"}
CRITERION_FIELDS = {
    "criterion_key", "n", "mean", "bias", "mae", "exact_agreement", "within_one", "qwk", "unverified_rate",
    "not_applicable_rate", "stability", "verified", "unverified",
}
DELTA_FIELDS = {"arm", "criterion_key", "mae_delta", "mae_delta_ci", "qwk_delta", "qwk_delta_ci", "verdict"}


def key_client(**rights) -> APIClient:
    _, key = api_key_create(name=f"key-{uuid.uuid4().hex[:8]}", **rights)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}", HTTP_ACCEPT_LANGUAGE="en")
    return client


@pytest.fixture
def draft(reviewed):
    return rubric_new_version(rubric=Rubric.objects.get(slug="care"))


def test_the_api_creates_with_an_owner_key_and_returns_the_issue_shape(
    draft, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    body = {"rubric": "care", "candidates": [{"rubric_version": 2}], "limit": 10, "seed": 3}
    assert key_client().post("/api/experiments/", body, format="json").status_code == 403

    owner = key_client(can_run_experiments=True)
    with django_capture_on_commit_callbacks(execute=True):
        created = owner.post("/api/experiments/", body, format="json")
    assert created.status_code == 201, created.json()

    answer = key_client().get(f"/api/experiments/{created.json()['id']}/").json()
    assert set(answer) == {"id", "status", "progress", "recordings", "arms", "comparison"}
    assert answer["status"] == "finished" and answer["progress"] == {"done": 10, "failed": 0, "total": 10}
    assert len(answer["recordings"]) == 10
    assert [set(arm) for arm in answer["arms"]] == [ARM_FIELDS, ARM_FIELDS]
    assert all(set(row) == CRITERION_FIELDS for arm in answer["arms"] for row in arm["criteria"])
    assert answer["arms"][0]["cost"] == 0 and answer["arms"][1]["judge"] == "environment"
    assert answer["arms"][1]["tokens"] == {"prompt": 9000, "completion": 3000, "cached": 0}
    assert [set(row) for row in answer["comparison"]] == [DELTA_FIELDS, DELTA_FIELDS]
    first = answer["comparison"][0]
    assert first["verdict"] == "better" and first["mae_delta"] == -2.0 and len(first["mae_delta_ci"]) == 2


def test_bad_input_answers_400_naming_it_and_stores_nothing(reviewed):
    owner = key_client(can_run_experiments=True)
    answer = owner.post("/api/experiments/", {"rubric": "care", "candidates": [{"rubric_version": 9}]}, format="json")

    assert answer.status_code == 400 and "version 9" in str(answer.json())
    assert not Experiment.objects.exists()


def test_a_judge_name_with_a_nul_is_a_400_not_a_500(reviewed):
    """PostgreSQL refuses NUL in a text lookup; the name names no judge, and the answer says which field."""
    owner = key_client(can_run_experiments=True)
    answer = owner.post("/api/experiments/", {"rubric": "care", "candidates": [{"judge": "cand\x00idate"}]}, format="json")

    assert answer.status_code == 400 and "judge" in str(answer.json()["candidates"])
    assert not Experiment.objects.exists()


def test_the_schema_documents_the_experiments_api(db):
    staff = UserFactory(is_staff=True)
    client = APIClient()
    client.force_login(staff)
    schema = client.get("/api/schema/?format=json").json()

    assert {"/api/experiments/", "/api/experiments/{id}/"} <= set(schema["paths"])
    assert "post" in schema["paths"]["/api/experiments/"]
    detail = schema["components"]["schemas"]["Experiment"]["properties"]
    assert set(detail) == {"id", "status", "progress", "recordings", "arms", "comparison"}


def test_the_command_runs_prints_the_comparison_and_ends_with_the_api_path(
    draft, fake_llm, capsys, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # the test's transaction stands for the command's autocommit
        call_command("experiment", "--rubric", "care", "--candidate-version", "2", "--limit", "6", "--seed", "1")

    output = capsys.readouterr()
    lines = output.out.strip().splitlines()
    experiment = Experiment.objects.get()
    assert lines[-1] == f"/api/experiments/{experiment.pk}/"
    assert experiment.status == "finished" and "6/6" in output.err
    assert any(line.split()[:1] == ["c1"] and line.rstrip().endswith("better") for line in lines)


def test_supervisors_read_rubric_owners_run_and_promote_with_confirmation(
    draft, fake_llm, eager_celery, django_capture_on_commit_callbacks, client
):
    supervisor = UserFactory(groups=["Supervisors"])
    owner = UserFactory(groups=["Rubric owners"])
    judge = Judge.objects.create(
        name="candidate", base_url=fake_llm.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY"
    )
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    form = {"rubric": "care", "candidate_version": 2, "judge": judge.pk, "baseline": "stored", "group": "all", "seed": 0}

    client.force_login(supervisor)
    assert client.get("/experiments/").status_code == 200
    assert client.post("/experiments/", form).status_code == 403

    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post("/experiments/", form)
    experiment = Experiment.objects.get()
    assert created.status_code == 302 and created.url == f"/experiments/{experiment.pk}/"
    page = client.get(created.url).content.decode()
    assert "is closer to the supervisors on 2 criteria" in page and "<svg" in page
    drill = client.get(f"/experiments/{experiment.pk}/criteria/c1/").content.decode()
    assert "this is call 0" in drill.lower() or "Good morning" in drill

    candidate = experiment.arms.get(order=1)
    confirm = f"/experiments/{experiment.pk}/arms/{candidate.pk}/default_judge/"
    client.force_login(supervisor)
    assert client.post(confirm).status_code == 403
    client.force_login(owner)
    assert client.get(confirm).status_code == 200 and not Judge.objects.get(pk=judge.pk).is_default
    client.post(confirm)
    client.post(f"/experiments/{experiment.pk}/arms/{candidate.pk}/publish_rubric/")
    assert Judge.objects.get(pk=judge.pk).is_default
    assert Rubric.objects.get(slug="care", version=2).status == Rubric.Status.PUBLISHED
    assert set(Promotion.objects.values_list("action", "user", "experiment")) == {
        ("default_judge", owner.pk, experiment.pk),
        ("publish_rubric", owner.pk, experiment.pk),
    }


def test_only_rubric_owners_cancel(reviewed, fake_llm, client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):  # no worker: it stays queued
        experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec()])

    client.force_login(UserFactory(groups=["Supervisors"]))
    assert client.post(f"/experiments/{experiment.pk}/cancel/").status_code == 403
    assert key_client().delete(f"/api/experiments/{experiment.pk}/").status_code in (403, 405)
    client.force_login(UserFactory(groups=["Rubric owners"]))
    assert client.post(f"/experiments/{experiment.pk}/cancel/").status_code == 302
    experiment.refresh_from_db()
    assert experiment.status == Experiment.Status.CANCELLED
