"""`recording_input` (the JSON body's checks, shared by the single post and the batch) answers
exactly as RecordingIngestSerializer, which describes the body in the schema and parses multipart:
the same values for good bodies, the same messages for bad ones."""

from __future__ import annotations

import pytest

from access.scope import EVERYTHING
from core.api.exceptions import error_tree
from qa.api.recording_input import recording_checks, recording_input, rubric_lookup
from qa.api.serializers import RecordingIngestSerializer
from core.errors import InvalidInputError
from tests.api.test_ingest import BAD_BODIES, payload

EXTRA = {
    "numbers as text": lambda data: data.update(external_id=12, team=3.5, language=7),
    "booleans are not text": lambda data: data.update(external_id=True, team=False),
    "ids trimmed": lambda data: data.update(external_id="  call-9 ", source=" crm "),
    "null text": lambda data: data.update(team=None, transcript=None),
    "NUL and surrogates": lambda data: data.update(team="a\x00b", external_id="x\ud800y"),
    "too long and not a slug": lambda data: data.update(rubric="ñ" * 101),
    "slug with spaces": lambda data: data.update(rubric="a b"),
    "external_id too long": lambda data: data.update(external_id="x" * 201),
    "agent as a string": lambda data: data.update(agent="a-3"),
    "agent blank id": lambda data: data.update(agent=""),
    "agent null": lambda data: data.update(agent=None),
    "agent list": lambda data: data.update(agent=["a"]),
    "agent fields": lambda data: data.update(agent={"id": "x" * 101, "name": None}),
    "agent without name": lambda data: data.update(agent={"id": " a-4 "}),
    "naive datetime": lambda data: data.update(occurred_at="2026-01-05T10:00:00"),
    "offset datetime": lambda data: data.update(occurred_at="2026-01-05T10:00:00+02:00"),
    "datetime number": lambda data: data.update(occurred_at=12),
    "null datetime": lambda data: data.update(occurred_at=None),
    "duration as text": lambda data: data.update(duration_seconds="12.0"),
    "duration fraction": lambda data: data.update(duration_seconds=1.5),
    "duration too big": lambda data: data.update(duration_seconds=2**31),
    "duration boolean": lambda data: data.update(duration_seconds=True),
    "duration null": lambda data: data.update(duration_seconds=None),
    "duration long text": lambda data: data.update(duration_seconds="1" * 1001),
    "channel null": lambda data: data.update(channel=None),
    "channel blank": lambda data: data.update(channel=""),
    "channel number": lambda data: data.update(channel=5),
    "blank transcript kept": lambda data: data.update(transcript="  "),
    "audio in JSON": lambda data: data.update(audio="x.wav"),
    "audio null": lambda data: data.update(audio=None),
    "agent_channel": lambda data: data.update(agent_channel="left"),
    "agent_channel bad": lambda data: data.update(agent_channel="middle"),
    "transcript_source": lambda data: data.update(transcript_source="asr"),
    "unknown fields ignored": lambda data: data.update(colour="blue"),
    "turns": lambda data: (
        data.pop("transcript"),
        data.update(
            turns=[
                {"speaker": " A ", "text": " hola ", "start_ms": "0", "end_ms": 5.0},
                {"speaker": "B", "text": "  ", "start_ms": None},
            ]
        ),
    ),
    "bad turns": lambda data: (
        data.pop("transcript"),
        data.update(
            turns=[
                None,
                5,
                {"speaker": "", "text": ""},
                {"speaker": "x" * 101, "text": "hola", "start_ms": -1, "end_ms": "soon"},
                {"speaker": "A", "text": "ok"},
            ]
        ),
    ),
    "turns null": lambda data: (data.pop("transcript"), data.update(turns=None)),
    "turns object": lambda data: (data.pop("transcript"), data.update(turns={"0": {}})),
    "everything wrong": lambda data: data.clear(),
}
CASES = {**{name: change for name, (change, _field) in BAD_BODIES.items()}, **EXTRA}


def _serializer_answer(data):
    serializer = RecordingIngestSerializer(data=data, context={"scope": EVERYTHING})
    if serializer.is_valid():
        return "valid", dict(serializer.validated_data)
    return "invalid", error_tree(serializer.errors, top=True)


def _input_answer(data):
    try:
        return "valid", recording_input(data, rubric=rubric_lookup(EVERYTHING))
    except InvalidInputError as error:
        return "invalid", error.errors


@pytest.mark.django_db
@pytest.mark.parametrize("change", CASES.values(), ids=CASES.keys())
def test_the_same_values_and_messages_as_the_serializer(rubric, change):
    data = payload(rubric)
    change(data)
    assert _input_answer(data) == _serializer_answer(data)


@pytest.mark.django_db
@pytest.mark.parametrize("body", [None, [1, 2], "just a string", 5])
def test_a_body_that_is_not_an_object_is_refused_as_the_serializer_does(body):
    assert _input_answer(body) == _serializer_answer(body)


def test_every_field_of_the_serializer_is_checked():
    """A field added to the serializer (the schema) must be added to recording_input too."""
    assert list(recording_checks(rubric_lookup(EVERYTHING))) == list(RecordingIngestSerializer().fields)
