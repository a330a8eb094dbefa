"""Transcribing a recording's audio: the stage before judging.

The recording moves received -> transcribing -> queued (pending judgment); its
transcription is a job of the one executor (core.jobs): claimed with a lease that
is renewed while the recognizer runs (QA_TRANSCRIBE_LEASE_SECONDS), so a worker
that dies mid-call has its call taken back by the sweep within a lease, not
after the task's time limit; transient failures are given back with backoff; a
failure keeps its reason on the transcription and the recording, and
`transcription_create` (qa.services) starts a new one (the admin's "Transcribe
again"). The transcript, its turns and the judging's enqueueing are written in
one transaction with the transcription's success.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.jobs import (
    JobKind,
    Outcome,
    Result,
    job_claim,
    job_fail,
    job_give_back,
    job_interrupted,
    job_release,
    job_succeed,
    jobs_due,
    lease_kept,
    until_done,
)
from qa.judging import judge_run_create, judge_run_publish
from qa.models import Recording, Transcription
from qa.redaction.services import recording_transcript_replaced
from qa.services import transcription_create  # noqa: F401  (its home before it moved to qa.services)
from qa.services import transcription_publish, turns_render
from qa.transcription import Transcript, TranscriptionError, recognizer_get, transcribe


@dataclass(frozen=True)
class TranscriptionJob:
    row: Transcription


class Transcriptions(JobKind):
    """A recording's transcription: its failure shows on the recording."""

    model = Transcription
    noun = "transcription"
    renewed = True  # a long call outlasts many leases

    @property
    def max_attempts(self) -> int:
        return settings.QA_TRANSCRIBE_MAX_ATTEMPTS

    @property
    def lease_seconds(self) -> float:
        return settings.QA_TRANSCRIBE_LEASE_SECONDS

    @property
    def time_limit(self) -> float:
        return settings.QA_TRANSCRIBE_TIME_LIMIT

    def failed(self, job: TranscriptionJob, error: str, now: datetime) -> None:
        Recording.objects.filter(pk=job.row.recording_id).update(
            status=Recording.Status.FAILED, failure_reason=f"Transcription failed: {error}", updated_at=now
        )


TRANSCRIPTIONS = Transcriptions()


def transcriptions_sweep() -> int:
    """Publish again what was lost: transcriptions whose lease ran out (their worker died), and pending ones that are due."""
    return sum(
        transcription_publish(transcription=transcription)
        for transcription in jobs_due(kind=TRANSCRIPTIONS).only("pk")
    )


@transaction.atomic
def _store(job: TranscriptionJob, transcript: Transcript, duration_ms: int) -> Result:
    transcription = job.row
    if not job_succeed(
        TRANSCRIPTIONS, job, now=timezone.now(), audio_seconds=transcript.audio_seconds, duration_ms=duration_ms
    ):
        return Result(Outcome.SKIPPED)
    recording = Recording.objects.select_for_update().get(pk=transcription.recording_id)
    turns = [turn.to_dict() for turn in transcript.turns]
    recording.transcript = turns_render(transcript.turns)
    recording.turns = turns
    recording.transcript_source = Recording.TranscriptSource.ASR
    recording.speakers_known = transcript.speakers_known
    recording.status = Recording.Status.RECEIVED
    recording.failure_reason = ""
    recording.save(
        update_fields=[
            "transcript",
            "turns",
            "transcript_source",
            "speakers_known",
            "status",
            "failure_reason",
            "updated_at",
        ]
    )
    recording_transcript_replaced(recording_id=recording.pk)  # qa.redaction: masked before anyone reads it
    if transcription.judge_after:
        run, created = judge_run_create(recording=recording)
        if created:
            transaction.on_commit(lambda: judge_run_publish(run=run))
    return Result(Outcome.SUCCEEDED)


def transcription_execute(*, transcription_id: int) -> Result:
    """Transcribe if the transcription can be claimed. Safe to call any number of times."""
    transcription = (
        Transcription.objects.select_related("recording", "recording__rubric")
        .filter(pk=transcription_id, status=Transcription.Status.PENDING)
        .first()
    )
    if transcription is None:
        return Result(Outcome.SKIPPED)
    job = TranscriptionJob(transcription)
    try:
        recognizer = recognizer_get()
    except TranscriptionError as error:
        if not job_claim(TRANSCRIPTIONS, job):
            return Result(Outcome.SKIPPED)
        return job_give_back(TRANSCRIPTIONS, job, error)
    if not job_claim(TRANSCRIPTIONS, job, backend=recognizer.name, model=recognizer.model):
        return Result(Outcome.SKIPPED)
    if interrupted := job_interrupted(TRANSCRIPTIONS, job):
        return interrupted
    recording = transcription.recording
    started = time.monotonic()
    try:
        with lease_kept(TRANSCRIPTIONS, job), recording.audio.open("rb") as audio:
            transcript = transcribe(
                audio,
                channels=recording.audio_channels or 1,
                agent_channel=recording.agent_channel or settings.QA_AGENT_CHANNEL,
                customer_channel=recording.customer_channel,
                language=recording.language or recording.rubric.language,
                recognizer=recognizer,
            )
    except TranscriptionError as error:
        return job_give_back(TRANSCRIPTIONS, job, error)
    except SoftTimeLimitExceeded:
        return job_release(
            TRANSCRIPTIONS, job, TranscriptionError("The transcription ran out of time.", transient=True)
        )
    except OSError as error:
        return job_fail(TRANSCRIPTIONS, job, f"The audio file cannot be read: {error}")
    if not transcript.turns:
        return job_fail(TRANSCRIPTIONS, job, "The recognizer found no speech in the audio.")
    return _store(job, transcript, int((time.monotonic() - started) * 1000))


def transcription_run_until_done(*, transcription_id: int) -> Result:
    """Transcribe in this process, waiting out transient failures."""
    return until_done(lambda: transcription_execute(transcription_id=transcription_id))
