"""A transcript is bounded by itself (issue 26: a 3.9 MB single transcript, about 70 hours of talk,
was accepted: the body limit is sized for batches), and one longer than the judge's context fails its
run with that reason, not as a provider's error."""

from __future__ import annotations

import pytest
from django.conf import settings

from qa.models import JudgeRun, Recording
from qa.services import recording_ingest
from tests.factories import published_rubric
from tests.support.fake_openai import error

pytestmark = pytest.mark.django_db

URL = "/api/recordings/"
LINE = "AGENT: Thank you for calling, my name is Ana, how can I help you today?\n"


@pytest.fixture
def rubric(db):
    return published_rubric()


def body(rubric, **fields) -> dict:
    return {"external_id": "call-1", "rubric": rubric.slug, **fields}


def test_the_defaults_are_two_hours_of_talk():
    assert settings.QA_AUDIO_MAX_SECONDS == 7200
    assert (settings.QA_MAX_TRANSCRIPT_CHARS, settings.QA_MAX_TRANSCRIPT_TURNS) == (216_000, 7_200)


def test_the_probes_transcript_of_70_hours_is_a_400_naming_the_limit_and_nothing_is_stored(api, rubric):
    transcript = LINE * (3_900_000 // len(LINE))  # 3.9 MB, under QA_MAX_BODY_BYTES

    response = api.post(URL, body(rubric, transcript=transcript), format="json")

    assert response.status_code == 400
    assert response.json() == {
        "transcript": f"The transcript has {len(transcript.splitlines()) + 1} turns; the limit is 7200 (QA_MAX_TRANSCRIPT_TURNS)."
    }
    assert not Recording.objects.exists()


def test_a_transcript_of_few_long_turns_is_bounded_by_characters(api, rubric, django_capture_on_commit_callbacks):
    limit = settings.QA_MAX_TRANSCRIPT_CHARS
    at_limit = "AGENT: " + "a" * (limit - len("AGENT: \n")) + "\n"
    assert len(at_limit) == limit

    over = api.post(URL, body(rubric, transcript=at_limit + "x"), format="json")
    with django_capture_on_commit_callbacks():
        fits = api.post(URL, body(rubric, external_id="call-2", transcript=at_limit), format="json")

    assert over.status_code == 400
    assert over.json()["transcript"] == (
        f"The transcript has {limit + 1} characters; the limit is {limit} (QA_MAX_TRANSCRIPT_CHARS)."
    )
    assert fits.status_code == 201
    assert list(Recording.objects.values_list("external_id", flat=True)) == ["call-2"]


def test_structured_turns_are_bounded_by_count_and_by_their_rendered_length(api, rubric, settings):
    settings.QA_MAX_TRANSCRIPT_TURNS, settings.QA_MAX_TRANSCRIPT_CHARS = 3, 40
    turn = {"speaker": "AGENT", "text": "Hello."}  # "AGENT: Hello.\n": 14 characters

    many = api.post(URL, body(rubric, turns=[turn] * 4), format="json")
    long = api.post(URL, body(rubric, turns=[{"speaker": "AGENT", "text": "x" * 40}]), format="json")

    assert many.status_code == 400 and "4 turns; the limit is 3 (QA_MAX_TRANSCRIPT_TURNS)" in many.json()["turns"]
    assert long.status_code == 400 and "48 characters; the limit is 40" in long.json()["turns"]
    assert not Recording.objects.exists()


def test_a_batch_refuses_the_long_one_and_stores_the_others(api, rubric, settings, django_capture_on_commit_callbacks):
    settings.QA_MAX_TRANSCRIPT_CHARS = 200
    items = [
        {"external_id": "short", "rubric": rubric.slug, "transcript": LINE},
        {"external_id": "long", "rubric": rubric.slug, "transcript": LINE * 3},
    ]
    with django_capture_on_commit_callbacks():
        results = api.post(f"{URL}batch/", {"recordings": items}, format="json").json()["results"]

    assert [result["status"] for result in results] == [201, 400]
    assert results[1]["errors"]["transcript"] == (
        f"The transcript has {len(LINE) * 3} characters; the limit is 200 (QA_MAX_TRANSCRIPT_CHARS)."
    )
    assert list(Recording.objects.values_list("external_id", flat=True)) == ["short"]


def judged(rubric, transcript: str, capture) -> JudgeRun:
    with capture(execute=True):
        recording, _ = recording_ingest(external_id="call-1", source="crm", rubric=rubric, transcript=transcript)
    return JudgeRun.objects.get(recording=recording)


def test_a_transcript_longer_than_the_judges_context_fails_before_any_call(
    rubric, fake_llm, eager_celery, settings, django_capture_on_commit_callbacks
):
    settings.QA_JUDGE_CONTEXT_TOKENS = 2_000
    run = judged(rubric, LINE * 200, django_capture_on_commit_callbacks)  # 14,400 characters

    assert run.status == JudgeRun.Status.FAILED
    assert run.error.startswith("The transcript is too long for the judge's context: the prompt is at least about")
    assert "fake-judge's context holds 2000 (QA_JUDGE_CONTEXT_TOKENS)" in run.error
    assert Recording.objects.get().failure_reason == run.error
    assert fake_llm.requests == []


def test_a_server_refusing_the_prompt_for_its_context_fails_with_that_reason(
    rubric, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    # llama.cpp's words; OpenAI and vLLM say "maximum context length".
    fake_llm.script(error(400, "the request exceeds the available context size, try increasing it"))
    run = judged(rubric, LINE * 3, django_capture_on_commit_callbacks)

    assert run.status == JudgeRun.Status.FAILED
    assert run.error.startswith("The transcript is too long for the judge's context: fake-judge refused the prompt")
    assert "HTTP 400" not in run.error
    assert len(fake_llm.requests) == 1  # final: not retried


def test_the_local_models_context_is_known_before_any_call(settings):
    from qa.llm import Backend, context_problem

    settings.QA_LOCAL_MODEL_CONTEXT = 1_000
    local = Backend(name="local", model="smollm2", client=None, answer_shape=None)
    messages = [{"role": "user", "content": "x" * 6 * 900}]  # about 900 tokens at 6 characters each

    assert context_problem(backend=local, messages=messages, max_tokens=100) == ""
    problem = context_problem(backend=local, messages=messages, max_tokens=101)
    assert problem.endswith("smollm2's context holds 1000 (QA_LOCAL_MODEL_CONTEXT).")
    remote = Backend(name="openai-compatible", model="m", client=None, answer_shape=None)
    assert context_problem(backend=remote, messages=messages * 100, max_tokens=100) == ""  # unknown: the server says
