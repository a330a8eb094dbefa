"""Redaction on the judge's path, against the local OpenAI-compatible server with the real `openai`
client: nothing of the labelled corpus reaches it, quotes with placeholders verify, and their spans
map back onto the stored transcript and its audio times."""

from __future__ import annotations

import json
import re

import pytest

from bench.redaction.calls import calls as hand_written
from bench.redaction.corpus import corpus
from qa.execution import judge_run_until_done
from qa.judging import judge_run_create
from qa.models import JudgeRun, Recording, Score
from qa.redaction.models import RecordingRedaction
from qa.redaction.services import judge_view
from tests.factories import RecordingFactory
from tests.judge.conftest import judge_rubric
from tests.support.fake_openai import answer_for, completion, transcript_of

pytestmark = pytest.mark.django_db


def judge(recording: Recording) -> JudgeRun:
    run, _created = judge_run_create(recording=recording)
    judge_run_until_done(run_id=run.pk, sleep=lambda _seconds: None)
    run.refresh_from_db()
    recording.refresh_from_db()
    return run


def sent_transcripts(server) -> list[str]:
    return [transcript_of(request) for request in server.requests]


@pytest.mark.parametrize("language", ["es", "en"])
def test_nothing_raw_leaves(fake_llm, language):
    """Every call of the hand-written set and 24 of the corpus, judged through the whole path: no
    entity they carry appears in any request the server received. A value of 6 characters or more
    must appear in no request at all; a shorter one (a security code, an expiry) is looked for with
    the words said just before it, since "123" alone also occurs inside amounts and case numbers."""
    rubric = judge_rubric(language=language)
    calls = hand_written(language) + corpus(language)[:24]
    for call in calls:
        run = judge(RecordingFactory(rubric=rubric, transcript=call.text, agent_name=call.agent_name, language=language))
        assert run.status == JudgeRun.Status.SUCCEEDED, run.error
    assert len(fake_llm.requests) == len(calls)
    everything = "\n".join(json.dumps(request, ensure_ascii=False) for request in fake_llm.requests)
    sent = "\n".join(sent_transcripts(fake_llm))
    checked = 0
    for call in calls:
        for span in call.entities:
            if len(span.value) >= 6:
                assert span.value not in everything, (call.id, span.kind, span.value)
            else:
                said_before = call.text[max(0, span.start - 20) : span.start]
                assert said_before + span.value not in sent, (call.id, span.kind, span.value)
            checked += 1
        # What the judge must be able to quote did reach it.
        for span in call.lookalikes:
            assert span.value in sent, (call.id, span.kind, span.value)
    assert checked > 100
    kinds = {span.kind for call in calls for span in call.entities}
    assert {"CREDIT_CARD", "CARD_SECURITY_CODE", "PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER"} <= kinds


CARD_CALL_TURNS = [
    {"speaker": "AGENTE", "text": "Buenos días, le atiende Marta.", "start_ms": 0, "end_ms": 1500},
    {"speaker": "CLIENTE", "text": "Soy Lucía Fernández y quiero pagar.", "start_ms": 1600, "end_ms": 3600},
    {"speaker": "CLIENTE", "text": "La tarjeta es 4111 1111 1111 1111 gracias.", "start_ms": 3700, "end_ms": 8000},
    {"speaker": "AGENTE", "text": "Perfecto, el pago queda registrado con el número 4417-22.", "start_ms": 8100, "end_ms": 11000},
]


def timed(turns: list[dict]) -> list[dict]:
    """Word times spread evenly over each turn, as the recognizer gives them."""
    result = []
    for turn in turns:
        words = turn["text"].split(" ")
        step = (turn["end_ms"] - turn["start_ms"]) // len(words)
        result.append({**turn, "words": [
            {"word": word, "start_ms": turn["start_ms"] + index * step, "end_ms": turn["start_ms"] + (index + 1) * step}
            for index, word in enumerate(words)
        ]})
    return result


def render(turns: list[dict]) -> str:
    return "".join(f"{turn['speaker']}: {turn['text']}\n" for turn in turns)


def test_masked_card_verifies_its_quotes_and_plays_its_spans(fake_llm):
    turns = timed(CARD_CALL_TURNS)
    recording = RecordingFactory(rubric=judge_rubric(language="es"), transcript=render(turns), turns=turns,
                                 agent_name="Marta Quiroga", language="es")

    def quote_the_card_and_the_name(request):
        lines = transcript_of(request).splitlines()
        card_line = next(line for line in lines if "[TARJETA_1]" in line)
        name_line = next(line for line in lines if "[NOMBRE_1]" in line)
        answer = answer_for(request, evidence=card_line)
        answer["scores"]["compromiso"]["evidence"] = name_line
        return completion(answer)

    fake_llm.script(quote_the_card_and_the_name)
    run = judge(recording)
    assert run.status == JudgeRun.Status.SUCCEEDED, run.error

    # At rest: the card is gone from the transcript and its turns; they still render to each other.
    assert "4111" not in recording.transcript and "4111" not in json.dumps(recording.turns)
    assert "CLIENTE: La tarjeta es [TARJETA_1] gracias." in recording.transcript
    assert render(recording.turns) == recording.transcript
    # The name is masked for the external judge only: stored as said.
    assert "Lucía Fernández" in recording.transcript
    [request] = fake_llm.requests
    assert "Lucía Fernández" not in transcript_of(request) and "[NOMBRE_1]" in transcript_of(request)

    card = Score.objects.get(run=run, criterion__key="saludo")
    assert card.evidence_verified, card.verification_status
    [(start, end)] = card.verification_spans
    assert recording.transcript[start:end] == "La tarjeta es [TARJETA_1] gracias"
    # The span plays: from "La" to "gracias", the card's words' times included.
    card_turn = turns[2]["words"]
    assert recording.quote_time_span(card.verification_spans) == (card_turn[0]["start_ms"], card_turn[-1]["end_ms"])

    name = Score.objects.get(run=run, criterion__key="compromiso")
    assert name.evidence_verified, name.verification_status
    [(start, end)] = name.verification_spans
    assert recording.transcript[start:end] == "Soy Lucía Fernández y quiero pagar"

    redaction = RecordingRedaction.objects.get(recording=recording)
    assert redaction.masked_at_rest == {"CREDIT_CARD": 1}
    assert redaction.masked_for_llm == {"PERSON": 1}


def test_a_placeholder_is_a_word_to_the_verifier(fake_llm):
    """A quote naming another placeholder than the one the judge saw does not verify."""
    recording = RecordingFactory(rubric=judge_rubric(language="es"), transcript=render(CARD_CALL_TURNS),
                                 agent_name="Marta Quiroga", language="es")
    fake_llm.script(lambda request: completion(answer_for(request, evidence="CLIENTE: La tarjeta es [DNI_1] gracias.")))
    run = judge(recording)
    assert run.status == JudgeRun.Status.SUCCEEDED
    assert not Score.objects.filter(run=run, evidence_verified=True).exists()


def test_redaction_runs_once_per_recording(fake_llm):
    recording = RecordingFactory(rubric=judge_rubric(language="es"), transcript=render(CARD_CALL_TURNS),
                                 agent_name="Marta Quiroga", language="es")
    judge(recording)
    stored = recording.transcript
    judge(recording)  # a second run: the placeholders are not masked again, the spans still apply
    recording.refresh_from_db()
    assert recording.transcript == stored
    assert RecordingRedaction.objects.filter(recording=recording).count() == 1
    second = fake_llm.requests[-1]
    assert transcript_of(second) == transcript_of(fake_llm.requests[0])


def test_a_call_that_cannot_be_redacted_is_not_judged(fake_llm, settings):
    settings.QA_REDACTION_POLICY = "CREDIT_CARDS=keep"
    recording = RecordingFactory(rubric=judge_rubric(language="es"), transcript=render(CARD_CALL_TURNS), language="es")
    run = judge(recording)
    assert run.status == JudgeRun.Status.FAILED
    assert "Redaction failed" in run.error and "unknown entity type 'CREDIT_CARDS'" in run.error
    assert recording.status == Recording.Status.FAILED
    assert fake_llm.requests == []
    assert "4111 1111 1111 1111" in recording.transcript  # nothing lost either


def test_the_policy_decides_what_is_masked_where(fake_llm, settings):
    settings.QA_REDACTION_POLICY = "PERSON=keep,CREDIT_CARD=mask_for_llm"
    recording = RecordingFactory(rubric=judge_rubric(language="es"), transcript=render(CARD_CALL_TURNS),
                                 agent_name="Marta Quiroga", language="es")
    judge(recording)
    sent = transcript_of(fake_llm.requests[0])
    assert "Lucía Fernández" in sent and "[TARJETA_1]" in sent
    assert "4111 1111 1111 1111" in recording.transcript


def test_the_local_model_sees_the_stored_text():
    text = render(CARD_CALL_TURNS)
    assert judge_view(transcript=text, local=True, language="es").text == text
    external = judge_view(transcript=text, local=False, language="es").text
    assert "Lucía Fernández" not in external and re.search(r"\[NOMBRE_1\]", external)


def test_a_transcript_never_redacted_loses_its_at_rest_values_too():
    """An experiment judges transcripts as they are: for an external judge a card must go there too."""
    view = judge_view(transcript=render(CARD_CALL_TURNS), local=False, language="es")
    assert "4111" not in view.text and "[TARJETA_1]" in view.text


def test_without_the_name_model_a_policy_that_masks_names_sends_nothing(fake_llm, settings):
    settings.QA_REDACTION_NAME_MODELS = "es=es_core_news_not_installed"
    recording = RecordingFactory(rubric=judge_rubric(language="es"), transcript=render(CARD_CALL_TURNS),
                                 agent_name="Marta Quiroga", language="es")
    run = judge(recording)
    assert run.status == JudgeRun.Status.FAILED and recording.status == Recording.Status.FAILED
    assert fake_llm.requests == []
    assert "'es_core_news_not_installed'" in recording.failure_reason and "PERSON" in recording.failure_reason
    assert "Lucía Fernández" in recording.transcript and not RecordingRedaction.objects.exists()  # nothing lost
    # An experiment's transcript, never redacted, is refused the same way.
    with pytest.raises(RuntimeError, match="es_core_news_not_installed"):
        judge_view(transcript=recording.transcript, local=False, language="es")


def test_without_the_name_model_a_policy_that_keeps_names_still_judges(fake_llm, settings):
    settings.QA_REDACTION_NAME_MODELS = "es=es_core_news_not_installed"
    settings.QA_REDACTION_POLICY = "PERSON=keep,LOCATION=keep"
    recording = RecordingFactory(rubric=judge_rubric(language="es"), transcript=render(CARD_CALL_TURNS),
                                 agent_name="Marta Quiroga", language="es")
    assert judge(recording).status == JudgeRun.Status.SUCCEEDED
    sent = transcript_of(fake_llm.requests[0])
    assert "Lucía Fernández" in sent and "[TARJETA_1]" in sent
