"""The one executor of judgments: a production run or an experiment's item is
claimed, judged through qa.judging's one path, and stored, released or failed
under the same rules.

A job (a row with a status, an attempt count and the fields of its usage)
moves pending -> running -> succeeded | failed, each step a conditional
UPDATE, so a duplicated or redelivered task finds nothing to do and a job is
only ever finished by the executor that holds its claim. The claim is a lease:
its token is the attempt number the claim set, and every write of the job's
outcome requires it (`_held`), so once the sweep takes a job back from an
executor that looks stuck, that executor can never store, fail or release it.
A job's success and its scores are written in one transaction.

What differs between kinds of job is supplied by a `JobKind`: how a job is
read, what its claim marks, and where its result goes. The production kind is
here (`RUNS`); experiments supply theirs and never touch a production row.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from celery import Task
from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from qa.judging import (
    DraftScore,
    Judgment,
    Outcome,
    Result,
    asking_prepare,
    judgment_make,
    judgment_tokens,
    retry_delay,
)
from qa.llm_errors import LLMError
from qa.models import Judge, JudgeRun, Recording, Score
from qa.rate_limit import quota_acquire, quota_settle
from qa.redaction.services import redaction_before_judging
from qa.routing import routing_fields, run_in_warm_up
from rubrics.models import Rubric

logger = logging.getLogger(__name__)

Usage = dict[str, Any]


@dataclass(frozen=True)
class Job:
    """A pending job as its executor read it, and what it is judged with."""

    row: Any  # a JudgeRun or an experiment's Item: status, attempts, started_at and the usage fields
    rubric: Rubric
    judge: Judge | None  # None: the environment's judge
    transcript: str
    samples: int | None = None  # None: the judge's own
    # The question the job must be asked (an experiment's arm records it when
    # created); "": whatever its rubric version asks now. See asking_prepare.
    prompt_version: str = ""
    # Where the recording's redaction found what an external judge must not see (qa.redaction);
    # None: found when judged.
    llm_spans: list | None = None


# Rubric versions this process has read that can no longer change (published
# or archived: Rubric.save refuses any change to them, and they are never
# deleted), so each job need not read its rubric again.
_frozen_rubrics: dict[int, Rubric] = {}
# Drafts as this process first read them for a prompt version jobs are bound
# to: such a job asks that version's question or none (asking_prepare checks
# what the draft builds), so a later read of the row would change nothing.
_bound_drafts: dict[tuple[int, str], Rubric] = {}


def rubric_for_judging(pk: int, *, prompt_version: str = "") -> Rubric:
    """The rubric version a job is judged with; a draft is read every time
    unless the job is bound to a prompt version (an experiment's candidate)."""
    rubric = _frozen_rubrics.get(pk) or _bound_drafts.get((pk, prompt_version))
    if rubric is None:
        rubric = Rubric.objects.get(pk=pk)
        if not rubric.is_draft:
            _frozen_rubrics[pk] = rubric
        elif prompt_version:
            _bound_drafts[pk, prompt_version] = rubric
    return rubric


class JobKind:
    """What one kind of job supplies to the executor. `model` has the job's
    fields, with the statuses "pending", "running", "succeeded" and "failed";
    each hook runs after the step it follows, inside that step's transaction
    (the claim has none)."""

    model: ClassVar[type[models.Model]]

    def load(self, pk: int) -> Job | None:
        """The job if it is pending."""
        raise NotImplementedError

    def claimed(self, job: Job, now: datetime) -> None:
        """After a claim (not atomic with it: a crash in between leaves a job the sweep hands out again)."""

    def released(self, job: Job, now: datetime) -> None:
        """After a transient failure gave the job back."""

    def failed(self, job: Job, error: str, now: datetime) -> None:
        """After the job failed for good."""

    def success_fields(self, job: Job) -> dict[str, Any]:
        """More fields for the job's row on success, decided before it is marked succeeded."""
        return {}

    def stored(self, job: Job, scores: list[DraftScore], fields: dict[str, Any], now: datetime) -> None:
        """Write the judgment's scores (and whatever follows from them) once the job is marked succeeded."""
        raise NotImplementedError


def _claim(kind: JobKind, job: Job, **fields: str) -> bool:
    """Take the job: pending -> running, one attempt more. Only one caller wins:
    the update also requires the attempts it read, so it knows the new count."""
    row, now = job.row, timezone.now()
    claimed = (
        kind.model.objects.filter(pk=row.pk, status="pending", attempts=row.attempts)
        .update(status="running", attempts=row.attempts + 1, started_at=now, **fields)
    )
    if not claimed:
        return False
    row.status, row.attempts, row.started_at = "running", row.attempts + 1, now
    for name, value in fields.items():
        setattr(row, name, value)
    kind.claimed(job, now)
    return True


def _held(kind: JobKind, job: Job) -> models.QuerySet:
    """The job's row, only while this executor's claim on it still stands."""
    return kind.model.objects.filter(pk=job.row.pk, status="running", attempts=job.row.attempts)


@transaction.atomic
def _fail(kind: JobKind, job: Job, error: str, usage: Usage | None = None) -> Result:
    now = timezone.now()
    if not _held(kind, job).update(status="failed", finished_at=now, error=error, **(usage or {})):
        return Result(Outcome.SKIPPED)
    kind.failed(job, error, now)
    return Result(Outcome.FAILED)


def _release(kind: JobKind, job: Job, error: LLMError) -> Result:
    """Give a transiently failed job back, to be claimed again after a delay."""
    attempts = job.row.attempts
    if attempts >= settings.QA_JUDGE_MAX_ATTEMPTS:
        return _fail(kind, job, f"Gave up after {attempts} attempts: {error}")
    delay = retry_delay(attempt=attempts, retry_after=error.retry_after)
    with transaction.atomic():
        if not _held(kind, job).update(status="pending", error=f"Will retry in {delay:.0f} s: {error}"):
            return Result(Outcome.SKIPPED)
        kind.released(job, timezone.now())
    return Result(Outcome.RETRY, delay)


@transaction.atomic
def _store(kind: JobKind, job: Job, judgment: Judgment) -> Result:
    fields = kind.success_fields(job)
    now = timezone.now()
    if not _held(kind, job).update(status="succeeded", finished_at=now, error="", **fields, **judgment.usage):
        return Result(Outcome.SKIPPED)
    kind.stored(job, judgment.scores, fields, now)
    return Result(Outcome.SUCCEEDED)


def job_execute(*, kind: JobKind, pk: int) -> Result:
    """Judge one job if it can be claimed. Safe to call any number of times."""
    job = kind.load(pk)
    if job is None:
        return Result(Outcome.SKIPPED)
    try:
        asking = asking_prepare(
            rubric=job.rubric, judge=job.judge, samples=job.samples, prompt_version=job.prompt_version
        )
    except LLMError as error:
        if not _claim(kind, job):
            return Result(Outcome.SKIPPED)
        return _release(kind, job, error) if error.transient else _fail(kind, job, str(error))
    # Reserve the quota before claiming, so a job waiting for quota is not an attempt.
    reserved = asking.reservation(job.transcript)
    if wait := quota_acquire(tokens=reserved):
        return Result(Outcome.RETRY, wait)
    if not _claim(kind, job, **asking.claim_fields):
        return Result(Outcome.SKIPPED)
    if job.row.attempts > settings.QA_JUDGE_MAX_ATTEMPTS:
        # Claimed again and again without finishing: its worker keeps dying.
        return _fail(kind, job, f"Gave up: the judgment was interrupted {job.row.attempts - 1} times.")
    judgment = judgment_make(asking=asking, transcript=job.transcript, llm_spans=job.llm_spans)
    quota_settle(reserved=reserved, used=judgment_tokens(judgment))
    if judgment.retry:
        return _release(kind, job, judgment.retry)
    if judgment.error:
        return _fail(kind, job, judgment.error, judgment.usage)
    return _store(kind, job, judgment)


def job_execute_until_done(*, kind: JobKind, pk: int, sleep: Callable[[float], None] = time.sleep) -> Result:
    """Judge in this process, waiting out transient failures (the management
    commands' path; workers reschedule instead of sleeping)."""
    while (result := job_execute(kind=kind, pk=pk)).outcome is Outcome.RETRY:
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


# --- Production runs ----------------------------------------------------------------


class ProductionRuns(JobKind):
    """A recording's judge run: its claim, failure and success show on the
    recording, and its success routes the recording."""

    model = JudgeRun

    def load(self, pk: int) -> Job | None:
        # Only what judging and routing read (a recording's word timings can be large);
        # the judge is read every time: its row may be edited in the admin.
        run = (
            JudgeRun.objects.select_related("recording", "recording__redaction", "judge")
            .only(
                "recording_id", "rubric_id", "judge_id", "status", "attempts",
                "recording__transcript", "recording__speakers_known", "recording__source", "recording__external_id",
                "recording__redaction__llm_spans",
                *(f"judge__{field.name}" for field in Judge._meta.concrete_fields),
            )
            .filter(pk=pk, status=JudgeRun.Status.PENDING)
            .order_by()
            .first()
        )
        if run is None:
            return None
        if not hasattr(run.recording, "redaction"):
            # Redaction first, here in the worker (qa.redaction), once per recording; a call that
            # cannot be redacted fails unjudged. Then read again: the transcript may have changed.
            return self.load(pk) if redaction_before_judging(run_id=pk) else None
        return Job(
            row=run, rubric=rubric_for_judging(run.rubric_id), judge=run.judge, transcript=run.recording.transcript,
            llm_spans=run.recording.redaction.llm_spans,
        )

    def claimed(self, job: Job, now: datetime) -> None:
        Recording.objects.filter(pk=job.row.recording_id).update(status=Recording.Status.JUDGING, updated_at=now)

    def released(self, job: Job, now: datetime) -> None:
        Recording.objects.filter(pk=job.row.recording_id).update(status=Recording.Status.QUEUED, updated_at=now)

    def failed(self, job: Job, error: str, now: datetime) -> None:
        Recording.objects.filter(pk=job.row.recording_id).update(
            status=Recording.Status.FAILED, failure_reason=error, updated_at=now
        )

    def success_fields(self, job: Job) -> dict[str, Any]:
        # Waits for the rubric's lock while the warm-up lasts: the finishing order is taken after it.
        return {"warm_up": run_in_warm_up(run=job.row)}

    def stored(self, job: Job, scores: list[DraftScore], fields: dict[str, Any], now: datetime) -> None:
        run = job.row
        rows = Score.objects.bulk_create(Score(run=run, criterion=draft.criterion, **draft.fields) for draft in scores)
        Recording.objects.filter(pk=run.recording_id).update(
            current_run=run,
            failure_reason="",
            updated_at=now,
            **routing_fields(recording=run.recording, rubric=job.rubric, scores=rows, warm_up=fields["warm_up"]),
        )


RUNS = ProductionRuns()


def judge_run_execute(*, run_id: int) -> Result:
    """Judge one production run if it can be claimed. Safe to call any number of times."""
    return job_execute(kind=RUNS, pk=run_id)


def judge_run_until_done(*, run_id: int, sleep: Callable[[float], None] = time.sleep) -> Result:
    return job_execute_until_done(kind=RUNS, pk=run_id, sleep=sleep)
