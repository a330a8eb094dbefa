"""Evidence has a time: the recording API gives each turn's start and end (ms) where the recognizer
or the sender gave them, and each verified quote's fragments their times in the audio, so an
external player can play the quote. Judged by the fake OpenAI-compatible server over HTTP."""

from __future__ import annotations

import pytest

from qa.execution import judge_run_until_done
from qa.judging import judge_run_create
from qa.models import Recording
from qa.services import turns_render
from qa.transcription import SpeakerTurn, Word
from tests.factories import RecordingFactory
from tests.judge.conftest import fake_llm  # noqa: F401
from tests.support.fake_openai import answer_for, completion

pytestmark = pytest.mark.django_db

TURNS = [
    {"speaker": "AGENTE", "text": "Buenas tardes, le atiende Marta de Telco Sur.", "start_ms": 0, "end_ms": 2400},
    {"speaker": "CLIENTE", "text": "Me cobraron dos veces la factura de octubre.", "start_ms": 2600, "end_ms": 5100},
    {"speaker": "AGENTE", "text": "Le devuelvo el cobro duplicado hoy antes de las 18.", "start_ms": 5300, "end_ms": 8800},
]


def judged(recording: Recording, fake_llm, quotes: dict[str, str]) -> Recording:  # noqa: F811
    def reply(request: dict) -> dict:
        answer = answer_for(request)
        for key, quote in quotes.items():
            answer["scores"][key]["evidence"] = quote
        return completion(answer)

    fake_llm.script(reply)
    run = recording.runs.get()
    judge_run_until_done(run_id=run.pk)
    return recording


def detail(api, recording: Recording) -> dict:
    response = api.get(f"/api/recordings/{recording.pk}/")
    assert response.status_code == 200
    return response.json()


def fragments(body: dict, key: str) -> list[dict]:
    [score] = [score for score in body["scores"] if score["criterion_key"] == key]
    return score["verification"]["fragments"]


def test_structured_turns_sent_with_times_give_turn_and_quote_times(api, rubric, fake_llm, django_capture_on_commit_callbacks):  # noqa: F811
    posted = {"external_id": "timed-1", "rubric": rubric.slug, "agent": "a-1", "turns": TURNS}
    with django_capture_on_commit_callbacks():
        assert api.post("/api/recordings/", posted, format="json").status_code == 201
    recording = judged(
        Recording.objects.get(external_id="timed-1"),
        fake_llm,
        {
            "c1": "AGENTE: Buenas tardes, le atiende",  # the agent's name is masked for an external judge
            # Two fragments in two turns: each gets its own turn's time.
            "c2": "dos veces la factura ... Le devuelvo el cobro duplicado",
            "c3": "El agente devolvió el dinero enseguida",  # not in the call
        },
    )

    body = detail(api, recording)

    transcript = body["transcript"]
    assert [(t["speaker"], t["text"], t["start_ms"], t["end_ms"]) for t in body["turns"]] == [
        (turn["speaker"], turn["text"], turn["start_ms"], turn["end_ms"]) for turn in TURNS
    ]
    assert all(transcript[t["start"] : t["end"]] == t["text"] for t in body["turns"])
    [c1] = fragments(body, "c1")
    assert transcript[c1["start"] : c1["end"]] == "Buenas tardes, le atiende"
    assert (c1["start_ms"], c1["end_ms"]) == (0, 2400)  # turns without word times: the turn's
    first, second = fragments(body, "c2")
    assert (first["start_ms"], first["end_ms"]) == (2600, 5100)
    assert (second["start_ms"], second["end_ms"]) == (5300, 8800)
    # An unverified quote has nothing to play.
    c3 = fragments(body, "c3")
    assert all(fragment["start_ms"] is None and fragment["end_ms"] is None for fragment in c3)


def test_a_transcribed_call_gives_the_words_times(api, rubric, fake_llm):  # noqa: F811
    """Turns as the recognizer keeps them (qa.transcription): each word with its own time."""
    spoken = [
        SpeakerTurn("AGENTE", 0, 3000, [Word(word, 500 * i, 500 * i + 400) for i, word in enumerate("Buenas tardes le atiende Marta".split())]),
        SpeakerTurn("CLIENTE", 3200, 6000, [Word(word, 3200 + 400 * i, 3200 + 400 * i + 300) for i, word in enumerate("me cobraron dos veces".split())]),
    ]  # fmt: skip
    recording = RecordingFactory(
        rubric=rubric, transcript=turns_render(spoken), turns=[turn.to_dict() for turn in spoken], transcript_source="asr"
    )
    judge_run_create(recording=recording)
    judged(recording, fake_llm, {"c1": "tardes le atiende", "c2": "atiende Marta ... me cobraron dos", "c3": "cobraron dos veces"})

    body = detail(api, recording)

    assert [(t["start_ms"], t["end_ms"]) for t in body["turns"]] == [(0, 3000), (3200, 6000)]
    [c1] = fragments(body, "c1")
    assert (c1["start_ms"], c1["end_ms"]) == (500, 1900)  # "tardes" starts at 500, "atiende" ends at 1900
    marta, cobraron = fragments(body, "c2")
    assert (marta["start_ms"], marta["end_ms"]) == (1500, 2400)
    assert (cobraron["start_ms"], cobraron["end_ms"]) == (3200, 4300)
    [c3] = fragments(body, "c3")
    assert (c3["start_ms"], c3["end_ms"]) == (3600, 4700)


def test_a_text_transcript_has_turns_without_times(api, rubric, fake_llm):  # noqa: F811
    recording = RecordingFactory(rubric=rubric)
    judge_run_create(recording=recording)
    judged(recording, fake_llm, {})

    body = detail(api, recording)

    assert [t["speaker"] for t in body["turns"]] == ["AGENTE", "CLIENTE"] * 3
    assert {(t["start_ms"], t["end_ms"]) for t in body["turns"]} == {(None, None)}
    for score in body["scores"]:
        assert score["evidence_verified"]
        assert [[f["start"], f["end"]] for f in score["verification"]["fragments"]] == score["verification"]["spans"]
        assert all(f["start_ms"] is None for f in score["verification"]["fragments"])
