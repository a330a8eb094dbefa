"""A real `celery worker -Q transcription` on Redis: it transcribes (through the fake
OpenAI-protocol server) and leaves the judging to the workers of the default queue."""

from __future__ import annotations

import time

import pytest
from django.core.files import File

from qa.models import JudgeRun, Recording, Transcription
from qa.services import recording_ingest
from tests.judge.conftest import judge_rubric
from tests.support.fake_openai import transcription
from tests.support.workers import celery_worker

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def transcription_worker(fake_llm, media_root):
    env = {
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "test-key",
        "QA_TRANSCRIBE_MODEL": "fake-whisper",
        "MEDIA_ROOT": str(media_root),
    }
    with celery_worker("-Q", "transcription", "--concurrency=1", env=env) as process:
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
