"""Audio at ingest: accepted formats, and every kind of bad file refused with nothing stored."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import av
import numpy as np
import pytest
from django.core.files import File
from django.db import transaction

from qa.audio import AudioTooLargeError
from core.errors import InvalidInputError
from qa.models import Recording, Transcription
from qa.services import audio_orphans_delete, recording_ingest
from tests.support.calls import sox
from tests.transcribe.conftest import stored_files


def ingest(rubric, path: Path, **fields):
    with path.open("rb") as handle:
        return recording_ingest(
            external_id="call-1", source="crm", rubric=rubric, audio=File(handle, name=path.name), **fields
        )


def _encoded(directory: Path, name: str, codec: str) -> Path:
    """Two seconds of a two-channel tone, encoded by PyAV (sox writes neither Opus nor M4A)."""
    path = directory / name
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=48000, layout="stereo")
        t = np.arange(48000 * 2) / 48000
        samples = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
        frame = av.AudioFrame.from_ndarray(np.stack([samples, samples]), format="fltp", layout="stereo")
        frame.sample_rate = 48000
        for packet in stream.encode(frame):
            container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["call.wav", "call.flac", "call.mp3", "call.ogg", "call.opus", "call.m4a"])
def test_each_accepted_format_is_stored_and_its_transcription_enqueued(
    name, rubric, media_root, sox_file, tmp_path, django_capture_on_commit_callbacks
):
    if name == "call.opus":
        path = _encoded(tmp_path, name, "libopus")
    elif name == "call.m4a":
        path = _encoded(tmp_path, name, "aac")
    else:
        path = sox_file(name, 16000, 2, "synth", "2", "sine", "440")
    with django_capture_on_commit_callbacks() as enqueued:
        recording, created = ingest(rubric, path, agent_channel="right")

    assert created and recording.status == Recording.Status.TRANSCRIBING
    assert (recording.audio_channels, recording.agent_channel, recording.duration_seconds) == (2, "right", 2)
    assert recording.transcript == "" and recording.transcript_source == Recording.TranscriptSource.ASR
    assert recording.transcriptions.get().status == Transcription.Status.PENDING
    assert len(enqueued) == 1
    [stored] = stored_files(media_root)
    assert stored.read_bytes() == path.read_bytes()
    assert not stored.name.startswith("call")  # the storage name is ours, not the client's


@pytest.mark.django_db
def test_the_same_file_again_is_the_same_recording_and_another_file_a_conflict(rubric, media_root, sox_file):
    first = sox_file("a.wav", 16000, 2, "synth", "1", "sine", "300")
    other = sox_file("b.wav", 16000, 2, "synth", "1", "sine", "500")
    recording, _ = ingest(rubric, first)
    again, created = ingest(rubric, first)
    assert (again.pk, created) == (recording.pk, False)
    with pytest.raises(Exception, match="different content"):
        ingest(rubric, other)
    assert len(stored_files(media_root)) == 1


def _bad_files(sox_file, tmp_path) -> dict[str, tuple[Path, str]]:
    text = tmp_path / "notes.wav"
    text.write_text("AGENTE: Hola.\nCLIENTE: Hola.\n")
    noise = tmp_path / "random.mp3"
    noise.write_bytes(np.random.default_rng(7).integers(0, 256, 50_000, dtype=np.uint8).tobytes())
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    truncated = tmp_path / "truncated.flac"
    truncated.write_bytes(sox_file("whole.flac", 16000, 1, "synth", "2", "sine", "440").read_bytes()[:40])
    left = sox_file("l.wav", 16000, 1, "synth", "2", "sine", "300")
    three = tmp_path / "three.wav"
    sox("-M", left, left, left, three)
    return {
        "not audio": (text, "not readable audio"),
        "unreadable": (noise, "not readable audio"),
        "empty": (empty, "empty"),
        "cut short": (truncated, "not readable audio"),
        "silent": (sox_file("silent.wav", 16000, 2, "trim", "0", "3"), "silent"),
        "too long": (sox_file("long.wav", 8000, 1, "synth", "5", "sine", "440"), "limit is 4 s"),
        "three channels": (three, "3 channels"),
    }


@pytest.mark.django_db
def test_a_bad_file_of_each_kind_is_refused_naming_the_problem_and_nothing_is_stored(
    rubric, media_root, sox_file, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.QA_AUDIO_MAX_SECONDS = 4
    for kind, (path, message) in _bad_files(sox_file, tmp_path).items():
        with django_capture_on_commit_callbacks() as enqueued, pytest.raises(InvalidInputError) as refused:
            ingest(rubric, path)
        assert message in refused.value.errors["audio"], (kind, refused.value.errors)
        assert (Recording.objects.count(), Transcription.objects.count(), enqueued) == (0, 0, []), kind
        assert stored_files(media_root) == [], kind


@pytest.mark.django_db
def test_a_file_over_the_size_limit_is_refused_as_too_large(rubric, media_root, sox_file, settings):
    path = sox_file("big.wav", 16000, 2, "synth", "2", "sine", "440")
    settings.QA_AUDIO_MAX_BYTES = path.stat().st_size - 1
    with pytest.raises(AudioTooLargeError, match="limit is"):
        ingest(rubric, path)
    assert Recording.objects.count() == 0 and stored_files(media_root) == []


@pytest.mark.django_db
def test_audio_and_a_transcript_together_are_refused(rubric, media_root, sox_file):
    path = sox_file("a.wav", 16000, 1, "synth", "1", "sine", "300")
    with pytest.raises(InvalidInputError, match="not both"):
        ingest(rubric, path, transcript="AGENTE: Hola.\n")
    with pytest.raises(InvalidInputError, match="agent_channel"):
        ingest(rubric, path, agent_channel="middle")
    assert Recording.objects.count() == 0 and stored_files(media_root) == []


@pytest.mark.django_db
def test_an_ingest_its_caller_rolls_back_leaves_no_file_once_swept(rubric, media_root, sox_file):
    kept = sox_file("kept.wav", 16000, 2, "synth", "1", "sine", "300")
    lost = sox_file("lost.wav", 16000, 2, "synth", "1", "sine", "500")
    recording, _ = ingest(rubric, kept)
    with pytest.raises(RuntimeError), transaction.atomic():
        with lost.open("rb") as handle:
            recording_ingest(external_id="call-2", source="crm", rubric=rubric, audio=File(handle, name="lost.wav"))
        assert len(stored_files(media_root)) == 2  # the file is written before the transaction commits...
        raise RuntimeError("the caller's next step fails")
    assert list(Recording.objects.values_list("external_id", flat=True)) == ["call-1"]
    orphan = next(path for path in stored_files(media_root) if path.read_bytes() == lost.read_bytes())

    # ...and no rollback hook can remove it: the sweep does, once it is older than an ingest in flight.
    assert audio_orphans_delete() == []
    assert audio_orphans_delete(older_than=timedelta(0)) == [orphan.relative_to(media_root).as_posix()]
    assert stored_files(media_root) == [media_root / recording.audio.name]
