"""The judge's batch path (issue 45): a judge in batch mode has production's runs sent through its
provider's Batch API (OpenAI's, and the servers that copy it), at the batch discount, answered within
the completion window instead of at once.

- Collect (`batches_collect`, beat): the judge's pending runs, once their own tasks redacted them, are
  claimed together into a `JudgeBatch` of at most QA_BATCH_MAX_REQUESTS lines: each run running, one
  attempt more, leased for the completion window, and pointing at the batch.
- The batch is a job of core.jobs (`BATCHES`): claimed under a lease renewed while it works, and each
  claim does one step. Submit: one `/v1/chat/completions` body per line (the synchronous path's
  messages and schema, `qa.judging.judgment_request`), uploaded with `files.create`, then
  `batches.create`. Poll: `batches.retrieve`; while the provider works the batch is given back without
  spending an attempt (`core.jobs.job_wait`). Ingest: the output and error files (`files.content`),
  each line through the synchronous path's answer checks and verifier (`qa.judging.judgment_of`) and
  stored the same way (`qa.execution.judgment_store`).
- A line that failed for a transient reason (a server error, a rate limit, an expired batch) gives its
  run back (`core.jobs.job_release`): pending again, collected into a later batch, until its attempts
  run out; a final error (a refusal, a 400, an invalid answer) fails it. An expired or failed batch
  gives back every run it did not answer.

Nothing is judged twice: a run is stored only while it is running in this batch with the attempt its
line names, in its own transaction. Nothing is lost: a worker that dies loses the batch's claim within a
lease, and the next claim resumes from what was saved; one that dies after `batches.create` but before
saving its id finds the batch again by the metadata it was created with, instead of creating another.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import openai
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import OperationalError

from core.jobs import (
    JobKind,
    Outcome,
    Result,
    job_claim,
    job_fail,
    job_give_back,
    job_held,
    job_interrupted,
    job_release,
    job_succeed,
    job_wait,
    jobs_due,
    lease_kept,
)
from core.queue import task_publish
from qa.execution import RUNS, Job, judgment_store, rubric_for_judging
from qa.judging import Asking, asking_prepare, judgment_of, judgment_request
from qa.llm import TRANSIENT_STATUSES, Backend, Completion, backend_get, cached_tokens_of, llm_error, request_constraint
from qa.llm_errors import LLMError
from qa.models import Judge, JudgeBatch, JudgeRun, Recording

logger = logging.getLogger(__name__)

BATCH = "batch"  # Judge.mode
ENDPOINT = "/v1/chat/completions"
# The provider is still at work on a batch in these states (OpenAI's).
WORKING = {"validating", "in_progress", "finalizing", "cancelling"}
METADATA_KEY = "veredicto_batch"
_WINDOW = re.compile(r"^(\d+)([hm])$")
# Runs read and written per query while a batch is submitted or ingested.
CHUNK = 500


@dataclass(frozen=True)
class BatchJob:
    row: JudgeBatch


def completion_window_seconds() -> int:
    """QA_BATCH_COMPLETION_WINDOW in seconds ("24h" is OpenAI's only window)."""
    match = _WINDOW.match(settings.QA_BATCH_COMPLETION_WINDOW)
    if not match:
        raise LLMError(
            f"QA_BATCH_COMPLETION_WINDOW is {settings.QA_BATCH_COMPLETION_WINDOW!r}: give hours or minutes, like 24h.",
            transient=False,
        )
    return int(match.group(1)) * (3600 if match.group(2) == "h" else 60)


class Batches(JobKind):
    model = JudgeBatch
    noun = "batch"
    renewed = True  # uploading or ingesting 50,000 lines may take longer than a lease

    @property
    def max_attempts(self) -> int:
        return settings.QA_JUDGE_MAX_ATTEMPTS

    @property
    def lease_seconds(self) -> float:
        return settings.QA_BATCH_LEASE

    @property
    def time_limit(self) -> float:
        return settings.QA_BATCH_LEASE

    def lost(self, *, now: datetime, settled: datetime) -> Q:
        # A batch waiting for its next poll has had its attempt given back (core.jobs.job_wait), so it looks
        # never claimed, but its message is due QA_BATCH_POLL_INTERVAL after that claim: it is lost only
        # once that is past. Otherwise every collector's sweep polled every waiting batch each minute,
        # whatever the poll interval an operator set.
        waiting = Q(attempts=0, started_at__isnull=False)
        overdue = settled - timedelta(seconds=settings.QA_BATCH_POLL_INTERVAL + self.time_limit)
        return (super().lost(now=now, settled=settled) & ~waiting) | (waiting & Q(started_at__lt=overdue))

    def failed(self, job: BatchJob, error: str, now: datetime) -> None:
        # The batch is over: whatever it did not answer goes back to be batched again.
        _runs_give_back(job.row, f"The batch failed: {error}")


BATCHES = Batches()


# --- Collecting ---------------------------------------------------------------------


def batches_collect() -> list[int]:
    """Put every batch-mode judge's pending runs into batches; the new batches' ids."""
    created = []
    for judge in Judge.objects.filter(mode=BATCH):
        if reason := judge.unavailable_reason:
            logger.warning("Judge %s takes batches but cannot be used: %s", judge.name, reason)
            continue
        # Only redacted runs are collected. Each run's own task redacts it (qa.execution), so the workers
        # share that CPU, and one whose task was lost gets it again from the executor's sweep
        # (ProductionRuns.sweep_scope). Redacting here, one call after another in this one task, fell
        # behind at 12 calls a second whenever the workers' queue was behind, and the collector beat
        # started the next minute redacted the same calls again (bench/scale).
        # Another batch only while the last one was full: the runs the workers redact meanwhile wait for the
        # next collection, in one batch, rather than each few of them making a batch of their own (at 12
        # calls a second a collection went on making batches of 1 to 9 lines for as long as calls came).
        while (claimed := _batch_create(judge=judge)) is not None:
            batch_id, lines = claimed
            created.append(batch_id)
            if lines < settings.QA_BATCH_MAX_REQUESTS:
                break
    return created


@transaction.atomic
def _batch_create(*, judge: Judge) -> tuple[int, int] | None:
    """Claim up to QA_BATCH_MAX_REQUESTS of `judge`'s pending runs into a new batch (published once
    committed): its id and how many runs it took; None when there are none. Runs another collector
    holds are skipped, not waited for."""
    ids = list(
        JudgeRun.objects.select_for_update(skip_locked=True, of=("self",))
        .filter(judge=judge, status=JudgeRun.Status.PENDING, recording__redaction__isnull=False)
        .order_by("pk")
        .values_list("pk", flat=True)[: settings.QA_BATCH_MAX_REQUESTS]
    )
    if not ids:
        return None
    now = timezone.now()
    batch = JudgeBatch.objects.create(judge=judge)
    # Each run's claim (core.jobs: running, one attempt more) leased for the provider's whole window.
    lease = timedelta(seconds=completion_window_seconds() + 2 * settings.QA_BATCH_LEASE + settings.QA_BATCH_POLL_INTERVAL)
    JudgeRun.objects.filter(pk__in=ids, status=JudgeRun.Status.PENDING).update(
        status=JudgeRun.Status.RUNNING, attempts=F("attempts") + 1, started_at=now, leased_until=now + lease,
        batch=batch, batched=True,
    )  # fmt: skip
    Recording.objects.filter(runs__pk__in=ids).update(status=Recording.Status.JUDGING, updated_at=now)
    transaction.on_commit(lambda: batch_publish(batch_id=batch.pk))
    return batch.pk, len(ids)


def batch_publish(*, batch_id: int, countdown: float = 0.0) -> bool:
    """Hand the batch to a worker; False if the broker is down (the sweep publishes it later)."""
    try:
        task_publish("qa.judge_batch", batch_id, countdown=countdown)
    except OperationalError:
        logger.warning("Broker unreachable: batch %s stays pending for the sweep.", batch_id, exc_info=True)
        return False
    return True


def batches_sweep() -> int:
    """Publish again the batches that are due or whose worker died (core.jobs.jobs_due)."""
    return sum(batch_publish(batch_id=pk) for pk in jobs_due(kind=BATCHES).values_list("pk", flat=True))


# --- One step of a batch ----------------------------------------------------------------


def judge_batch_execute(*, batch_id: int) -> Result:
    """Do the batch's next step (submit, poll or ingest) if it can be claimed. Safe to call any number of times."""
    batch = JudgeBatch.objects.select_related("judge").filter(pk=batch_id, status=JudgeBatch.Status.PENDING).first()
    if batch is None:
        return Result(Outcome.SKIPPED)
    job = BatchJob(row=batch)
    if not job_claim(BATCHES, job):
        return Result(Outcome.SKIPPED)
    if interrupted := job_interrupted(BATCHES, job):
        return interrupted
    try:
        backend = backend_get(batch.judge)
    except LLMError as error:
        return job_give_back(BATCHES, job, error)
    with lease_kept(BATCHES, job):
        try:
            return _step(job, backend)
        except openai.OpenAIError as error:
            return job_give_back(BATCHES, job, llm_error(error, backend.model))
        except LLMError as error:
            return job_give_back(BATCHES, job, error)


def _step(job: BatchJob, backend: Backend) -> Result:
    batch = job.row
    if not batch.provider_batch_id:
        if not _submit(job, backend):
            return Result(Outcome.SKIPPED)
        if not batch.requests:  # nothing left to send (every run failed before any call)
            return Result(Outcome.SUCCEEDED) if job_succeed(BATCHES, job, now=timezone.now()) else Result(Outcome.SKIPPED)
        return job_wait(BATCHES, job, settings.QA_BATCH_POLL_INTERVAL)
    remote = backend.client.batches.retrieve(batch.provider_batch_id)
    if remote.status in WORKING:
        return job_wait(BATCHES, job, settings.QA_BATCH_POLL_INTERVAL, provider_status=remote.status)
    _ingest(job, backend, remote)
    if remote.status == "completed":
        _runs_give_back(batch, "The provider's batch completed without an answer for this call.")
        with transaction.atomic():
            succeeded = job_succeed(BATCHES, job, now=timezone.now(), provider_status=remote.status)
        return Result(Outcome.SUCCEEDED) if succeeded else Result(Outcome.SKIPPED)
    # Expired (the window ran out), failed or cancelled: what it answered is stored, the rest batched again.
    job_held(BATCHES, job).update(provider_status=remote.status)
    why = {"expired": "the provider's batch expired before answering it"}.get(
        remote.status, f"the provider's batch ended {remote.status}: {_batch_errors(remote)}"
    )
    return job_fail(BATCHES, job, why[0].upper() + why[1:] + ".")


def _batch_errors(remote: Any) -> str:
    errors = getattr(getattr(remote, "errors", None), "data", None) or []
    return "; ".join(f"{error.code}: {error.message}" for error in errors) or "no reason given"


def _running_runs(batch: JudgeBatch) -> Iterator[list[JudgeRun]]:
    """The batch's runs still running in it, in chunks, with what judging them reads."""
    runs = (
        JudgeRun.objects.select_related("recording", "recording__redaction")
        .only(
            "recording_id", "rubric_id", "judge_id", "status", "attempts", "prompt_version", "batch_id",
            "recording__transcript", "recording__workspace_id", "recording__redaction__llm_spans",
        )
        .filter(batch=batch, status=JudgeRun.Status.RUNNING)
        .order_by("pk")
    )
    last = 0
    while chunk := list(runs.filter(pk__gt=last)[:CHUNK]):
        yield chunk
        last = chunk[-1].pk


def _job(run: JudgeRun, judge: Judge) -> Job:
    return Job(
        row=run, rubric=rubric_for_judging(run.rubric_id), judge=judge, transcript=run.recording.transcript,
        llm_spans=run.recording.redaction.llm_spans if hasattr(run.recording, "redaction") else None,
    )  # fmt: skip


def _custom_id(run: JudgeRun, sample: int) -> str:
    # The attempt names the claim: a line can only ever be stored for the claim it was sent under.
    return f"run-{run.pk}-{run.attempts}-{sample}"


def _submit(job: BatchJob, backend: Backend) -> bool:
    """Write the batch's lines, upload them and create the provider's batch (or find the one a worker
    that died created); saved on the batch as each step is done. False if the claim was lost."""
    batch = job.row
    askings: dict[int, Asking] = {}
    lines: list[str] = []
    for chunk in _running_runs(batch):
        for run in chunk:
            run_job = _job(run, batch.judge)
            if run.rubric_id not in askings:
                askings[run.rubric_id] = asking_prepare(rubric=run_job.rubric, judge=batch.judge)
                JudgeRun.objects.filter(batch=batch, status=JudgeRun.Status.RUNNING, rubric_id=run.rubric_id).update(
                    **askings[run.rubric_id].claim_fields
                )
            asking = askings[run.rubric_id]
            request = judgment_request(asking=asking, transcript=run_job.transcript, llm_spans=run_job.llm_spans)
            if request.problem:
                job_fail(RUNS, run_job, request.problem)
                continue
            body = {
                "model": backend.model,
                "messages": request.messages,
                "temperature": asking.temperature,
                "max_tokens": asking.question.max_tokens,
                **request_constraint(backend, request.schema),
            }
            for sample in range(asking.samples):
                line = {"custom_id": _custom_id(run, sample), "method": "POST", "url": ENDPOINT, "body": body}
                lines.append(json.dumps(line, ensure_ascii=False))
    if not lines:
        return bool(job_held(BATCHES, job).update(requests=0))
    client = backend.client
    found = None
    if batch.input_file_id:
        # An earlier claim uploaded the lines and may have created the batch before it died.
        found = _provider_batch_find(client, batch)
    else:
        data = ("\n".join(lines) + "\n").encode()
        uploaded = client.files.create(file=(f"veredicto-batch-{batch.pk}.jsonl", data), purpose="batch")
        if not job_held(BATCHES, job).update(input_file_id=uploaded.id):
            return False
        batch.input_file_id = uploaded.id
    remote = found or client.batches.create(
        input_file_id=batch.input_file_id,
        endpoint=ENDPOINT,
        completion_window=settings.QA_BATCH_COMPLETION_WINDOW,
        metadata={METADATA_KEY: str(batch.pk)},
    )
    now = timezone.now()
    saved = job_held(BATCHES, job).update(
        provider_batch_id=remote.id, provider_status=remote.status, submitted_at=now, requests=len(lines)
    )
    batch.provider_batch_id, batch.provider_status, batch.submitted_at, batch.requests = remote.id, remote.status, now, len(lines)
    return bool(saved)


def _provider_batch_find(client: openai.OpenAI, batch: JudgeBatch) -> Any | None:
    """The provider's batch created for `batch` from its uploaded file, among the latest hundred."""
    for remote in client.batches.list(limit=100).data:
        if (remote.metadata or {}).get(METADATA_KEY) == str(batch.pk) and remote.input_file_id == batch.input_file_id:
            return remote
    return None


# --- Ingesting ------------------------------------------------------------------------


def _lines(client: openai.OpenAI, file_id: str | None) -> Iterator[dict[str, Any]]:
    if not file_id:
        return
    for line in client.files.content(file_id).text.splitlines():
        if line.strip():
            yield json.loads(line)


def _line_error(line: dict[str, Any]) -> LLMError | None:
    """Why a result line is no answer (None when it is one): transient for a server error, a rate
    limit or an expired batch, as the synchronous path's HTTP errors are."""
    response = line.get("response") or {}
    if error := line.get("error"):
        code = error.get("code") or ""
        return LLMError(f"The batch did not answer this call: {code} {error.get('message') or ''}".strip(),
                        transient=code in ("batch_expired", "batch_cancelled", "server_error", "rate_limit_exceeded"))
    status = response.get("status_code")
    if status != 200:
        body = response.get("body") or {}
        message = (body.get("error") or {}).get("message") if isinstance(body, dict) else str(body)
        return LLMError(
            f"The LLM server answered HTTP {status} in the batch: {message or 'no message'}",
            transient=status is None or status in TRANSIENT_STATUSES or status >= 500,
        )
    return None


def _completion(line: dict[str, Any]) -> Completion:
    """A result line's chat completion as the synchronous path's client gives it."""
    body = line["response"]["body"]
    choices = body.get("choices") or []
    if not choices:
        raise LLMError("The LLM answered without any choice.", transient=True)
    message, usage = choices[0].get("message") or {}, body.get("usage") or {}
    return Completion(
        content=message.get("content"),
        refusal=message.get("refusal"),
        finish_reason=choices[0].get("finish_reason") or "",
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        duration_ms=0,  # the provider's time is the batch's, not the call's
        cached_tokens=cached_tokens_of(usage),
    )


def _ingest(job: BatchJob, backend: Backend, remote: Any) -> None:
    """Store every answer of the provider's output and error files: each run through the synchronous
    path's checks, in a transaction of its own, only while it is still running in this batch."""
    batch = job.row
    results: dict[str, dict[str, Any]] = {}
    for file_id in (remote.output_file_id, remote.error_file_id):
        for line in _lines(backend.client, file_id):
            results[line.get("custom_id", "")] = line
    askings: dict[tuple[int, str], Asking] = {}
    for chunk in _running_runs(batch):
        for run in chunk:
            lines = [results.get(_custom_id(run, sample)) for sample in range(batch.judge.samples)]
            if any(line is None for line in lines):
                continue  # unanswered: given back below, once every answer is stored
            run_job = _job(run, batch.judge)
            try:
                key = (run.rubric_id, run.prompt_version)
                if key not in askings:
                    askings[key] = asking_prepare(rubric=run_job.rubric, judge=batch.judge, prompt_version=run.prompt_version)
                asking = askings[key]
                if error := next((error for line in lines if (error := _line_error(line))), None):
                    raise error
                completions = [_completion(line) for line in lines]
            except LLMError as error:
                job_give_back(RUNS, run_job, error)
                continue
            request = judgment_request(asking=asking, transcript=run_job.transcript, llm_spans=run_job.llm_spans)
            judgment = judgment_of(asking=asking, request=request, completions=completions)
            if judgment.error:
                job_fail(RUNS, run_job, judgment.error, **judgment.usage)
            else:
                judgment_store(RUNS, run_job, judgment)


def _runs_give_back(batch: JudgeBatch, reason: str) -> int:
    """Give back every run still running in `batch` (transient: batched again until its attempts run out)."""
    error = LLMError(reason, transient=True)
    given = 0
    for chunk in _running_runs(batch):
        for run in chunk:
            given += job_release(RUNS, _job(run, batch.judge), error).outcome is not Outcome.SKIPPED
    return given
