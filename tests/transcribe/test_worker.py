"""A real `celery worker -Q transcription` on Redis: it transcribes (through the fake
OpenAI-protocol server) and leaves the judging to the workers of the default queue; a
transcription's claim is a lease it renews while the call runs, and a worker killed mid-call
has the call taken back and finished within that lease."""

from __future__ import annotations

import os
import signal
import time
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.core.files import File
from django.utils import timezone

from qa.models import JudgeRun, Recording, Transcription
from qa.services import recording_ingest
from qa.transcribing import transcriptions_sweep
from tests.judge.conftest import judge_rubric
from tests.support.fake_openai import transcription
from tests.support.workers import celery_worker, pool_processes

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@contextmanager
def transcription_worker_started(fake_llm, media_root, **env: str):
    env = {
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "test-key",
        "QA_TRANSCRIBE_MODEL": "fake-whisper",
        "MEDIA_ROOT": str(media_root),
        **env,
    }
    with celery_worker("-Q", "transcription", "--concurrency=1", env=env) as process:
        yield process


@pytest.fixture
def transcription_worker(fake_llm, media_root):
    with transcription_worker_started(fake_llm, media_root) as process:
        yield process


def test_the_transcription_queue_has_its_own_worker_and_judging_stays_on_the_default_queue(
    transcription_worker, fake_llm, spanish_call, settings
):
    settings.QA_TRANSCRIBE_MODEL = "fake-whisper"
    fake_llm.script(
        transcription([{"start": 0.0, "end": 5.1, "text": "Buenos días, le atiende Marta."}]),
        transcription([{"start": 5.6, "end": 9.2, "text": "Hola, me cobraron dos veces."}]),
    )
    with spanish_call[0].open("rb") as handle:
        recording, _ = recording_ingest(
            external_id="call-1", source="crm", rubric=judge_rubric(language="es"), audio=File(handle, name="es.wav")
        )

    deadline = time.monotonic() + 90
    while not Transcription.objects.filter(recording=recording, status__in=["succeeded", "failed"]).exists():
        assert transcription_worker.poll() is None, "the worker exited"
        assert time.monotonic() < deadline, "the transcription worker did not finish in time"
        time.sleep(0.2)

    recording.refresh_from_db()
    assert recording.transcriptions.get().status == Transcription.Status.SUCCEEDED
    assert recording.transcript.startswith("AGENTE: Buenos días")
    # Its judgment waits on the default queue, which this worker does not take.
    time.sleep(1)
    assert recording.status == Recording.Status.QUEUED
    assert JudgeRun.objects.get(recording=recording).status == JudgeRun.Status.PENDING


LEASE = 3  # seconds: QA_TRANSCRIBE_LEASE_SECONDS of these workers (the default is minutes)


def _ingest_tone(path, rubric) -> Recording:
    with path.open("rb") as handle:  # published to the transcription queue on commit
        recording, _ = recording_ingest(external_id="call-1", source="crm", rubric=rubric, audio=File(handle, name="tone.wav"))
    return recording


def _wait_for(condition, what: str, timeout: float, workers=()) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert all(worker.poll() is None for worker in workers), "the worker exited"
        assert time.monotonic() < deadline, f"{what} did not happen in time"
        time.sleep(0.1)


def test_a_worker_killed_mid_call_has_the_call_taken_back_and_finished_within_its_lease(
    fake_llm, media_root, sox_tone, settings
):
    """The pool process running the call dies (killed, or crashed as by a signal 11 in a decoder):
    nothing releases or fails its transcription. Its lease, no longer renewed, runs out, and the
    sweep hands the call out again."""
    settings.QA_TRANSCRIBE_MODEL = "fake-whisper"
    fake_llm.latency = 60  # the first call is still in flight when its process dies
    with transcription_worker_started(fake_llm, media_root, QA_TRANSCRIBE_LEASE_SECONDS=str(LEASE)) as worker:
        recording = _ingest_tone(sox_tone, judge_rubric(language="en"))
        running = Transcription.objects.filter(recording=recording, status=Transcription.Status.RUNNING)
        _wait_for(running.exists, "the worker's claim", 90, [worker])
        time.sleep(LEASE)  # the call in flight, its lease renewed meanwhile
        [pool] = pool_processes(worker)
        os.kill(pool, signal.SIGKILL)
        killed = timezone.now()
        claim = running.get()
        assert claim.attempts == 1 and claim.leased_until > claim.started_at + timedelta(seconds=LEASE)

        fake_llm.latency = 0
        fake_llm.script(transcription([{"start": 0.0, "end": 1.0, "text": "Good morning, how can I help?"}]))
        # The sweep (beat runs it every QA_JUDGE_SWEEP_INTERVAL) leaves the call alone while its
        # lease holds, then takes it back from the dead process and publishes it again.
        while not transcriptions_sweep():
            assert timezone.now() < claim.leased_until + timedelta(seconds=10), "the sweep never took the call back"
            time.sleep(0.2)
        assert timezone.now() > claim.leased_until  # not before the lease ran out
        done = Transcription.objects.filter(pk=claim.pk, status=Transcription.Status.SUCCEEDED)
        _wait_for(done.exists, "the call taken back", 60, [worker])

    finished = done.get()
    assert finished.attempts == 2
    recording.refresh_from_db()
    assert "Good morning, how can I help?" in recording.transcript
    # Finished within a lease of the kill (and a few seconds to run again), where before leases
    # the sweep waited for the task's time limit: QA_TRANSCRIBE_TIME_LIMIT + 30 s, about 3 hours.
    assert (finished.finished_at - killed).total_seconds() < LEASE + 15 < settings.QA_TRANSCRIBE_TIME_LIMIT


def test_a_live_worker_keeps_renewing_its_lease_through_a_call_longer_than_the_lease(
    fake_llm, media_root, sox_tone, settings
):
    settings.QA_TRANSCRIBE_MODEL = "fake-whisper"
    fake_llm.latency = 4 * LEASE
    fake_llm.script(transcription([{"start": 0.0, "end": 1.0, "text": "Good morning, how can I help?"}]))
    with transcription_worker_started(fake_llm, media_root, QA_TRANSCRIBE_LEASE_SECONDS=str(LEASE)) as worker:
        recording = _ingest_tone(sox_tone, judge_rubric(language="en"))
        active = Transcription.objects.filter(recording=recording)
        _wait_for(lambda: active.filter(status=Transcription.Status.RUNNING).exists(), "the claim", 90, [worker])
        leases = set()
        while active.filter(status=Transcription.Status.RUNNING).exists():
            assert transcriptions_sweep() == 0  # never taken back from a live worker
            leases |= set(active.values_list("leased_until", flat=True))
            time.sleep(0.3)
        _wait_for(lambda: active.filter(status=Transcription.Status.SUCCEEDED).exists(), "the call", 30, [worker])
    done = active.get()
    assert done.attempts == 1
    # Claimed with a lease of LEASE seconds and renewed every third of it, through a call four leases long.
    assert len(leases) >= 4
    assert done.finished_at - done.started_at > timedelta(seconds=3 * LEASE)


def test_a_lease_too_short_to_renew_is_refused_at_start():
    from tests.test_deployment import ROOT, settings_value

    result = settings_value(
        "QA_TRANSCRIBE_LEASE_SECONDS", ROOT, DJANGO_SETTINGS_MODULE="config.settings.test", QA_TRANSCRIBE_LEASE_SECONDS="2"
    )
    assert result.returncode != 0
    assert "QA_TRANSCRIBE_LEASE_SECONDS is 2: it must be at least 3 (seconds)" in result.stderr
