"""Audio that cannot hurt a worker: bounded channels, the length counted by decoding, a request that
decodes only a bounded prefix. The files are made by sox (and lame, for an MP3 sox cannot write)."""

from __future__ import annotations

import io
import time
import wave
from pathlib import Path

import av
import numpy as np
import pytest
from django.core.files import File

import qa.audio
from core.errors import InvalidInputError
from qa.models import Recording, Transcription
from qa.services import recording_ingest
from qa.transcribing import transcription_run_until_done
from qa.transcription import TranscriptionError, audio_measure
from tests.api.conftest import key_client, new_key
from tests.judge.conftest import judge_rubric
from tests.support.calls import headerless_vbr_mp3, sox
from tests.support.fake_openai import transcription
from tests.support.workers import celery_worker
from tests.transcribe.conftest import stored_files


@pytest.fixture
def remote(fake_llm, settings, media_root):
    """The remote recognizer, at the fake server: what reaches it is what the worker decoded."""
    settings.QA_TRANSCRIBE_MODEL = "fake-whisper"
    return fake_llm


def ingest(path: Path, *, rubric, **fields) -> Recording:
    with path.open("rb") as handle:
        recording, created = recording_ingest(
            external_id="call-1", source="crm", rubric=rubric, audio=File(handle, name=path.name), **fields
        )
    assert created
    return recording


def transcribed(recording: Recording) -> Transcription:
    transcription = recording.transcriptions.get()
    transcription_run_until_done(transcription_id=transcription.pk)
    transcription.refresh_from_db()
    recording.refresh_from_db()
    return transcription


def _peak(wav_bytes: bytes) -> float:
    with wave.open(io.BytesIO(wav_bytes)) as channel:
        samples = np.frombuffer(channel.readframes(channel.getnframes()), dtype="<i2")
    return float(np.abs(samples).max()) / 32767


# --- Channels ------------------------------------------------------------------


def _eight_channels(path: Path) -> Path:
    """Three seconds of eight channels: a tone at 0.9 of full scale on 3 (the agent), at 0.18 on 7
    (the customer), silence on the others. sox writes it as WAVE_FORMAT_EXTENSIBLE, layout 7.1."""
    sox("-r", "16000", "-c", "8", "-n", "-b", "16", path, "synth", "3", "sine", "440", "vol", "0.9",
        "remix", "1v0", "2v0", "3", "4v0", "5v0", "6v0", "7v0.2", "8v0")  # fmt: skip
    return path


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_eight_channel_audio_is_transcribed_by_a_real_worker_which_survives_it(
    fake_llm, settings, media_root, tmp_path
):
    """The probe's crash: PyAV read planar frames of 8 channels past their end, and the worker died
    of signal 11 with the call left running. A solo pool, so such a crash kills the worker itself."""
    settings.QA_TRANSCRIBE_MODEL = "fake-whisper"
    fake_llm.script(
        transcription([{"start": 0.0, "end": 1.0, "text": "Good morning."}]),
        transcription([{"start": 1.5, "end": 2.5, "text": "Hello."}]),
    )
    env = {
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "test-key",
        "QA_TRANSCRIBE_MODEL": "fake-whisper",
        "MEDIA_ROOT": str(media_root),
    }
    with celery_worker("-Q", "transcription", "--pool=solo", env=env) as worker:
        recording = ingest(
            _eight_channels(tmp_path / "eight.wav"),
            rubric=judge_rubric(language="en"),
            agent_channel="3",
            customer_channel="7",
            judge=False,
        )
        deadline = time.monotonic() + 60
        while not Transcription.objects.filter(recording=recording, status__in=["succeeded", "failed"]).exists():
            assert worker.poll() is None, f"the transcription worker died (exit status {worker.poll()})"
            assert time.monotonic() < deadline, "the transcription worker did not finish in time"
            time.sleep(0.2)
        assert worker.poll() is None

    done = recording.transcriptions.get()
    assert (done.status, done.error) == (Transcription.Status.SUCCEEDED, "")
    assert done.audio_seconds == pytest.approx(3.0, abs=0.01)
    recording.refresh_from_db()
    assert recording.transcript == "AGENT: Good morning.\nCUSTOMER: Hello.\n"
    # The agent's channel and the customer's, apart: each request carries its own channel's tone.
    agent, customer = fake_llm.requests[:2]
    assert (_peak(agent["file"]), _peak(customer["file"])) == (
        pytest.approx(0.9, abs=0.01),
        pytest.approx(0.18, abs=0.01),
    )


@pytest.mark.django_db
def test_more_channels_than_qa_audio_max_channels_are_refused_at_ingest_before_decoding(
    rubric, media_root, tmp_path
):
    nine = tmp_path / "nine.wav"
    sox("-n", "-r", "8000", "-c", "9", "-b", "16", nine, "synth", "1", "sine", "440")
    with pytest.raises(InvalidInputError) as refused:
        ingest(nine, rubric=rubric, agent_channel="1", customer_channel="2")
    assert refused.value.errors == {"audio": "The audio has 9 channels; the limit is 8 channels."}
    assert not Recording.objects.exists() and stored_files(media_root) == []


@pytest.mark.django_db(transaction=True)
def test_the_worker_refuses_more_channels_than_the_limit_before_decoding(remote, settings, tmp_path):
    """A recording stored before the limit was lowered: the worker checks the file's own header."""
    four = tmp_path / "four.wav"
    sox("-r", "16000", "-c", "4", "-n", four, "synth", "2", "sine", "440")
    recording = ingest(four, rubric=judge_rubric(), agent_channel="3", customer_channel="1")
    settings.QA_AUDIO_MAX_CHANNELS = 2

    done = transcribed(recording)

    assert done.status == Transcription.Status.FAILED
    assert done.error == "The audio has 4 channels; the limit is 2 channels (QA_AUDIO_MAX_CHANNELS)."
    assert recording.status == Recording.Status.FAILED and done.error in recording.failure_reason
    assert remote.requests == []


# --- Length ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def vbr_mp3(tmp_path_factory) -> Path:
    """Two seconds of noise then 58 of silence, 60 s in all: FFmpeg's header estimate is about 17 s."""
    path = tmp_path_factory.mktemp("vbr") / "call.mp3"
    headerless_vbr_mp3(path, loud_seconds=2, silent_seconds=58)
    return path


def test_the_mp3_under_reports_its_length_as_the_probe_saw(vbr_mp3):
    with av.open(str(vbr_mp3)) as container:
        header = container.duration / av.time_base
        decoded = sum(frame.samples for frame in container.decode(audio=0)) / 44100
    assert header < 20 and decoded == pytest.approx(60, abs=0.1)


@pytest.mark.django_db(transaction=True)
def test_a_call_whose_header_under_reports_its_length_is_failed_by_the_worker_counting_samples(
    remote, settings, vbr_mp3
):
    settings.QA_AUDIO_MAX_SECONDS = 30
    recording = ingest(vbr_mp3, rubric=judge_rubric())  # the header says 17 s: accepted at ingest
    assert recording.duration_seconds < 20

    done = transcribed(recording)

    assert done.status == Transcription.Status.FAILED
    assert done.error.startswith("The audio lasts more than 30 s, counted by decoding it (its header says 1")
    assert "the limit is 30 s (QA_AUDIO_MAX_SECONDS)" in done.error
    assert recording.status == Recording.Status.FAILED and "lasts more than 30 s" in recording.failure_reason
    assert remote.requests == []  # nothing of it was sent to the recognizer


class _Counting(io.BytesIO):
    """A file that counts the bytes read from it."""

    read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        data = super().read(size)
        self.read_bytes += len(data)
        return data

    def readinto(self, buffer) -> int:
        count = super().readinto(buffer)
        self.read_bytes += count
        return count


def test_decoding_stops_once_the_length_passes_the_limit(settings, tmp_path):
    """Two seconds of noise then two and a half minutes of silence, with a 10-second limit: the
    worker reads the file's first part only."""
    path = tmp_path / "long.mp3"
    headerless_vbr_mp3(path, loud_seconds=2, silent_seconds=150)
    settings.QA_AUDIO_MAX_SECONDS = 10
    file = _Counting(path.read_bytes())

    with pytest.raises(TranscriptionError, match="lasts more than 10 s") as refused:
        audio_measure(file)

    assert not refused.value.transient
    assert file.read_bytes < path.stat().st_size / 3, (file.read_bytes, path.stat().st_size)


def test_a_file_within_the_limit_is_measured_by_its_samples(settings, vbr_mp3):
    settings.QA_AUDIO_MAX_SECONDS = 60
    with vbr_mp3.open("rb") as file:
        assert audio_measure(file) == pytest.approx(60, abs=0.1)


# --- The request's bounded prefix ---------------------------------------------


@pytest.fixture(scope="module")
def long_silent_flac(tmp_path_factory) -> Path:
    """Ten minutes of eight channels of digital silence, as FLAC (47 KB): the probe's two hours in
    miniature, twenty times what a request decodes (qa.audio.INGEST_DECODE_SECONDS)."""
    path = tmp_path_factory.mktemp("silent") / "silent.flac"
    sox("-n", "-r", "8000", "-c", "8", path, "trim", "0", "600")
    return path


@pytest.mark.django_db(transaction=True)
def test_a_long_silent_file_is_accepted_without_decoding_it_all_and_the_worker_fails_it_as_silent(
    remote, long_silent_flac
):
    assert 600 >= 20 * qa.audio.INGEST_DECODE_SECONDS
    rubric = judge_rubric()
    client = key_client(new_key("crm")[1])
    with long_silent_flac.open("rb") as handle:
        response = client.post(
            "/api/recordings/",
            {"external_id": "call-1", "rubric": rubric.slug, "agent_channel": "1", "customer_channel": "2",
             "audio": handle},
            format="multipart",
        )  # fmt: skip

    # The request looked at the first 30 s only: silence there says nothing of the rest.
    assert response.status_code == 201, response.json()
    recording = Recording.objects.get()
    assert (recording.audio_channels, recording.duration_seconds) == (8, 600)

    done = transcribed(recording)

    assert (done.status, done.error) == (
        Transcription.Status.FAILED,
        "The audio is silent throughout: there is nothing to transcribe.",
    )
    assert recording.status == Recording.Status.FAILED
    assert remote.requests == []


@pytest.mark.django_db
def test_a_short_silent_file_is_still_refused_in_the_request(rubric, media_root, sox_file):
    """Within the prefix the request decodes, the whole file is seen: refused at once."""
    with pytest.raises(InvalidInputError, match="silent"):
        ingest(sox_file("silent-8.flac", 8000, 8, "trim", "0", "20"), rubric=rubric, agent_channel="1",
               customer_channel="2")  # fmt: skip
    assert stored_files(media_root) == []


@pytest.mark.django_db
def test_the_request_stops_decoding_at_its_time_budget(rubric, media_root, sox_file, monkeypatch):
    """A decoder slower than the budget (here, a budget of nothing) leaves the question to the worker."""
    monkeypatch.setattr(qa.audio, "INGEST_DECODE_BUDGET", 0.0)
    recording = ingest(sox_file("silent-short.wav", 8000, 1, "trim", "0", "3"), rubric=rubric)
    assert recording.status == Recording.Status.TRANSCRIBING


def test_the_decoding_benchmark_runs_at_a_small_size():
    """bench/audio at 72 s, so it cannot rot unnoticed (its figures are in its README)."""
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "bench/audio/decode.py", "--hours", "0.02"],
        cwd=root, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [(result["decoder"], result["result"]) for result in results] == [
        ("worker", "decoded 72 s"),
        ("faster-whisper", "decoded 72 s"),
    ]
    assert all(result["peak_rss_mb"] >= result["rss_before_mb"] > 0 for result in results)
