"""Celery tasks of the intakes. They take ids and are idempotent (core.jobs' claim), so acks_late is
safe: a redelivered message finds its job claimed or finished and does nothing. Leaves: the domain
publishes them by name (core.queue) and they import it inside their bodies."""

from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings

from core.jobs import task_outcome


@shared_task(
    name="intake.twilio_recording", bind=True, acks_late=True, reject_on_worker_lost=True,
    time_limit=settings.INTAKE_TIME_LIMIT, ignore_result=True,
)  # fmt: skip
def twilio_recording(self: Task, job_id: int) -> str:
    from intake.twilio import twilio_recording_execute

    return task_outcome(
        self, twilio_recording_execute(job_id=job_id),
        reschedule=lambda delay: self.apply_async(args=[job_id], countdown=delay), what=f"Twilio recording {job_id}",
    )  # fmt: skip


@shared_task(
    name="intake.dropped_file", bind=True, acks_late=True, reject_on_worker_lost=True,
    time_limit=settings.INTAKE_TIME_LIMIT, ignore_result=True,
)  # fmt: skip
def dropped_file(self: Task, job_id: int) -> str:
    from intake.folders import dropped_file_execute

    return task_outcome(
        self, dropped_file_execute(job_id=job_id),
        reschedule=lambda delay: self.apply_async(args=[job_id], countdown=delay), what=f"Dropped file {job_id}",
    )  # fmt: skip


@shared_task(name="intake.scan", ignore_result=True)
def scan() -> int:
    """Celery beat's: every active drop folder scanned, and the jobs whose worker died published again."""
    from intake.folders import dropped_files_sweep, folders_scan
    from intake.twilio import twilio_recordings_sweep

    return folders_scan() + dropped_files_sweep() + twilio_recordings_sweep()
