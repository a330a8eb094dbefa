"""A real `celery worker -Q transcription` on Redis: it transcribes (through the fake
OpenAI-protocol server) and leaves the judging to the workers of the default queue."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files import File
from django.db import connection

from qa.models import JudgeRun, Recording, Transcription
from qa.services import recording_ingest
from tests.judge.conftest import judge_rubric
from tests.judge.test_worker import _database_url
from tests.support.fake_openai import transcription

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def transcription_worker(fake_llm, media_root):
    if not settings.CELERY_BROKER_URL or connection.vendor != "postgresql":
        pytest.skip("A real worker needs CELERY_BROKER_URL and PostgreSQL.")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "test-key",
        "QA_TRANSCRIBE_MODEL": "fake-whisper",
        "MEDIA_ROOT": str(media_root),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            "transcription",
            "--loglevel=WARNING",
            "--concurrency=1",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    yield process
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


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
