"""OpenAI's strict mode gets a schema without `maxLength`, and its answers are still held to the
schema's bounds: a quote longer than the bound fails the run, as it does for every other backend.

The judge is a named one with an API key and no base URL, the configuration that selects OpenAI's
own API and its strict-mode shape; the `openai` client finds its server in OPENAI_BASE_URL, which
the fake_llm fixture points at the local OpenAI-compatible server."""

from __future__ import annotations

import pytest

from qa.answer import UNBOUNDED_SHAPE
from qa.execution import judge_run_until_done
from qa.judging import judge_run_create
from qa import llm
from qa.llm import answer_shape_get
from qa.models import Judge, JudgeRun, Score
from tests.support.fake_openai import answer_for, completion

pytestmark = pytest.mark.django_db


@pytest.fixture
def openai_judge(fake_llm, monkeypatch, settings) -> Judge:
    monkeypatch.setenv("JUDGE_OPENAI_KEY", "sk-test")
    # A judge with no base URL calls OpenAI: the operator allows its key variable and host.
    settings.QA_JUDGE_KEY_VARIABLES = [*settings.QA_JUDGE_KEY_VARIABLES, "JUDGE_OPENAI_KEY"]
    settings.QA_JUDGE_ALLOWED_HOSTS = [*settings.QA_JUDGE_ALLOWED_HOSTS, "api.openai.com"]
    # The backend is cached per configuration, and this one's client read OPENAI_BASE_URL when it was
    # built: each test's server has a port of its own.
    llm._backend.cache_clear()
    # Quotes, which OpenAI's API would not get by default (turn references, qa.llm): these tests are about a quote's bound.
    return Judge.objects.create(
        name="gpt", model="gpt-4o-mini", api_key_variable="JUDGE_OPENAI_KEY", is_default=True, evidence_mode="quote"
    )


def _run_with(recording, fake_llm, evidence: str) -> JudgeRun:
    def reply(request: dict) -> dict:
        answer = answer_for(request)
        answer["scores"]["saludo"]["evidence"] = evidence
        return completion(answer)

    fake_llm.script(reply)
    run = judge_run_create(recording=recording)[0]
    judge_run_until_done(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_a_strict_mode_quote_over_the_bound_fails_the_run(openai_judge, recording, fake_llm):
    assert answer_shape_get(openai_judge) == UNBOUNDED_SHAPE
    limit = UNBOUNDED_SHAPE.evidence_max_chars
    first_line = recording.transcript.splitlines()[0]
    quote = (first_line + " ") * (limit // len(first_line) + 1)

    run = _run_with(recording, fake_llm, quote)

    [request] = fake_llm.requests
    schema = request["response_format"]["json_schema"]
    assert schema["strict"] is True
    evidence_schema = schema["schema"]["properties"]["scores"]["properties"]["saludo"]["properties"]["evidence"]
    assert evidence_schema == {"type": "string"}  # strict mode: no maxLength sent
    assert run.backend == "openai" and run.status == JudgeRun.Status.FAILED
    assert f"saludo: evidence has {len(quote)} characters, more than the schema's {limit}" in run.error
    assert not Score.objects.filter(run=run).exists()


def test_a_strict_mode_quote_within_the_bound_is_stored(openai_judge, recording, fake_llm):
    first_line = recording.transcript.splitlines()[0]
    assert len(first_line) <= UNBOUNDED_SHAPE.evidence_max_chars

    run = _run_with(recording, fake_llm, first_line)

    assert run.status == JudgeRun.Status.SUCCEEDED and run.backend == "openai"
    assert run.scores.get(criterion__key="saludo").evidence == first_line
