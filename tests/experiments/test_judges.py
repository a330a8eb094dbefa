"""Named judges: managed by rubric owners in the admin, keys only by variable name."""

from __future__ import annotations

import pytest

from qa.llm import backend_get
from qa.llm_errors import LLMError
from qa.models import Judge
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_rubric_owner_adds_a_judge_in_the_admin_and_sees_its_unset_key(client, monkeypatch, settings):
    monkeypatch.delenv("JUDGE_GPT_KEY", raising=False)
    # The operator allowed this variable and OpenAI's API (tests/experiments/test_judge_allowlist.py).
    settings.QA_JUDGE_KEY_VARIABLES = ["OPENAI_API_KEY", "JUDGE_GPT_KEY"]
    settings.QA_JUDGE_ALLOWED_HOSTS = ["127.0.0.1", "api.openai.com"]
    client.force_login(UserFactory(is_staff=True, groups=["Rubric owners"]))
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"

    answer = client.post(
        "/admin/qa/judge/add/",
        {
            "name": "gpt", "backend": "openai-compatible", "model": "gpt-4o-mini", "base_url": "", "gguf_path": "",
            "api_key_variable": "JUDGE_GPT_KEY", "temperature": "0.7", "samples": "3", "evidence_mode": "auto",
            "mode": "sync", "batch_discount": "0",
        },
    )

    assert answer.status_code == 302
    judge = Judge.objects.get(name="gpt")
    assert judge.samples == 3 and judge.api_key_variable == "JUDGE_GPT_KEY"
    listing = client.get("/admin/qa/judge/").content.decode()
    assert "The environment variable JUDGE_GPT_KEY that holds this judge&#x27;s key is not set." in listing
    with pytest.raises(LLMError, match="JUDGE_GPT_KEY"):
        backend_get(judge)
    monkeypatch.setenv("JUDGE_GPT_KEY", "sk-test")
    assert backend_get(judge).model == "gpt-4o-mini" and "not set" not in client.get("/admin/qa/judge/").content.decode()


def test_samples_need_a_temperature_and_a_key_is_never_stored(client):
    client.force_login(UserFactory(is_staff=True, groups=["Rubric owners"]))
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"

    answer = client.post(
        "/admin/qa/judge/add/",
        {"name": "x", "backend": "openai-compatible", "model": "m", "api_key_variable": "sk-live-123",
         "temperature": "0", "samples": "3", "evidence_mode": "auto", "mode": "sync", "batch_discount": "0"},
    )

    errors = answer.context["adminform"].form.errors
    assert "api_key_variable" in errors and "temperature" in errors
    assert not Judge.objects.exists()


def test_a_supervisor_may_look_at_judges_but_not_change_them(client):
    client.force_login(UserFactory(is_staff=True, groups=["Supervisors"]))
    assert client.get("/admin/qa/judge/").status_code == 200
    assert client.get("/admin/qa/judge/add/").status_code == 403
