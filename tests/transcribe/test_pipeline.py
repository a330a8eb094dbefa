"""The transcription stage end to end, with the remote backend: the real `openai` client over
HTTP to the fake OpenAI-protocol server, which also judges the call afterwards."""

from __future__ import annotations

import io
import wave

import pytest
from django.core.files import File

from qa.models import JudgeRun, Recording, Transcription
from qa.services import recording_ingest
from qa.transcribing import transcription_create
from tests.judge.conftest import judge_rubric
from tests.support.fake_openai import error, transcription

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def remote(fake_llm, settings, media_root, eager_celery):
    settings.QA_TRANSCRIBE_MODEL = "fake-whisper"
    return fake_llm


def ingest(path, *, rubric, external_id="call-1", **fields):
    with path.open("rb") as handle:
        recording, _ = recording_ingest(
            external_id=external_id, source="crm", rubric=rubric, audio=File(handle, name=path.name), **fields
        )
    recording.refresh_from_db()
    return recording


def test_two_channels_become_agent_and_customer_turns_by_time_then_the_call_is_judged(remote, spanish_call):
    path, script = spanish_call
    remote.script(
        transcription(
            [
                {"start": 0.0, "end": 5.1, "text": "Buenos días, le atiende Marta."},
                {"start": 9.7, "end": 15.1, "text": "Lamento la molestia."},
            ]
        ),
        transcription(
            [
                {"start": 5.6, "end": 9.2, "text": "Hola, me cobraron dos veces."},
                {"start": 15.7, "end": 18.6, "text": "Bueno, perfecto."},
            ]
        ),
    )
    recording = ingest(path, rubric=judge_rubric(language="es"))

    assert recording.transcript == (
        "AGENTE: Buenos días, le atiende Marta.\nCLIENTE: Hola, me cobraron dos veces.\n"
        "AGENTE: Lamento la molestia.\nCLIENTE: Bueno, perfecto.\n"
    )
    assert [(turn["start_ms"], turn["end_ms"]) for turn in recording.turns] == [
        (0, 5100),
        (5600, 9200),
        (9700, 15100),
        (15700, 18600),
    ]
    assert recording.turns[1]["words"][0] == {"word": "Hola,", "start_ms": 5600, "end_ms": 6320}
    assert recording.speakers_known and recording.transcript_source == Recording.TranscriptSource.ASR
    done = recording.transcriptions.get()
    assert (done.status, done.backend, done.model, done.attempts) == (
        "succeeded",
        "openai-compatible",
        "fake-whisper",
        1,
    )
    assert done.audio_seconds == pytest.approx(script[-1].end_ms / 1000 + 0.5, abs=0.05)
    # Then judged, from the transcript (the fake judge quotes its first line).
    assert recording.status in (Recording.Status.JUDGED, Recording.Status.IN_REVIEW)
    assert recording.current_run.scores.filter(evidence_verified=True).exists()

    left, right = remote.requests[:2]
    assert left["path"] == "/v1/audio/transcriptions"
    assert (left["model"], left["response_format"], left["language"]) == ("fake-whisper", "verbose_json", "es")
    assert set(left["timestamp_granularities[]"]) == {"word", "segment"}
    for sent in (left, right):
        with wave.open(io.BytesIO(sent["file"])) as channel:
            assert (channel.getnchannels(), channel.getframerate()) == (1, 16000)
            assert channel.getnframes() / 16000 == pytest.approx(done.audio_seconds, abs=0.01)


def test_the_agent_channel_setting_swaps_the_speakers(remote, spanish_call):
    remote.script(
        transcription([{"start": 0.0, "end": 2.0, "text": "Left side speaking."}]),
        transcription([{"start": 2.5, "end": 4.0, "text": "Right side speaking."}]),
    )
    recording = ingest(spanish_call[0], rubric=judge_rubric(language="en"), agent_channel="right")
    assert recording.transcript == "CUSTOMER: Left side speaking.\nAGENT: Right side speaking.\n"


def test_mono_without_diarization_has_the_unknown_speaker_and_goes_to_review(remote, sox_tone):
    remote.script(
        transcription(
            [
                {"start": 0.0, "end": 1.0, "text": "Good morning, thank you for calling."},
                {"start": 1.2, "end": 2.0, "text": "I lost my card."},
            ]
        )
    )
    recording = ingest(sox_tone, rubric=judge_rubric(language="en"))

    assert recording.transcript == "UNKNOWN: Good morning, thank you for calling. I lost my card.\n"
    assert not recording.speakers_known
    assert recording.status == Recording.Status.IN_REVIEW
    assert "unknown_speaker" in recording.review_reasons


def test_mono_with_a_diarizing_server_keeps_its_speakers(remote, sox_tone):
    remote.script(
        transcription(
            [
                {"start": 0.0, "end": 1.0, "text": "Good morning.", "speaker": "A"},
                {"start": 1.2, "end": 2.0, "text": "Hello there.", "speaker": "B"},
            ],
            speakers=True,
        )
    )
    recording = ingest(sox_tone, rubric=judge_rubric(language="en"))
    assert recording.transcript == "A: Good morning.\nB: Hello there.\n"
    assert recording.speakers_known and "unknown_speaker" not in recording.review_reasons


def test_a_failed_transcription_keeps_its_reason_and_can_be_retried(remote, sox_tone):
    remote.script(error(400, "Unsupported audio"))
    recording = ingest(sox_tone, rubric=judge_rubric(language="en"))

    failed = recording.transcriptions.get()
    assert (
        failed.status == Transcription.Status.FAILED
        and "HTTP 400" in failed.error
        and "Unsupported audio" in failed.error
    )
    assert recording.status == Recording.Status.FAILED and "Unsupported audio" in recording.failure_reason
    assert not JudgeRun.objects.exists()

    remote.script(transcription([{"start": 0.0, "end": 1.0, "text": "Good morning, how can I help?"}]))
    transcription_create(recording=recording)
    recording.refresh_from_db()
    assert recording.transcriptions.filter(status=Transcription.Status.SUCCEEDED).count() == 1
    assert recording.transcriptions.count() == 2 and recording.failure_reason == ""
    assert recording.status in (Recording.Status.JUDGED, Recording.Status.IN_REVIEW)


def test_a_transient_failure_gives_the_transcription_back_to_be_claimed_again(remote, sox_tone, settings):
    settings.QA_TRANSCRIBE_MAX_ATTEMPTS = 2
    remote.script(error(503, "busy"), error(503, "busy"))
    recording = ingest(sox_tone, rubric=judge_rubric(language="en"))
    pending = recording.transcriptions.get()
    # In-process mode has no delayed delivery: it waits, pending, for the sweep.
    assert (pending.status, pending.attempts, recording.status) == ("pending", 1, Recording.Status.TRANSCRIBING)
    assert "Will retry" in pending.error

    from qa.transcribing import transcription_execute

    transcription_execute(transcription_id=pending.pk)
    pending.refresh_from_db()
    assert (pending.status, pending.attempts) == ("failed", 2) and "Gave up after 2 attempts" in pending.error


def test_the_sweep_publishes_a_transcription_the_broker_never_got(remote, sox_tone, settings):
    from datetime import timedelta

    from django.utils import timezone

    from qa.transcribing import transcriptions_sweep

    remote.script(transcription([{"start": 0.0, "end": 1.0, "text": "Good morning, how can I help?"}]))
    recording = Recording.objects.create(
        external_id="lost",
        source="crm",
        rubric=judge_rubric(language="en"),
        content_hash="x",
        audio_channels=1,
        status=Recording.Status.TRANSCRIBING,
    )
    with sox_tone.open("rb") as handle:
        recording.audio.save("tone.wav", File(handle))
    lost = Transcription.objects.create(recording=recording)
    Transcription.objects.filter(pk=lost.pk).update(created_at=timezone.now() - timedelta(minutes=5))

    assert transcriptions_sweep() == 1  # in-process here: published means done
    lost.refresh_from_db()
    assert lost.status == Transcription.Status.SUCCEEDED


def test_the_admin_transcribes_a_failed_recording_again(remote, sox_tone, client, django_user_model):
    remote.script(error(400, "Unsupported audio"))
    recording = ingest(sox_tone, rubric=judge_rubric(language="en"))
    assert recording.status == Recording.Status.FAILED

    remote.script(transcription([{"start": 0.0, "end": 1.0, "text": "Good morning, how can I help?"}]))
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw"))
    response = client.post(
        "/admin/qa/recording/", {"action": "transcribe_again", "_selected_action": [recording.pk]}, follow=True
    )
    assert "1 transcription enqueued." in response.content.decode()
    recording.refresh_from_db()
    assert recording.transcript == "UNKNOWN: Good morning, how can I help?\n"
