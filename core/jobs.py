"""The one job executor: how every kind of background job is claimed, kept, retried, failed
and swept. Judge runs and experiment items (qa.execution) and transcriptions
(qa.transcribing) and webhook deliveries (webhooks.services) are its kinds; a redaction would be one more.

A job is a row with a status, an attempt count, `started_at`, `leased_until` and `error`. It
moves pending -> running -> succeeded | failed, each step a conditional UPDATE, so a
duplicated or redelivered task finds nothing to do and a job is only ever finished by the
executor that holds its claim. The claim is a lease: its token is the attempt number the claim
set, and every write of the job's outcome requires it (`job_held`), so once the sweep takes
back a job whose lease ran out, the executor that held it can never store, fail or release it.
A kind whose work may run longer than its lease has the lease renewed while it runs
(`lease_kept`): a worker that dies loses its job within one lease, a live one never does.

What differs between kinds is supplied by a `JobKind`: the model, the limits, and hooks that
run inside each step's transaction. A kind registered (`job_kind_register`, from its app's
`ready`) is swept by the executor's one sweep (`jobs_sweep`, the task `core.jobs_sweep`), which
publishes its task again for every job that is due.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from celery import Task
from django.conf import settings
from django.db import DatabaseError, connection, models, transaction
from django.db.models import Q
from django.utils import timezone

from core.queue import task_publish

logger = logging.getLogger(__name__)


class Outcome(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RETRY = "retry"  # transient failure or no quota: try again after `delay`
    SKIPPED = "skipped"  # nothing to do: another worker has it, or it is finished


@dataclass(frozen=True)
class Result:
    outcome: Outcome
    delay: float = 0.0


class Held(Protocol):
    """A job as its executor read it: at least its row."""

    row: Any


class Failure(Protocol):
    """Why a job could not be done: LLMError and TranscriptionError are such."""

    transient: bool
    retry_after: float | None


def retry_delay(
    *,
    attempt: int,
    retry_after: float | None = None,
    base: float | None = None,
    longest: float | None = None,
    jitter: bool = True,
) -> float:
    """The wait after failed attempt number `attempt`: `base` (default QA_JUDGE_RETRY_BASE) doubled each
    time, with full jitter unless `jitter` is off (a receiver's log then shows a predictable schedule),
    never sooner than the server's Retry-After, never longer than `longest` (default
    QA_JUDGE_RETRY_MAX_DELAY; None for a kind whose retries end with a window instead)."""
    ceiling = (settings.QA_JUDGE_RETRY_BASE if base is None else base) * 2 ** max(attempt - 1, 0)
    delay = max(random.uniform(0, ceiling) if jitter else ceiling, retry_after or 0.0)
    return min(delay, settings.QA_JUDGE_RETRY_MAX_DELAY if longest is None else longest)


class JobKind:
    """What one kind of job supplies to the executor. `model` has the job's fields, with the
    statuses "pending", "running", "succeeded" and "failed"; each hook runs after the step it
    follows, inside that step's transaction (the claim has none)."""

    model: ClassVar[type[models.Model]]
    noun: ClassVar[str] = "job"  # as in "the judgment was interrupted 3 times"
    # Renew the lease while the work runs (`lease_kept`): for work that may take longer than a lease.
    renewed: ClassVar[bool] = False
    # When a pending job that was never claimed was created (the sweep's "published a moment ago").
    created_field: ClassVar[str] = "created_at"
    # The status a finished job has: "succeeded", or the kind's own word for it (a delivery's "delivered").
    succeeded_status: ClassVar[str] = "succeeded"
    # The task, taking the job's id, that the executor's sweep publishes for a job that is due
    # (a registered kind's; a kind with its own publishing overrides `republish`).
    task: ClassVar[str] = ""

    @property
    def max_attempts(self) -> int:
        raise NotImplementedError

    @property
    def lease_seconds(self) -> float:
        """How long a claim holds without renewal; after it the sweep takes the job back."""
        raise NotImplementedError

    @property
    def time_limit(self) -> float:
        """The longest one task may run: a retry's message may be that late and not lost."""
        raise NotImplementedError

    def sweep_scope(self) -> Q:
        """Which pending jobs the sweep may hand out."""
        return Q()

    def lost(self, *, now: datetime, settled: datetime) -> Q:
        """Which pending jobs no message carries any more: never claimed and published before
        `settled`, or waiting for a retry whose message is later than any could be."""
        retry_lost = settled - timedelta(seconds=settings.QA_JUDGE_RETRY_MAX_DELAY + self.time_limit)
        return Q(attempts=0, **{f"{self.created_field}__lt": settled}) | Q(attempts__gt=0, started_at__lt=retry_lost)

    def republish(self, pks: list[Any]) -> int:
        """Publish the jobs the sweep found due again; how many were published. A broker that
        is down leaves the rest for the next sweep."""
        published = 0
        for pk in pks:
            try:
                task_publish(self.task, str(pk))
            except Exception:
                logger.exception("Could not publish %s %s; the next sweep will.", self.noun, pk)
                break
            published += 1
        return published

    def claimed(self, job: Any, now: datetime) -> None:
        """After a claim (not atomic with it: a crash in between leaves a job the sweep hands out again)."""

    def released(self, job: Any, now: datetime) -> None:
        """After a transient failure gave the job back."""

    def failed(self, job: Any, error: str, now: datetime) -> None:
        """After the job failed for good."""


def job_claim(kind: JobKind, job: Held, **fields: Any) -> bool:
    """Take the job: pending -> running, one attempt more, leased for `kind.lease_seconds`.
    Only one caller wins: the update also requires the attempts it read, so it knows the new count."""
    row, now = job.row, timezone.now()
    leased_until = now + timedelta(seconds=kind.lease_seconds)
    claimed = kind.model.objects.filter(pk=row.pk, status="pending", attempts=row.attempts).update(
        status="running", attempts=row.attempts + 1, started_at=now, leased_until=leased_until, **fields
    )
    if not claimed:
        return False
    row.status, row.attempts, row.started_at, row.leased_until = "running", row.attempts + 1, now, leased_until
    for name, value in fields.items():
        setattr(row, name, value)
    kind.claimed(job, now)
    return True


def job_held(kind: JobKind, job: Held) -> models.QuerySet:
    """The job's row, only while this executor's claim on it still stands."""
    return kind.model.objects.filter(pk=job.row.pk, status="running", attempts=job.row.attempts)


@transaction.atomic
def job_fail(kind: JobKind, job: Held, error: str, **fields: Any) -> Result:
    now = timezone.now()
    if not job_held(kind, job).update(status="failed", finished_at=now, error=error, **fields):
        return Result(Outcome.SKIPPED)
    kind.failed(job, error, now)
    return Result(Outcome.FAILED)


def job_release(kind: JobKind, job: Held, error: Failure) -> Result:
    """Give a transiently failed job back, to be claimed again after a delay; fail it once it has had its attempts."""
    attempts = job.row.attempts
    if attempts >= kind.max_attempts:
        return job_fail(kind, job, f"Gave up after {attempts} attempts: {error}")
    delay = retry_delay(attempt=attempts, retry_after=error.retry_after)
    with transaction.atomic():
        if not job_held(kind, job).update(status="pending", error=f"Will retry in {delay:.0f} s: {error}"):
            return Result(Outcome.SKIPPED)
        kind.released(job, timezone.now())
    return Result(Outcome.RETRY, delay)


def job_wait(kind: JobKind, job: Held, delay: float, **fields: Any) -> Result:
    """Give the job back to be looked at again after `delay`, not as a failure: its attempt is taken
    back (a batch polled while its provider works must not run out of attempts). Only the claimer's
    own increment is undone, so the count never returns to a token an older, taken-back claim holds."""
    if not job_held(kind, job).update(status="pending", attempts=models.F("attempts") - 1, error="", **fields):
        return Result(Outcome.SKIPPED)
    return Result(Outcome.RETRY, delay)


def job_give_back(kind: JobKind, job: Held, error: Failure) -> Result:
    """Released if `error` is transient, failed if not."""
    return job_release(kind, job, error) if error.transient else job_fail(kind, job, str(error))


def job_interrupted(kind: JobKind, job: Held) -> Result | None:
    """A failure, if the job was claimed again and again without finishing: its worker keeps dying."""
    if job.row.attempts <= kind.max_attempts:
        return None
    return job_fail(kind, job, f"Gave up: the {kind.noun} was interrupted {job.row.attempts - 1} times.")


def job_succeed(kind: JobKind, job: Held, *, now: datetime, **fields: Any) -> bool:
    """Mark the job succeeded if its claim still stands; inside the transaction that writes its result."""
    return bool(job_held(kind, job).update(status=kind.succeeded_status, finished_at=now, error="", **fields))


@contextmanager
def lease_kept(kind: JobKind, job: Held) -> Iterator[None]:
    """Renew the job's lease every third of it while the block runs (kinds that are `renewed`),
    from a thread with a connection of its own, so a long call in the block does not hold it up.
    A renewal that finds the claim gone stops: the executor's own writes will find it gone too."""
    if not kind.renewed:
        yield
        return
    stop = threading.Event()
    every = kind.lease_seconds / 3

    def renew() -> None:
        try:
            while not stop.wait(every):
                try:
                    if not job_held(kind, job).update(
                        leased_until=timezone.now() + timedelta(seconds=kind.lease_seconds)
                    ):
                        return
                except DatabaseError:  # the next renewal may get through before the lease runs out
                    logger.warning("Could not renew the lease of %s %s.", kind.noun, job.row.pk, exc_info=True)
                    connection.close()
        finally:
            connection.close()  # this thread's own

    thread = threading.Thread(target=renew, name=f"lease-{kind.noun}-{job.row.pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def jobs_due(*, kind: JobKind) -> models.QuerySet:
    """The sweep: take back the running jobs whose lease ran out (their worker died), and
    return the pending jobs that are due, to be published again. Duplicates are harmless:
    the claim lets one through."""
    now = timezone.now()
    stale = kind.model.objects.filter(status="running").filter(
        # A claim made before leases were recorded (or by a writer that sets none) runs out a lease after it started.
        Q(leased_until__lt=now)
        | Q(leased_until__isnull=True, started_at__lt=now - timedelta(seconds=kind.lease_seconds))
    )
    stale_ids = list(stale.values_list("pk", flat=True))
    stale.filter(pk__in=stale_ids).update(status="pending")
    # A job published a moment ago is still on its way, and one waiting for a
    # retry has a message due later: only jobs older than that are lost.
    settled = now - timedelta(seconds=settings.QA_JUDGE_SWEEP_INTERVAL)
    return kind.model.objects.filter(kind.sweep_scope(), status="pending").filter(
        Q(pk__in=stale_ids) | kind.lost(now=now, settled=settled)
    )


# The kinds the executor's one sweep covers, by name (a kind registers from its app's `ready`).
_REGISTERED: dict[str, JobKind] = {}


def job_kind_register(kind: JobKind) -> None:
    """Have the executor's sweep (`jobs_sweep`) cover `kind`: it needs `task` or its own `republish`."""
    _REGISTERED[kind.noun] = kind


def jobs_sweep(*, limit: int = 1000) -> dict[str, int]:
    """The executor's sweep, run by Celery beat (`core.jobs_sweep`, every QA_JUDGE_SWEEP_INTERVAL):
    for every registered kind, take back the jobs whose lease ran out and publish again those that
    are due (`jobs_due`), at most `limit` a kind a sweep. How many each kind published."""
    published: dict[str, int] = {}
    for noun, kind in _REGISTERED.items():
        pks = list(jobs_due(kind=kind).order_by("pk").values_list("pk", flat=True)[:limit])
        published[noun] = kind.republish(pks) if pks else 0
    return published


def until_done(execute: Callable[[], Result], *, sleep: Callable[[float], None] = time.sleep) -> Result:
    """Run a job in this process, waiting out transient failures (the management commands'
    path; workers reschedule instead of sleeping)."""
    while (result := execute()).outcome is Outcome.RETRY:
        sleep(result.delay)
    return result


def task_outcome(task: Task, result: Result, *, reschedule: Callable[[float], object], what: str) -> str:
    """A task's answer to its executor's result: a retry is published again
    after its delay (in-process, where nothing can be delivered later, it stays
    pending for the sweep or the command)."""
    if result.outcome is Outcome.RETRY:
        if task.request.is_eager:
            logger.warning("%s hit a transient failure and stays pending.", what)
        else:
            reschedule(result.delay)
    return result.outcome.value
