"""Celery tasks of the judge and the transcription. They take ids and are idempotent (see
core.jobs), which is what makes acks_late safe: a redelivered message finds its job claimed or
finished and does nothing.

Leaves: the domain publishes them by name (core.queue) and they import it inside their bodies,
so no module of qa imports this one back."""

from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings

from core.jobs import task_outcome


@shared_task(
    name="qa.judge_run",
    bind=True,
    acks_late=True,
    # A worker killed before finishing puts the message back; the claim keeps
    # a second delivery from judging twice.
    reject_on_worker_lost=True,
    soft_time_limit=settings.QA_JUDGE_SOFT_TIME_LIMIT,
    time_limit=settings.QA_JUDGE_TIME_LIMIT,
    ignore_result=True,
)
def judge_run(self: Task, run_id: int) -> str:
    from qa.execution import judge_run_execute
    from qa.judging import judge_run_publish
    from qa.models import JudgeRun

    # In-process mode has no delayed delivery: `manage.py judge --pending` picks a retry up.
    return task_outcome(
        self,
        judge_run_execute(run_id=run_id),
        reschedule=lambda delay: judge_run_publish(
            run=JudgeRun.objects.only("pk", "recording_id").get(pk=run_id), countdown=delay
        ),
        what=f"Run {run_id}",
    )


@shared_task(name="qa.judge_runs_fan_out", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def judge_runs_fan_out(run_ids: list[int]) -> int:
    """One message per ingested chunk (qa.services.recordings_store), one `judge_run` message per run
    from here, so the web request publishes once while the runs are still judged in parallel.
    A redelivery publishes again, which the claim makes harmless; a broker lost midway leaves the
    rest pending for the sweep."""
    from qa.judging import judge_run_publish
    from qa.models import JudgeRun

    runs = JudgeRun.objects.filter(pk__in=run_ids, status=JudgeRun.Status.PENDING).only("pk", "recording_id")
    return sum(judge_run_publish(run=run) for run in runs)


@shared_task(name="qa.judge_sweep", ignore_result=True)
def judge_sweep() -> int:
    from qa.execution import runs_sweep

    return runs_sweep()


@shared_task(
    name="qa.transcribe",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.QA_TRANSCRIBE_SOFT_TIME_LIMIT,
    time_limit=settings.QA_TRANSCRIBE_TIME_LIMIT,
    ignore_result=True,
)
def transcribe_recording(self: Task, transcription_id: int) -> str:
    """Routed to the `transcription` queue (CELERY_TASK_ROUTES): a long call never holds up judging."""
    from qa.models import Transcription
    from qa.services import transcription_publish
    from qa.transcribing import transcription_execute

    return task_outcome(
        self,
        transcription_execute(transcription_id=transcription_id),
        reschedule=lambda delay: transcription_publish(
            transcription=Transcription.objects.only("pk").get(pk=transcription_id), countdown=delay
        ),
        what=f"Transcription {transcription_id}",
    )


@shared_task(name="qa.transcription_sweep", ignore_result=True)
def transcription_sweep() -> int:
    from qa.transcribing import transcriptions_sweep

    return transcriptions_sweep()


@shared_task(name="qa.audio_orphans_sweep", ignore_result=True)
def audio_orphans_sweep() -> int:
    from qa.services import audio_orphans_delete

    return len(audio_orphans_delete())


@shared_task(
    name="qa.judge_batch",
    bind=True,
    acks_late=True,
    # A worker lost mid-step puts the message back; the batch's claim keeps a second delivery out, and
    # its lease gives the batch back to the sweep.
    reject_on_worker_lost=True,
    ignore_result=True,
)
def judge_batch(self: Task, batch_id: int) -> str:
    """One step of a provider batch of judge runs (qa.batching): submit, poll or ingest."""
    from qa.batching import batch_publish, judge_batch_execute

    return task_outcome(
        self,
        judge_batch_execute(batch_id=batch_id),
        reschedule=lambda delay: batch_publish(batch_id=batch_id, countdown=delay),
        what=f"Batch {batch_id}",
    )


@shared_task(name="qa.judge_batches", ignore_result=True)
def judge_batches() -> int:
    """Beat: collect batch-mode judges' pending runs into batches, and publish again the batches that are due."""
    from qa.batching import batches_collect, batches_sweep

    return len(batches_collect()) + batches_sweep()
