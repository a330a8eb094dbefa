"""The executor of judgments: a production run or an experiment's item is
claimed, judged through qa.judging's one path, and stored, released or failed
under the one job executor's rules (core.jobs: the claim as a lease, retries
with backoff, the sweep). A job's success and its scores are written in one
transaction.

What differs between kinds of judgment is supplied by a `JudgmentKind`: how a
job is read, what its claim marks, and where its result goes. The production
kind is here (`RUNS`); experiments supply theirs and never touch a production row.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
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
from core.rate_limit import quota_acquire, quota_settle
from outbox.services import recording_failed_emit, recording_judged_emit
from qa.judging import DraftScore, Judgment, asking_prepare, judge_run_publish, judgment_make, judgment_tokens
from qa.llm_errors import LLMError
from qa.models import Judge, JudgeRun, Recording, Score
from qa.redaction.services import redaction_before_judging
from qa.routing import certified_thresholds, routing_fields, run_in_warm_up
from rubrics.models import Rubric


@dataclass(frozen=True)
class Job:
    """A pending job as its executor read it, and what it is judged with."""

    row: Any  # a JudgeRun or an experiment's Item: core.jobs's fields and the usage fields
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


class JudgmentKind(JobKind):
    """A kind of job judged through qa.judging's one path, under the judge's limits."""

    noun = "judgment"

    @property
    def max_attempts(self) -> int:
        return settings.QA_JUDGE_MAX_ATTEMPTS

    @property
    def lease_seconds(self) -> float:
        # A little longer than the task's time limit, which ends a judgment first: no renewal is
        # needed (under the thread pool, which enforces no limit, a slower judgment is taken back
        # and its late result refused).
        return settings.QA_JUDGE_TIME_LIMIT + 30

    @property
    def time_limit(self) -> float:
        return settings.QA_JUDGE_TIME_LIMIT

    def load(self, pk: int) -> Job | None:
        """The job if it is pending."""
        raise NotImplementedError

    def success_fields(self, job: Job) -> dict[str, Any]:
        """More fields for the job's row on success, decided before it is marked succeeded."""
        return {}

    def stored(self, job: Job, scores: list[DraftScore], fields: dict[str, Any], now: datetime) -> None:
        """Write the judgment's scores (and whatever follows from them) once the job is marked succeeded."""
        raise NotImplementedError


@transaction.atomic
def judgment_store(kind: JudgmentKind, job: Job, judgment: Judgment) -> Result:
    """Mark the job succeeded and store its judgment, if its claim still stands (the batch path's too)."""
    fields = kind.success_fields(job)
    now = timezone.now()
    if not job_succeed(kind, job, now=now, **fields, **judgment.usage):
        return Result(Outcome.SKIPPED)
    kind.stored(job, judgment.scores, fields, now)
    return Result(Outcome.SUCCEEDED)


def job_execute(*, kind: JudgmentKind, pk: int) -> Result:
    """Judge one job if it can be claimed. Safe to call any number of times."""
    job = kind.load(pk)
    if job is None:
        return Result(Outcome.SKIPPED)
    try:
        asking = asking_prepare(
            rubric=job.rubric, judge=job.judge, samples=job.samples, prompt_version=job.prompt_version
        )
    except LLMError as error:
        if not job_claim(kind, job):
            return Result(Outcome.SKIPPED)
        return job_give_back(kind, job, error)
    # Reserve the quota before claiming, so a job waiting for quota is not an attempt.
    reserved = asking.reservation(job.transcript)
    if wait := quota_acquire(tokens=reserved):
        return Result(Outcome.RETRY, wait)
    if not job_claim(kind, job, **asking.claim_fields):
        return Result(Outcome.SKIPPED)
    if interrupted := job_interrupted(kind, job):
        return interrupted
    with lease_kept(kind, job):
        judgment = judgment_make(asking=asking, transcript=job.transcript, llm_spans=job.llm_spans)
    quota_settle(reserved=reserved, used=judgment_tokens(judgment))
    if judgment.retry:
        return job_release(kind, job, judgment.retry)
    if judgment.error:
        return job_fail(kind, job, judgment.error, **judgment.usage)
    return judgment_store(kind, job, judgment)


def job_execute_until_done(*, kind: JudgmentKind, pk: int, sleep: Callable[[float], None] = time.sleep) -> Result:
    """Judge in this process, waiting out transient failures (the management
    commands' path; workers reschedule instead of sleeping)."""
    return until_done(lambda: job_execute(kind=kind, pk=pk), sleep=sleep)


# --- Production runs ----------------------------------------------------------------


class ProductionRuns(JudgmentKind):
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
                "created_at",  # the scores' partition key (Score.run_created_at): read here, not once more
                "recording__transcript", "recording__speakers_known", "recording__source", "recording__external_id",
                "recording__workspace_id",  # its events go to its workspace's webhook subscriptions
                "recording__redaction__llm_spans",
                *(f"judge__{field.name}" for field in Judge._meta.concrete_fields),
            )
            .filter(pk=pk, status=JudgeRun.Status.PENDING)
            .order_by()
            .first()
        )
        if run is None:
            return None
        if run.judge is not None and run.judge.mode == "batch":
            # Its judge takes batches (qa.batching collects it). Its redaction is done here, in the run's
            # own task, so every worker shares that CPU; one collector redacting every call in turn fell
            # behind at 12 calls a second, and collectors started by beat each minute redacted the same calls.
            if not hasattr(run.recording, "redaction"):
                redaction_before_judging(run_id=pk)
            return None
        if not hasattr(run.recording, "redaction"):
            # Redaction first, here in the worker (qa.redaction), once per recording; a call that
            # cannot be redacted fails unjudged. Then read again: the transcript may have changed.
            return self.load(pk) if redaction_before_judging(run_id=pk) else None
        return Job(
            row=run, rubric=rubric_for_judging(run.rubric_id), judge=run.judge, transcript=run.recording.transcript,
            llm_spans=run.recording.redaction.llm_spans,
        )

    def sweep_scope(self) -> Q:
        # A batch-mode judge's pending runs wait for the batches' collector (qa.batching), not a task each,
        # once redacted: one whose task was lost before it redacted the call gets its task again, so the
        # workers redact it (the collector does not: one task redacting calls in turn fell behind).
        return ~Q(judge__mode="batch") | Q(recording__redaction__isnull=True)

    def claimed(self, job: Job, now: datetime) -> None:
        Recording.objects.filter(pk=job.row.recording_id).update(status=Recording.Status.JUDGING, updated_at=now)

    def released(self, job: Job, now: datetime) -> None:
        Recording.objects.filter(pk=job.row.recording_id).update(status=Recording.Status.QUEUED, updated_at=now)

    def failed(self, job: Job, error: str, now: datetime) -> None:
        Recording.objects.filter(pk=job.row.recording_id).update(
            status=Recording.Status.FAILED, failure_reason=error, updated_at=now
        )
        recording_failed_emit(recording_id=job.row.recording_id, workspace_id=job.row.recording.workspace_id)

    def success_fields(self, job: Job) -> dict[str, Any]:
        # Waits for the rubric's lock while the warm-up lasts: the finishing order is taken after it.
        return {"warm_up": run_in_warm_up(run=job.row)}

    def stored(self, job: Job, scores: list[DraftScore], fields: dict[str, Any], now: datetime) -> None:
        run = job.row
        rows = Score.objects.bulk_create(
            Score(run=run, run_created_at=run.created_at, criterion=draft.criterion, **draft.fields) for draft in scores
        )
        routing = routing_fields(
            recording=run.recording, rubric=job.rubric, scores=rows, warm_up=fields["warm_up"],
            certified=certified_thresholds(run=run, day=timezone.localdate(now)),
        )  # fmt: skip
        Recording.objects.filter(pk=run.recording_id).update(current_run=run, failure_reason="", updated_at=now, **routing)
        recording_judged_emit(
            recording_id=run.recording_id, routed=routing["needs_review"], workspace_id=run.recording.workspace_id
        )


RUNS = ProductionRuns()


def judge_run_execute(*, run_id: int) -> Result:
    """Judge one production run if it can be claimed. Safe to call any number of times."""
    return job_execute(kind=RUNS, pk=run_id)


def judge_run_until_done(*, run_id: int, sleep: Callable[[float], None] = time.sleep) -> Result:
    return job_execute_until_done(kind=RUNS, pk=run_id, sleep=sleep)


def runs_sweep() -> int:
    """Hand out again what was lost: runs whose lease ran out (their worker died), and pending
    runs that are due (core.jobs.jobs_due). Returns how many were published."""
    now = timezone.now()
    published = 0
    for run in jobs_due(kind=RUNS).only("pk", "recording_id"):
        Recording.objects.filter(pk=run.recording_id, status=Recording.Status.RECEIVED).update(
            status=Recording.Status.QUEUED, updated_at=now
        )
        published += judge_run_publish(run=run)
    return published
