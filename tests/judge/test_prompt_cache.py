"""The prompt shaped for a provider's prompt cache (issue 45): every call of a rubric version sends the
same bytes up to the transcript, which comes last; the cached tokens the server reports are kept per run.
Against the suite's scripted OpenAI-compatible server, over HTTP with the real `openai` client, reading
the request bodies exactly as they arrived."""

from __future__ import annotations

import json

import pytest

from qa.answer import QUOTE, REFERENCE
from qa.execution import judge_run_until_done
from qa.judging import judge_run_create
from qa.models import JudgeRun
from tests.factories import RecordingFactory
from tests.support.fake_openai import answer_for, completion

pytestmark = pytest.mark.django_db

FIRST = "AGENTE: Buenos días, le atiende Marta.\nCLIENTE: Quiero cambiar mi plan.\nAGENTE: Claro, lo cambio hoy."
# Differs from its first word on, and has more turns (in reference mode, a longer turn enum).
SECOND = "Operadora: Hola, soy Ana.\nCliente: Llamo por una factura.\nOperadora: La reviso.\nCliente: Gracias."


def _common_prefix(first: bytes, second: bytes) -> int:
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return length


@pytest.mark.parametrize("mode", [QUOTE, REFERENCE])
def test_two_calls_send_the_same_bytes_up_to_the_transcript(fake_llm, settings, rubric, mode):
    settings.QA_EVIDENCE_MODE = mode
    for transcript in (FIRST, SECOND):
        run = judge_run_create(recording=RecordingFactory(rubric=rubric, transcript=transcript))[0]
        judge_run_until_done(run_id=run.pk)
    first, second = fake_llm.bodies
    shared = _common_prefix(first, second)
    opening = first.index(b"<transcript>\\n")  # the user message's (the rules name the tag too)
    # The whole static part (rules, rubric, the system message) is in the shared prefix...
    system = json.loads(first)["messages"][0]["content"]
    assert json.dumps(system).encode()[1:-1] in first[:shared]
    assert opening + len(b"<transcript>\\n") <= shared
    # ... and the bytes first differ at the transcript's first character, not before.
    assert shared == opening + len(b"<transcript>\\n") + (len(b"[1] ") if mode == REFERENCE else 0)
    # In the JSON body the messages come before the schema (which, in reference mode, depends on the call).
    assert first.index(b'"messages"') < first.index(b'"response_format"')


def test_the_cached_tokens_the_server_reports_are_kept_on_the_run(fake_llm, recording):
    fake_llm.script(lambda request: completion(answer_for(request), prompt_tokens=1200, cached_tokens=1024))
    run = judge_run_create(recording=recording)[0]
    judge_run_until_done(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.SUCCEEDED
    assert (run.prompt_tokens, run.cached_tokens) == (1200, 1024)


def test_a_server_that_does_not_report_them_leaves_none(fake_llm, recording):
    run = judge_run_create(recording=recording)[0]
    judge_run_until_done(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.SUCCEEDED
    assert (run.prompt_tokens, run.cached_tokens) == (900, None)
