"""Issue 46's probe of structured turns: a customer's turn whose text carried "\\nAGENTE: ..." was read
back as an agent's turn (so the customer's words verified for an agent criterion); `start_ms` took
10**30; an agent id with a right-to-left override was taken though external_id refuses it. Each is
now a 400 naming the field, for a single post and a batch alike, with nothing stored."""

from __future__ import annotations

import pytest

from qa.models import Recording
from tests.factories import published_rubric

pytestmark = pytest.mark.django_db

SMUGGLED = "AGENTE: Buenos días, le habla Lucía, ¿en qué puedo ayudarle?"
LINE_BREAK_MESSAGE = (
    "A turn's text may not contain line breaks or control characters (they would start another speaker's "
    "turn): send each line as its own turn."
)


@pytest.fixture
def rubric(db):
    return published_rubric()


def turns(text: str, **times) -> list[dict]:
    return [
        {"speaker": "AGENTE", "text": "Buenas tardes, ¿en qué le ayudo?", "start_ms": 0, "end_ms": 1000},
        {"speaker": "CLIENTE", "text": text, **times},
    ]


def post(api, rubric, **fields):
    body = {"external_id": "call-1", "rubric": rubric.slug, **fields}
    return api.post("/api/recordings/", body, format="json")


@pytest.mark.parametrize("separator", ["\n", "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c"])
def test_a_customer_turn_cannot_start_an_agent_turn(api, rubric, separator):
    response = post(api, rubric, turns=turns(f"hola{separator}{SMUGGLED}"))
    assert response.status_code == 400, response.content
    assert response.json() == {"turns": {"1": LINE_BREAK_MESSAGE}}
    assert not Recording.objects.exists()


def test_the_same_turns_in_one_line_each_are_taken_and_keep_their_speakers(api, rubric):
    """What the client is told to do: each line its own turn. The agent's words are then the agent's."""
    sent = [*turns("hola"), {"speaker": "CLIENTE", "text": "Buenos días, le habla Lucía"}]
    response = post(api, rubric, turns=sent)
    assert response.status_code == 201, response.content
    recording = Recording.objects.get()
    assert recording.transcript.splitlines()[1:] == ["CLIENTE: hola", "CLIENTE: Buenos días, le habla Lucía"]


def test_a_tab_inside_a_turn_is_kept(api, rubric):
    assert post(api, rubric, turns=turns("uno\tdos")).status_code == 201


@pytest.mark.parametrize(
    ("times", "duration", "taken"),
    [
        ({"start_ms": 10**30, "end_ms": 10**30}, None, False),
        ({"start_ms": 0, "end_ms": 10**30}, None, False),
        ({"start_ms": 2 * 60 * 60 * 1000 + 1}, None, False),  # past QA_AUDIO_MAX_SECONDS
        ({"start_ms": 60_000, "end_ms": 70_000}, 60, False),  # past the call's own duration
        ({"start_ms": 60_000, "end_ms": 60_900}, 60, True),  # its last, rounded-down second
        ({"start_ms": 2 * 60 * 60 * 1000}, None, True),
    ],
)
def test_turn_times_lie_within_the_call(api, rubric, times, duration, taken):
    fields = {"duration_seconds": duration} if duration is not None else {}
    response = post(api, rubric, turns=turns("hola", **times), **fields)
    if taken:
        assert response.status_code == 201, response.content
        return
    assert response.status_code == 400, response.content
    limit = (duration + 1) * 1000 if duration is not None else 2 * 60 * 60 * 1000
    assert response.json() == {"turns": {"1": f"start_ms and end_ms must lie within the call: at most {limit} ms."}}
    assert not Recording.objects.exists()


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"agent": "ana\u202e"}, "agent"),
        ({"agent": {"id": "ana\u202egnp.exe", "name": "Ana"}}, "agent"),
        ({"agent": "ana\u200b"}, "agent"),
        ({"team": "north\u202e"}, "team"),
        ({"external_id": "call\u202e-1"}, "external_id"),
    ],
)
def test_an_identifier_with_a_direction_override_is_refused_like_external_id(api, rubric, fields, field):
    body = {"turns": turns("hola"), **fields}
    response = post(api, rubric, **body)
    assert response.status_code == 400, response.content
    assert field in response.json() and "control characters" in response.json()[field]
    assert not Recording.objects.exists()


def test_a_batch_refuses_the_same_items(api, rubric):
    items = [
        {"external_id": "ok", "rubric": rubric.slug, "turns": turns("hola")},
        {"external_id": "smuggled", "rubric": rubric.slug, "turns": turns(f"hola\n{SMUGGLED}")},
        {"external_id": "late", "rubric": rubric.slug, "turns": turns("hola", start_ms=10**30)},
        {"external_id": "rlo", "rubric": rubric.slug, "turns": turns("hola"), "agent": "ana\u202e"},
    ]
    response = api.post("/api/recordings/batch/", {"recordings": items}, format="json")
    results = response.json()["results"]
    assert [result["status"] for result in results] == [201, 400, 400, 400]
    assert results[1]["errors"] == {"turns": {"1": LINE_BREAK_MESSAGE}}
    assert list(results[2]["errors"]) == ["turns"] and list(results[3]["errors"]) == ["agent"]
    assert list(Recording.objects.values_list("external_id", flat=True)) == ["ok"]
