"""A judge sends its key and the transcripts only where the operator allowed (issue 26's probe).

The probe: a rubric owner made a judge with base URL http://127.0.0.1:PORT/v1 (a server of theirs)
and key variable SECRET_KEY, and an experiment with it delivered `Authorization: Bearer <SECRET_KEY>`
and the calls to that server. Here the test runs that server and counts what reaches it.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from qa.llm import backend_get
from qa.llm_errors import LLMError
from qa.models import Judge, JudgeRun, Recording
from qa.services import recording_ingest
from experiments.models import Experiment, Item
from experiments.services import ArmSpec, experiment_create, item_execute
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SECRET = "the-servers-secret-key-value"


class ProbeServer:
    """The probe's server: records every request's path and Authorization header, answers 400."""

    def __init__(self) -> None:
        self.received: list[tuple[str, str]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append((self.path, self.headers.get("Authorization", "")))
                body = json.dumps({"error": {"message": "probe", "type": "probe"}}).encode()
                self.send_response(400)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def probe(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", SECRET)
    server = ProbeServer()
    yield server
    server.close()


def probe_judge(probe: ProbeServer, **fields) -> Judge:
    """The probe's judge, stored as the admin stored it before the rule (no form, no clean())."""
    values = {"name": "probe", "base_url": probe.base_url, "model": "m", "api_key_variable": "SECRET_KEY", **fields}
    return Judge.objects.create(**values)


def test_the_probes_experiment_is_refused_and_nothing_reaches_its_server(reviewed, probe, client, eager_celery):
    judge = probe_judge(probe)
    owner = UserFactory(groups=["Rubric owners"])
    client.force_login(owner)
    form = {"rubric": "care", "candidate_version": 1, "judge": judge.pk, "baseline": "stored", "group": "all", "seed": 0}

    page = client.post("/experiments/", form, HTTP_ACCEPT_LANGUAGE="en")

    assert page.status_code == 200
    assert "SECRET_KEY is not a key variable the operator allowed: add it to QA_JUDGE_KEY_VARIABLES" in page.content.decode()
    with pytest.raises(Exception, match="QA_JUDGE_KEY_VARIABLES"):
        experiment_create(rubric_slug="care", candidates=[ArmSpec(judge=judge)])
    assert not Experiment.objects.exists() and not Item.objects.exists()
    assert probe.received == []


def test_a_judge_stored_before_the_rule_fails_where_it_is_used_without_calling_out(
    reviewed, probe, monkeypatch, eager_celery, django_capture_on_commit_callbacks
):
    """An experiment created with an allowed judge whose row is then turned into the probe's:
    the judging path checks again, so the item fails with the reason and nothing is sent."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-allowed")
    judge = probe_judge(probe, api_key_variable="OPENAI_API_KEY")
    experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec(judge=judge)], limit=2, publish=False)
    Judge.objects.filter(pk=judge.pk).update(api_key_variable="SECRET_KEY")

    for item in Item.objects.filter(arm__experiment=experiment):
        item_execute(item_id=item.pk)

    items = list(Item.objects.filter(arm__experiment=experiment))
    assert items and {item.status for item in items} == {Item.Status.FAILED}
    assert all("QA_JUDGE_KEY_VARIABLES" in item.error for item in items)
    assert probe.received == []


def test_a_production_run_with_the_probes_judge_fails_naming_the_setting(rubric_for_runs, probe, eager_celery,
                                                                         django_capture_on_commit_callbacks):
    probe_judge(probe, is_default=True)
    with django_capture_on_commit_callbacks(execute=True):
        recording, _ = recording_ingest(
            external_id="call-1", source="crm", rubric=rubric_for_runs,
            transcript="AGENT: Good morning, my name is Ana.\nCUSTOMER: Hello.\n",
        )

    run = JudgeRun.objects.get(recording=recording)
    assert run.status == JudgeRun.Status.FAILED and "QA_JUDGE_KEY_VARIABLES" in run.error
    assert Recording.objects.get(pk=recording.pk).status == Recording.Status.FAILED
    assert probe.received == []


@pytest.fixture
def rubric_for_runs(db):
    from tests.experiments.conftest import care_rubric

    return care_rubric()


def test_a_host_outside_the_list_is_refused_and_an_allowed_one_is_used(probe, settings, monkeypatch):
    outside = Judge.objects.create(name="away", base_url="https://llm.elsewhere.example/v1", model="m",
                                   api_key_variable="OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(LLMError, match="llm.elsewhere.example is not one the operator allowed.*QA_JUDGE_ALLOWED_HOSTS"):
        backend_get(outside)
    # A URL parsers may read differently names no host.
    tricky = Judge.objects.create(name="tricky", base_url="http://llm.elsewhere.example\\@127.0.0.1/v1", model="m")
    with pytest.raises(LLMError, match="The host - is not one the operator allowed"):
        backend_get(tricky)
    # No base URL is OpenAI's own API: a host like any other.
    openai = Judge.objects.create(name="openai", model="gpt-4o-mini", api_key_variable="OPENAI_API_KEY")
    settings.QA_JUDGE_ALLOWED_HOSTS = ["127.0.0.1"]
    with pytest.raises(LLMError, match="api.openai.com"):
        backend_get(openai)
    settings.QA_JUDGE_ALLOWED_HOSTS = ["127.0.0.1", "LLM.elsewhere.example", "api.openai.com"]
    assert backend_get(outside).name == "openai-compatible"
    assert backend_get(openai).name == "openai"


def test_the_operator_may_allow_another_key_variable(probe, settings, monkeypatch):
    monkeypatch.setenv("JUDGE_GPT_KEY", "sk-judge")
    judge = probe_judge(probe, api_key_variable="JUDGE_GPT_KEY")
    with pytest.raises(LLMError, match="JUDGE_GPT_KEY is not a key variable"):
        backend_get(judge)
    settings.QA_JUDGE_KEY_VARIABLES = ["OPENAI_API_KEY", "JUDGE_GPT_KEY"]
    assert backend_get(judge).client.api_key == "sk-judge"


def test_the_admin_form_refuses_either_naming_the_setting(client, probe):
    client.force_login(UserFactory(is_staff=True, groups=["Rubric owners"]))
    form = {"name": "probe", "backend": "openai-compatible", "model": "m", "base_url": probe.base_url,
            "gguf_path": "", "api_key_variable": "SECRET_KEY", "temperature": "0", "samples": "1",
            "evidence_mode": "auto", "mode": "sync", "batch_discount": "0"}

    answer = client.post("/admin/qa/judge/add/", form, HTTP_ACCEPT_LANGUAGE="en")
    errors = answer.context["adminform"].form.errors
    assert "QA_JUDGE_KEY_VARIABLES" in errors["api_key_variable"][0]

    answer = client.post("/admin/qa/judge/add/", {**form, "api_key_variable": "OPENAI_API_KEY",
                                                   "base_url": "http://probe.example:8080/v1"},
                         HTTP_ACCEPT_LANGUAGE="en")
    errors = answer.context["adminform"].form.errors
    assert list(errors) == ["base_url"] and "probe.example" in errors["base_url"][0]
    assert "QA_JUDGE_ALLOWED_HOSTS" in errors["base_url"][0]
    assert not Judge.objects.exists()

    assert client.post("/admin/qa/judge/add/", {**form, "api_key_variable": "OPENAI_API_KEY"}).status_code == 302
    assert Judge.objects.get().base_url == probe.base_url


@pytest.mark.parametrize(
    ("environment", "hosts"),
    [
        ({}, ["127.0.0.1", "localhost", "::1"]),
        ({"OPENAI_API_KEY": "sk-x"}, ["127.0.0.1", "localhost", "::1", "api.openai.com"]),
        (
            {"OPENAI_BASE_URL": "http://llm.internal:8000/v1", "OPENAI_API_KEY": "unused"},
            ["127.0.0.1", "localhost", "::1", "llm.internal"],
        ),
        ({"QA_JUDGE_ALLOWED_HOSTS": "llm.a,llm.b", "OPENAI_API_KEY": "sk-x"}, ["llm.a", "llm.b"]),
    ],
)
def test_the_default_lists_follow_the_environments_judge(monkeypatch, environment, hosts):
    import runpy

    from django.conf import settings as django_settings

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "QA_JUDGE_ALLOWED_HOSTS", "QA_JUDGE_KEY_VARIABLES"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    base = runpy.run_path(str(django_settings.BASE_DIR / "config" / "settings" / "base.py"))
    assert base["QA_JUDGE_ALLOWED_HOSTS"] == hosts
    assert base["QA_JUDGE_KEY_VARIABLES"] == ["OPENAI_API_KEY"]


def test_the_judges_list_is_written_as_the_other_host_lists_and_matched_by_name(settings):
    """QA_JUDGE_ALLOWED_HOSTS goes through core.hosts like the webhooks' and intakes' lists (domains,
    networks, ports), matched by name since the openai client connects by itself; an entry without a
    port allows any, as the local model servers listen where they are told."""

    def problem(base_url: str) -> str:
        return Judge(name="j", base_url=base_url, model="m").leak_problems().get("base_url", "")

    settings.QA_JUDGE_ALLOWED_HOSTS = [".llm.internal", "10.20.0.0/16", "gpu.example:8000", "::1", "*"]
    for allowed in ("http://a.llm.internal:9999/v1", "http://llm.internal./v1", "http://10.20.1.2:8080/v1",
                    "http://[::1]:18090/v1", "http://gpu.example:8000/v1", "https://api.example.org/v1",
                    "https://93.184.215.14/v1"):  # fmt: skip
        assert problem(allowed) == "", allowed
    settings.QA_JUDGE_ALLOWED_HOSTS = [".llm.internal", "10.20.0.0/16", "gpu.example:8000", "::1"]
    assert "The host gpu.example is not one the operator allowed" in problem("http://gpu.example:8001/v1")
    assert "The host 10.30.0.1 is not one" in problem("http://10.30.0.1/v1")
    assert "The host evil-llm.internal is not one" in problem("http://evil-llm.internal/v1")
    settings.QA_JUDGE_ALLOWED_HOSTS = ["*"]  # any name, but neither an internal address nor a number
    assert "The host 127.0.0.1 is not one" in problem("http://127.0.0.1:8000/v1")
    assert "The host 2130706433 is not one" in problem("http://2130706433:8000/v1")
    settings.QA_JUDGE_ALLOWED_HOSTS = ["gpu.example:http"]
    assert problem("http://gpu.example/v1") == (
        "QA_JUDGE_ALLOWED_HOSTS has an entry that is not a host, address or network with an optional port: "
        "'gpu.example:http'."
    )
