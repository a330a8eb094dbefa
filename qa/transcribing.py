"""Transcribing a recording's audio: the stage before judging.

The recording moves received -> transcribing -> queued (pending judgment);
its transcription moves pending -> running -> succeeded | failed with the
judge's rules (qa.judging): each step a conditional UPDATE, so a duplicated or
redelivered task finds nothing to do; transient failures are given back with
backoff; a failure keeps its reason on the transcription and the recording,
and `transcription_create` starts a new one (the admin's "Transcribe again").
The transcript, its turns and the judging's enqueueing are written in one
transaction with the transcription's success.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from kombu.exceptions import OperationalError

from qa.judging import Outcome, Result, judge_run_create, judge_run_publish, retry_delay
from qa.models import Recording, Transcription
from qa.services import turns_render
from qa.redaction.services import recording_transcript_replaced
from qa.transcription import Transcript, TranscriptionError, recognizer_get, transcribe

logger = logging.getLogger(__name__)

ACTIVE = (Transcription.Status.PENDING, Transcription.Status.RUNNING)


@transaction.atomic
def transcription_create(*, recording: Recording, judge: bool = True) -> tuple[Transcription, bool]:
    """A pending transcription of `recording` (or its active one), enqueued once the
    transaction commits; and whether it is new. `judge=False` stops after the transcript."""
    Recording.objects.select_for_update().filter(pk=recording.pk).first()
    active = Transcription.objects.filter(recording=recording, status__in=ACTIVE).first()
    if active is not None:
        return active, False
    if not recording.audio:
        raise ValueError(f"Recording {recording.pk} has no audio to transcribe.")
    transcription = Transcription.objects.create(recording=recording, judge_after=judge)
    Recording.objects.filter(pk=recording.pk).update(
        status=Recording.Status.TRANSCRIBING, failure_reason="", updated_at=timezone.now()
    )
    recording.status = Recording.Status.TRANSCRIBING
    transaction.on_commit(lambda: transcription_publish(transcription=transcription))
    return transcription, True


def transcription_publish(*, transcription: Transcription, countdown: float = 0.0) -> bool:
    """Hand the transcription to a worker; False if the broker is down (the sweep publishes it later)."""
    from qa.tasks import transcribe_recording  # the task module imports this one

    try:
        transcribe_recording.apply_async(args=[transcription.pk], countdown=countdown or None)
    except OperationalError:
        logger.warning(
            "Broker unreachable: transcription %s stays pending for the sweep.", transcription.pk, exc_info=True
        )
        return False
    return True


def transcriptions_sweep() -> int:
    """Publish again what was lost: transcriptions stuck running past the time limit, and pending ones that are due."""
    now = timezone.now()
    stale = Transcription.objects.filter(
        status=Transcription.Status.RUNNING,
        started_at__lt=now - timedelta(seconds=settings.QA_TRANSCRIBE_TIME_LIMIT + 30),
    )
    stale_ids = list(stale.values_list("pk", flat=True))
    stale.filter(pk__in=stale_ids).update(status=Transcription.Status.PENDING)
    settled = now - timedelta(seconds=settings.QA_JUDGE_SWEEP_INTERVAL)
    retry_lost = settled - timedelta(seconds=settings.QA_JUDGE_RETRY_MAX_DELAY + settings.QA_TRANSCRIBE_TIME_LIMIT)
    due = Transcription.objects.filter(status=Transcription.Status.PENDING).filter(
        Q(pk__in=stale_ids) | Q(attempts=0, created_at__lt=settled) | Q(attempts__gt=0, started_at__lt=retry_lost)
    )
    return sum(transcription_publish(transcription=transcription) for transcription in due.only("pk"))


def _claim(transcription: Transcription, **fields: str) -> bool:
    now = timezone.now()
    claimed = Transcription.objects.filter(
        pk=transcription.pk, status=Transcription.Status.PENDING, attempts=transcription.attempts
    ).update(status=Transcription.Status.RUNNING, attempts=transcription.attempts + 1, started_at=now, **fields)
    if claimed:
        transcription.status = Transcription.Status.RUNNING
        transcription.attempts += 1
        transcription.started_at = now
    return bool(claimed)


def _held(transcription: Transcription):
    return Transcription.objects.filter(
        pk=transcription.pk, status=Transcription.Status.RUNNING, attempts=transcription.attempts
    )


@transaction.atomic
def _fail(transcription: Transcription, error: str) -> Result:
    now = timezone.now()
    if not _held(transcription).update(status=Transcription.Status.FAILED, finished_at=now, error=error):
        return Result(Outcome.SKIPPED)
    Recording.objects.filter(pk=transcription.recording_id).update(
        status=Recording.Status.FAILED, failure_reason=f"Transcription failed: {error}", updated_at=now
    )
    return Result(Outcome.FAILED)


def _release(transcription: Transcription, error: TranscriptionError) -> Result:
    if transcription.attempts >= settings.QA_TRANSCRIBE_MAX_ATTEMPTS:
        return _fail(transcription, f"Gave up after {transcription.attempts} attempts: {error}")
    delay = retry_delay(attempt=transcription.attempts, retry_after=error.retry_after)
    if not _held(transcription).update(
        status=Transcription.Status.PENDING, error=f"Will retry in {delay:.0f} s: {error}"
    ):
        return Result(Outcome.SKIPPED)
    return Result(Outcome.RETRY, delay)


@transaction.atomic
def _store(transcription: Transcription, transcript: Transcript, duration_ms: int) -> Result:
    now = timezone.now()
    if not _held(transcription).update(
        status=Transcription.Status.SUCCEEDED,
        finished_at=now,
        error="",
        audio_seconds=transcript.audio_seconds,
        duration_ms=duration_ms,
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
    try:
        recognizer = recognizer_get()
    except TranscriptionError as error:
        if not _claim(transcription):
            return Result(Outcome.SKIPPED)
        return _release(transcription, error) if error.transient else _fail(transcription, str(error))
    if not _claim(transcription, backend=recognizer.name, model=recognizer.model):
        return Result(Outcome.SKIPPED)
    if transcription.attempts > settings.QA_TRANSCRIBE_MAX_ATTEMPTS:
        return _fail(transcription, f"Gave up: the transcription was interrupted {transcription.attempts - 1} times.")
    recording = transcription.recording
    started = time.monotonic()
    try:
        with recording.audio.open("rb") as audio:
            transcript = transcribe(
                audio,
                channels=recording.audio_channels or 1,
                agent_channel=recording.agent_channel or settings.QA_AGENT_CHANNEL,
                customer_channel=recording.customer_channel,
                language=recording.language or recording.rubric.language,
                recognizer=recognizer,
            )
    except TranscriptionError as error:
        return _release(transcription, error) if error.transient else _fail(transcription, str(error))
    except SoftTimeLimitExceeded:
        return _release(transcription, TranscriptionError("The transcription ran out of time.", transient=True))
    except OSError as error:
        return _fail(transcription, f"The audio file cannot be read: {error}")
    if not transcript.turns:
        return _fail(transcription, "The recognizer found no speech in the audio.")
    return _store(transcription, transcript, int((time.monotonic() - started) * 1000))


def transcription_run_until_done(*, transcription_id: int) -> Result:
    """Transcribe in this process, waiting out transient failures."""
    while (result := transcription_execute(transcription_id=transcription_id)).outcome is Outcome.RETRY:
        time.sleep(result.delay)
    return result
