"""Evidence by turn reference against the suite's scripted OpenAI-compatible server, over HTTP with the
real `openai` client: the request numbers the turns and makes a reference's turn an enum of them; a
scripted answer citing a turn the call lacks gives a `bad_reference` score, confidence 0, no value
downstream, marked on the review page and in the API."""

from __future__ import annotations

import html
import re

import pytest

from qa.answer import QUOTE, REFERENCE
from qa.evidence import parse_turns
from qa.execution import judge_run_until_done
from qa.judging import judge_run_create, judge_run_reverify, prompt_version_current
from qa.llm import answer_shape_get
from qa.models import Judge, JudgeRun, Recording, Score
from qa.quality import judge_values
from rubrics.models import Criterion
from tests.api.conftest import key_client, new_key
from tests.review.conftest import client_for
from tests.support.fake_openai import answer_for, completion

pytestmark = pytest.mark.django_db


@pytest.fixture
def reference_mode(fake_llm, settings):
    settings.QA_EVIDENCE_MODE = REFERENCE
    return fake_llm


def judged(recording: Recording, fake_llm, evidence: dict[str, list[dict]]) -> JudgeRun:
    def reply(request: dict) -> dict:
        answer = answer_for(request)
        for key, references in evidence.items():
            answer["scores"][key]["evidence"] = references
        return completion(answer)

    fake_llm.script(reply)
    run = judge_run_create(recording=recording)[0]
    judge_run_until_done(run_id=run.pk)
    run.refresh_from_db()
    recording.refresh_from_db()
    return run


def test_the_request_numbers_the_turns_and_enums_their_numbers(reference_mode, recording, rubric):
    turns = parse_turns(recording.transcript)
    run = judged(recording, reference_mode, {"compromiso": [{"turn": 5, "words": "te lo mando hoy antes de las 18"}]})

    [request] = reference_mode.requests
    properties = request["response_format"]["json_schema"]["schema"]["properties"]["scores"]["properties"]
    evidence = properties["saludo"]["properties"]["evidence"]
    assert evidence["type"] == "array" and (evidence["minItems"], evidence["maxItems"]) == (1, 3)
    assert evidence["items"]["properties"]["turn"] == {"type": "integer", "enum": list(range(1, len(turns) + 1))}
    system, user = (message["content"] for message in request["messages"])
    assert 'cite the transcript in "evidence"' in system
    lines = user.split("\n")[1:-1]
    assert lines[0].startswith("[1] AGENTE: Buenas tardes") and lines[len(turns) - 1].startswith(f"[{len(turns)}] CLIENTE:")

    assert run.status == JudgeRun.Status.SUCCEEDED
    assert run.prompt_version == prompt_version_current(rubric=rubric, judge=None)
    # The two modes ask different questions, so their runs are told apart by the prompt version.
    assert answer_shape_get(None).evidence_mode == REFERENCE
    saludo, compromiso = run.scores.order_by("criterion__order")
    # A whole turn: the supervisor reads its words, highlighted where they stand.
    assert saludo.evidence_verified and saludo.verification_status == "verified"
    assert saludo.evidence.startswith("[1] Buenas tardes")
    [(start, end)] = saludo.verification_spans
    assert recording.transcript[start:end] == turns[0].text
    assert compromiso.evidence == "[5] “te lo mando hoy antes de las 18”"
    [(start, end)] = compromiso.verification_spans
    assert recording.transcript[start:end] == "te lo mando hoy antes de las 18"
    assert compromiso.confidence == compromiso.model_confidence


def test_a_turn_the_call_lacks_is_a_bad_reference_with_no_value(reference_mode, recording, supervisor):
    run = judged(recording, reference_mode, {"saludo": [{"turn": 99, "words": "Buenas tardes"}]})

    assert run.status == JudgeRun.Status.SUCCEEDED
    score = run.scores.get(criterion__key="saludo")
    assert (score.verification_status, score.evidence_verified, score.confidence) == ("bad_reference", False, 0.0)
    assert score.model_confidence > 0 and score.verification_spans == []
    assert score.evidence == "[99] “Buenas tardes”"
    # No value downstream: the call's values, and so its quality score, go without it; it is sent to review.
    assert not score.value_exists
    assert "saludo" not in judge_values(run.scores.select_related("criterion"))
    assert "compromiso" in judge_values(run.scores.select_related("criterion"))
    assert recording.needs_review and Recording.ReviewReason.UNVERIFIED_EVIDENCE in recording.review_reasons
    # Verified again from what was stored: the same status.
    assert judge_run_reverify(run=run) == 0

    response = client_for(supervisor).get(f"/review/{recording.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    block = re.search(r'<article class="card criterion[^"]*" id="criterion-saludo".*?</article>', page, re.S).group()
    assert "NOT VERIFIED" in block  # the page's language (the bilingual mark is for copies and files)
    assert "cites a turn the transcript does not have" in block
    assert html.escape("[99] “Buenas tardes”") in block
    # Marked nowhere in the transcript: there is no such turn.
    assert not re.search(r'<mark data-criteria="[^"]*\bsaludo\b', page)

    _, key = new_key("references", all_sources=True)
    body = key_client(key).get(f"/api/recordings/{recording.pk}/").json()
    scores = {item["criterion_key"]: item for item in body["scores"]}
    assert scores["saludo"]["evidence_refs"] == [{"turn": 99, "words": "Buenas tardes"}]
    assert scores["saludo"]["verification"]["status"] == "bad_reference"
    assert scores["saludo"]["evidence_verified"] is False and scores["saludo"]["confidence"] == 0
    assert scores["compromiso"]["evidence_refs"] == [{"turn": 1, "words": ""}]


def test_words_of_another_turn_and_a_wrong_speaker_do_not_verify(reference_mode, recording):
    Criterion.objects.filter(rubric=recording.rubric, key="compromiso").update(subject=Criterion.Subject.AGENT)
    run = judged(
        recording,
        reference_mode,
        {
            # Words of turn 2 (the customer's), cited as turn 1.
            "saludo": [{"turn": 1, "words": "me cobraron dos veces"}],
            # The customer's turn for the agent's commitment.
            "compromiso": [{"turn": 6, "words": ""}],
        },
    )

    saludo, compromiso = run.scores.order_by("criterion__order")
    assert (saludo.verification_status, saludo.confidence) == ("wrong_turn", 0.0)
    assert (compromiso.verification_status, compromiso.confidence) == ("wrong_subject", 0.0)


def test_an_answer_that_is_not_references_fails_the_run_naming_the_problem(reference_mode, recording):
    reference_mode.script(lambda request: completion({
        "scores": {key: {**item, "evidence": "AGENTE: Buenas tardes"} for key, item in answer_for(request)["scores"].items()}
    }))  # fmt: skip
    run = judge_run_create(recording=recording)[0]
    judge_run_until_done(run_id=run.pk)
    run.refresh_from_db()

    assert run.status == JudgeRun.Status.FAILED
    assert "saludo: evidence is not a list of 1 to 3 turn references" in run.error
    assert not Score.objects.filter(run=run).exists()


def test_the_mode_follows_the_setting_the_judge_and_the_backend(fake_llm, settings, monkeypatch):
    # An OpenAI-compatible server of unknown schema support: quotes unless told otherwise.
    settings.QA_EVIDENCE_MODE = "auto"
    assert answer_shape_get(None).evidence_mode == QUOTE
    settings.QA_EVIDENCE_MODE = REFERENCE
    assert answer_shape_get(None).evidence_mode == REFERENCE
    # OpenAI's own API (a key, no base URL) holds strict answers to the schema's enums: references.
    settings.QA_EVIDENCE_MODE = "auto"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert answer_shape_get(None).evidence_mode == REFERENCE
    # The local model: its grammar holds the enum too, but a small model quotes better than it counts
    # turns (bench/judge_quality/README.md), so quotes unless told otherwise.
    monkeypatch.delenv("OPENAI_API_KEY")
    assert answer_shape_get(None).evidence_mode == QUOTE
    assert answer_shape_get(Judge(name="local", backend=Judge.Backend.LOCAL)).evidence_mode == QUOTE
    local = Judge(name="local", backend=Judge.Backend.LOCAL, evidence_mode=REFERENCE)
    assert answer_shape_get(local).evidence_mode == REFERENCE
    server = Judge(name="vllm", backend=Judge.Backend.OPENAI_COMPATIBLE, base_url=fake_llm.base_url, model="m")
    assert answer_shape_get(server).evidence_mode == QUOTE
    server.evidence_mode = REFERENCE
    assert answer_shape_get(server).evidence_mode == REFERENCE
    settings.QA_EVIDENCE_MODE = "turns"
    with pytest.raises(Exception, match="'turns': set it to auto, quote or reference"):
        answer_shape_get(None)


