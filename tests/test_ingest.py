import hashlib
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from core.errors import InvalidInputError
from qa.models import JudgeRun, Recording
from qa.services import RecordingConflictError, Turn, recording_ingest
from tests.factories import SAMPLE_TRANSCRIPT, RubricFactory


def ingest(rubric, **fields):
    return recording_ingest(**{"external_id": "call-1", "source": "crm", "rubric": rubric, **fields})


@pytest.mark.django_db
def test_a_new_recording_is_stored_and_queued_once_committed(rubric, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as enqueued:
        recording, created = ingest(rubric, transcript=SAMPLE_TRANSCRIPT, agent_id="ag-1")
    assert created and recording.status == Recording.Status.QUEUED
    assert recording.runs.get().status == JudgeRun.Status.PENDING
    assert len(enqueued) == 1


@pytest.mark.django_db
def test_the_same_post_again_returns_the_stored_recording_without_a_second_run(rubric, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        first, _ = ingest(rubric, transcript=SAMPLE_TRANSCRIPT)
    with django_capture_on_commit_callbacks() as enqueued:
        again, created = ingest(rubric, transcript=SAMPLE_TRANSCRIPT)
    assert (again.pk, created, enqueued) == (first.pk, False, [])
    assert JudgeRun.objects.count() == 1

    with pytest.raises(RecordingConflictError):
        ingest(rubric, transcript=SAMPLE_TRANSCRIPT + "CLIENTE: Una cosa más.\n")
    assert Recording.objects.get().transcript == SAMPLE_TRANSCRIPT


@pytest.mark.django_db
def test_the_idempotency_hash_is_stable_and_reads_only_its_listed_fields(django_capture_on_commit_callbacks):
    """A stored hash must stay what it was: otherwise every resend after an upgrade would be a 409."""
    rubric = RubricFactory(slug="care", version=3, status="published")
    with django_capture_on_commit_callbacks():
        recording, _ = ingest(rubric, transcript="AGENTE: Hola.\n", agent_id="ag-1", agent_name="Ana", team="cards")
    # Computed when the list of fields was made explicit, from exactly these values.
    expected = hashlib.sha256(
        json.dumps(
            {
                "transcript": "AGENTE: Hola.\n",
                "rubric": ["care", 3],
                "agent": ["ag-1", "Ana"],
                "team": "cards",
                "channel": "voice",
                "language": "",
                "occurred_at": None,
                "duration_seconds": None,
            },
            sort_keys=True,
        ).encode()
    ).hexdigest()
    assert recording.content_hash == expected
    # A field outside the list (how the transcript was made) does not make a resend a conflict.
    again, created = ingest(
        rubric, transcript="AGENTE: Hola.\n", agent_id="ag-1", agent_name="Ana", team="cards", transcript_source="asr"
    )
    assert (again.pk, created) == (recording.pk, False)


@pytest.mark.django_db
def test_structured_turns_are_kept_and_rendered_as_speaker_lines(rubric, django_capture_on_commit_callbacks):
    turns = [Turn("agent", "hello this is harper valley", 1669, 4339), Turn("caller", "i lost my card", 12890, 13220)]
    with django_capture_on_commit_callbacks():
        recording, _ = ingest(rubric, turns=turns, judge=False)
    assert recording.transcript == "agent: hello this is harper valley\ncaller: i lost my card\n"
    assert recording.turns[1] == {"speaker": "caller", "text": "i lost my card", "start_ms": 12890, "end_ms": 13220}
    assert recording.status == Recording.Status.RECEIVED and not recording.runs.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"transcript": "The agent greeted the customer and solved the issue."}, "transcript", "no speaker turns"),
        ({"transcript": "   \n"}, "transcript", "empty"),
        ({"transcript": SAMPLE_TRANSCRIPT, "turns": [Turn("a", "b")]}, "transcript", "not both"),
        ({}, "transcript", "not both"),
        ({"turns": []}, "turns", "At least one turn"),
        ({"turns": [Turn("agent", "  ")]}, "turns", "non-empty text"),
        ({"external_id": " ", "transcript": SAMPLE_TRANSCRIPT}, "external_id", "blank"),
        ({"external_id": "call-1\nINFO forged log line", "transcript": SAMPLE_TRANSCRIPT}, "external_id", "control"),
        ({"external_id": "call\x00-1", "transcript": SAMPLE_TRANSCRIPT}, "external_id", "control"),
        ({"external_id": "call-\u202e1", "transcript": SAMPLE_TRANSCRIPT}, "external_id", "control"),
        ({"source": "crm\x1b[31m", "transcript": SAMPLE_TRANSCRIPT}, "source", "control"),
        ({"source": "crm\t2", "transcript": SAMPLE_TRANSCRIPT}, "source", "control"),
        (
            {"transcript": SAMPLE_TRANSCRIPT, "occurred_at": timezone.now() + timedelta(days=1)},
            "occurred_at",
            "future",
        ),
    ],
)
def test_bad_input_names_the_field_and_stores_nothing(rubric, fields, field, message):
    with pytest.raises(InvalidInputError) as caught:
        ingest(rubric, **fields)
    assert message in str(caught.value.errors[field])
    assert not Recording.objects.exists() and not JudgeRun.objects.exists()


@pytest.mark.django_db
def test_a_draft_rubric_cannot_judge_recordings():
    with pytest.raises(InvalidInputError) as caught:
        ingest(RubricFactory(slug="care"), transcript=SAMPLE_TRANSCRIPT)
    assert "care" in caught.value.errors["rubric"]
    assert not Recording.objects.exists()
