from __future__ import annotations

import logging
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from qa.evidence import VERIFIER_VERSION
from qa.judging import judge_run_create
from qa.models import JudgeRun, Recording, Score
from tests.factories import RecordingFactory, judged_recording
from tests.support.fake_openai import answer_for, completion

pytestmark = pytest.mark.django_db


def judge(*args: str) -> str:
    out = StringIO()
    call_command("judge", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_judge_pending_prints_a_summary(fake_llm, rubric):
    for _ in range(2):
        judge_run_create(recording=RecordingFactory(rubric=rubric))
    paraphrase = "AGENTE: le habla Marta, de la empresa Telco Sur"
    fake_llm.script(lambda request: completion(answer_for(request, evidence=paraphrase)))

    output = judge("--pending")

    assert "Judged: 2   failed: 0" in output
    assert "Model: openai-compatible fake-judge" in output
    assert "Routed to review: 1   unverified_evidence: 1" in output
    assert "Unverified quotes: 2 of 4 (50%)" in output
    assert "Tokens: 1800 prompt (0 cached) + 600 completion" in output
    assert "Cost:" not in output  # the environment's judge has no prices
    assert not JudgeRun.objects.exclude(status=JudgeRun.Status.SUCCEEDED).exists()


def test_the_summary_gives_the_cost_per_call_of_a_priced_judge(fake_llm, rubric):
    from decimal import Decimal

    from qa.models import Judge

    Judge.objects.create(
        name="priced", base_url=fake_llm.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY",
        is_default=True, evidence_mode="quote", prompt_price=Decimal("2.50"), cached_prompt_price=Decimal("1.25"),
        completion_price=Decimal("10.00"),
    )  # fmt: skip
    for _ in range(2):
        judge_run_create(recording=RecordingFactory(rubric=rubric))
    fake_llm.default = lambda request: completion(answer_for(request), prompt_tokens=1200, cached_tokens=1024)

    output = judge("--pending")

    # tests/judge/test_costs.py's worked example: 0.00472 a call.
    assert "Tokens: 2400 prompt (2048 cached) + 600 completion" in output
    assert "Cost: 0.00944" in output and "for 2 calls, 0.004720 a call" in output


def test_the_readme_sequence_judges_the_loaded_samples_that_are_waiting(fake_llm):
    """scripts/demo: load the samples, judge three, then `judge --pending` judges the others
    (an audio sample waits for its transcript first: that is the transcription's work)."""
    call_command("load_samples", stdout=StringIO())
    loaded = Recording.objects.exclude(transcript="").count()
    demo = Recording.objects.filter(source="samples", external_id__in=["es-001", "es-007", "en-001"])
    judge("--recording", *[str(pk) for pk in demo.values_list("pk", flat=True)])

    output = judge("--pending")

    assert f"Judged: {loaded - 3}   failed: 0" in output
    assert not Recording.objects.filter(status=Recording.Status.RECEIVED).exclude(transcript="").exists()
    assert JudgeRun.objects.filter(status=JudgeRun.Status.SUCCEEDED).count() == loaded
    assert judge("--pending") == "Nothing to judge.\n"


def test_judge_logs_no_line_per_llm_request(fake_llm, recording, caplog):
    with caplog.at_level(logging.INFO):
        judge("--recording", str(recording.pk))

    assert recording.runs.get().status == JudgeRun.Status.SUCCEEDED
    assert not [record.getMessage() for record in caplog.records if record.name.startswith("httpx")]


def test_judge_recording_adds_a_run_and_honours_limit_and_rubric(fake_llm, rubric, recording):
    RecordingFactory()  # another rubric

    judge("--recording", str(recording.pk), "--rubric", rubric.slug)
    judge("--recording", str(recording.pk), "--limit", "1")

    assert recording.runs.filter(status=JudgeRun.Status.SUCCEEDED).count() == 2
    assert JudgeRun.objects.count() == 2


def test_judge_unknown_recording_is_an_error(fake_llm):
    with pytest.raises(CommandError, match="No recording with id 999999"):
        judge("--recording", "999999")


def test_judge_refuses_a_recording_still_waiting_for_its_transcript(fake_llm, rubric):
    waiting = RecordingFactory(rubric=rubric, transcript="", status=Recording.Status.TRANSCRIBING)
    with pytest.raises(CommandError, match=f"Recording {waiting.pk} has no transcript yet"):
        judge("--recording", str(waiting.pk))
    assert not JudgeRun.objects.exists()


def test_reverify_updates_verification_and_routing_without_the_llm(fake_llm, rubric):
    values = {"saludo": 4, "compromiso": 2}
    fixed = judged_recording(values=values, confidence=0.9, rubric=rubric)  # its quote is in the transcript
    Score.objects.filter(run=fixed.current_run).update(
        evidence_verified=False, verification_status="not_found", confidence=0.0, verifier_version="old"
    )
    Recording.objects.filter(pk=fixed.pk).update(
        status=Recording.Status.IN_REVIEW, needs_review=True, review_reasons=["unverified_evidence"]
    )
    broken = judged_recording(values=values, confidence=0.9, rubric=rubric)
    Score.objects.filter(run=broken.current_run).update(evidence="El agente promete llamar mañana sin falta")
    out = StringIO()

    call_command("reverify", "--since", "2000-01-01", stdout=out)

    assert "2 runs checked" in out.getvalue()
    fixed.refresh_from_db()
    broken.refresh_from_db()
    assert fixed.status == Recording.Status.JUDGED and fixed.review_reasons == []
    assert broken.status == Recording.Status.IN_REVIEW and broken.review_reasons == ["unverified_evidence"]
    for score in Score.objects.filter(run=fixed.current_run):
        assert score.evidence_verified and score.confidence == 0.9 and score.verifier_version == VERIFIER_VERSION
    for score in Score.objects.filter(run=broken.current_run):
        assert not score.evidence_verified and score.confidence == 0.0 and score.model_confidence == 0.9
    assert fake_llm.requests == []


def test_reverify_refuses_a_bad_date():
    with pytest.raises(CommandError, match="not a date"):
        call_command("reverify", "--since", "yesterday")
