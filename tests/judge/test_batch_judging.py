"""The judge's batch path (issue 45) against a local server implementing OpenAI's Files and Batches
APIs over real HTTP (tests/support/fake_batches.py), with the real `openai` client: each run's line is
the synchronous path's request, answers go through the same checks and verifier, a failed line is
batched again, an expired batch is transient, polling spends no attempt, and a worker killed between
creating the provider's batch and saving its id loses nothing and doubles nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from core.jobs import Outcome, jobs_due
from qa.batching import BATCHES, batches_collect, batches_sweep, judge_batch_execute
from qa.execution import RUNS, judge_run_execute
from qa.judging import asking_prepare, judge_run_create, judgment_request
from qa.models import Judge, JudgeBatch, JudgeRun, Recording, RecordingRedaction, Score
from tests.factories import RecordingFactory
from tests.support.fake_batches import FakeBatches
from tests.support.fake_openai import answer_for, completion, error
from tests.support.workers import ROOT, database_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def batch_server(monkeypatch, settings):
    with FakeBatches() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        settings.QA_BATCH_POLL_INTERVAL = 0
        yield server


@pytest.fixture
def batch_judge(batch_server, db) -> Judge:
    return Judge.objects.create(
        name="batcher", base_url=batch_server.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY",
        is_default=True, evidence_mode="quote", mode="batch",
        prompt_price=Decimal("2.50"), completion_price=Decimal("10.00"), batch_discount=Decimal("50"),
    )  # fmt: skip


def runs_for(rubric, count: int) -> list[JudgeRun]:
    return [
        judge_run_create(recording=RecordingFactory(rubric=rubric, transcript=f"AGENT: Hello, this is call {index}.\nCUSTOMER: Hi."))[0]
        for index in range(count)
    ]


def tasks_run() -> None:
    """What the workers do with each run's own message (published on commit, which these tests'
    transactions never reach): a batch judge's run has its call redacted and is left to the collector."""
    for pk in JudgeRun.objects.filter(status="pending", recording__redaction__isnull=True).values_list("pk", flat=True):
        assert judge_run_execute(run_id=pk).outcome is Outcome.SKIPPED


def drive(rounds: int = 10) -> None:
    """What beat and the workers do, in this process: each run's task, collect, then step every pending
    batch, until done."""
    for _ in range(rounds):
        tasks_run()
        batches_collect()
        pending = list(JudgeBatch.objects.filter(status="pending").values_list("pk", flat=True))
        if not pending and not JudgeRun.objects.filter(status__in=["pending", "running"]).exists():
            return
        for pk in pending:
            judge_batch_execute(batch_id=pk)
    raise AssertionError("the batches did not finish")


def assert_judged_once(runs: list[JudgeRun], criteria: int) -> None:
    for run in runs:
        run.refresh_from_db()
    assert {run.status for run in runs} == {JudgeRun.Status.SUCCEEDED}
    assert Score.objects.filter(run__in=runs).count() == len(runs) * criteria
    # One judgment per recording: none doubled, none lost.
    assert JudgeRun.objects.filter(recording__in=[run.recording_id for run in runs]).count() == len(runs)


def test_a_batch_judges_every_run_once_through_the_synchronous_checks(batch_server, batch_judge, rubric):
    runs = runs_for(rubric, 4)
    # The per-run task leaves a batch judge's runs to the collector.
    assert judge_run_execute(run_id=runs[0].pk).outcome is Outcome.SKIPPED

    drive()

    assert_judged_once(runs, criteria=2)
    [batch] = JudgeBatch.objects.all()
    assert (batch.status, batch.provider_status, batch.requests) == ("succeeded", "completed", 4)
    assert batch_server.created == [batch.provider_batch_id]
    [uploaded] = [batch_server.contents[batch.input_file_id].decode().splitlines()]
    lines = [json.loads(line) for line in uploaded]
    assert {line["custom_id"] for line in lines} == {f"run-{run.pk}-1-0" for run in runs}
    assert all(line["method"] == "POST" and line["url"] == "/v1/chat/completions" for line in lines)
    # Each line is the synchronous path's request: its messages and its strict schema.
    asking = asking_prepare(rubric=rubric, judge=batch_judge)
    request = judgment_request(asking=asking, transcript=runs[0].recording.transcript)
    first = next(line for line in lines if line["custom_id"] == f"run-{runs[0].pk}-1-0")["body"]
    assert first["messages"] == request.messages and first["response_format"]["json_schema"]["schema"] == request.schema
    for run in runs:
        run.refresh_from_db()
        assert run.batched and run.batch_id == batch.pk and run.attempts == 1
        assert (run.backend, run.model, run.prompt_version) == ("openai-compatible", "fake-judge", asking.question.prompt.version)
        # The fake's usage, 900 + 300 tokens, at half of 2.50 and 10.00 per million.
        assert run.cost == Decimal("0.002625")
        assert all(score.evidence_verified for score in run.scores.all())
        assert Recording.objects.get(pk=run.recording_id).current_run_id == run.pk


def test_a_failed_line_is_batched_again_and_a_final_one_fails_its_run(batch_server, batch_judge, rubric):
    runs = runs_for(rubric, 3)
    batch_server.script(
        error(500, "upstream overloaded"),  # the first line: transient, batched again
        lambda request: completion(None, refusal="I cannot judge this call."),  # the second: final
        lambda request: completion(answer_for(request, evidence="words nobody said")),  # unverified, stored
    )

    drive()

    first, second, third = (JudgeRun.objects.get(pk=run.pk) for run in runs)
    assert first.status == "succeeded" and first.attempts == 2 and first.scores.count() == 2
    assert second.status == "failed" and "refused" in second.error and second.scores.count() == 0
    assert third.status == "succeeded" and not any(score.evidence_verified for score in third.scores.all())
    assert all(score.confidence == 0 for score in third.scores.all())
    assert len(batch_server.created) == 2 and JudgeBatch.objects.filter(status="succeeded").count() == 2
    assert Recording.objects.get(pk=second.recording_id).status == Recording.Status.FAILED


def test_an_expired_batch_keeps_what_it_answered_and_batches_the_rest_again(batch_server, batch_judge, rubric):
    runs = runs_for(rubric, 5)
    batch_server.expire_next(2)

    drive()

    assert_judged_once(runs, criteria=2)
    expired, later = JudgeBatch.objects.order_by("pk")
    assert (expired.status, expired.provider_status) == ("failed", "expired")
    assert "expired" in expired.error
    assert (later.status, later.requests) == ("succeeded", 3)
    assert sorted(JudgeRun.objects.values_list("attempts", flat=True)) == [1, 1, 2, 2, 2]


def test_polling_while_the_provider_works_spends_no_attempt(batch_server, batch_judge, rubric, settings):
    runs = runs_for(rubric, 2)
    batch_server.polls_in_progress = settings.QA_JUDGE_MAX_ATTEMPTS + 3

    drive(rounds=settings.QA_JUDGE_MAX_ATTEMPTS + 8)

    assert_judged_once(runs, criteria=2)
    [batch] = JudgeBatch.objects.all()
    assert batch.status == "succeeded" and batch.attempts == 1


def test_a_batch_waiting_for_its_poll_is_not_polled_early_by_the_sweep(batch_server, batch_judge, rubric, settings):
    """The poll interval holds: the collector's sweep publishes a waiting batch again only once its
    poll's message is overdue (a worker that lost it), not every minute."""
    settings.QA_BATCH_POLL_INTERVAL = 600
    runs_for(rubric, 1)
    tasks_run()
    [batch_id] = batches_collect()
    assert judge_batch_execute(batch_id=batch_id).outcome is Outcome.RETRY  # submitted; polled in 600 s
    batch = JudgeBatch.objects.get(pk=batch_id)
    assert (batch.status, batch.attempts, batch.provider_status) == ("pending", 0, "validating")
    minutes_ago = timezone.now() - timedelta(seconds=2 * settings.QA_JUDGE_SWEEP_INTERVAL)
    JudgeBatch.objects.filter(pk=batch_id).update(created_at=minutes_ago, started_at=minutes_ago)
    assert not jobs_due(kind=BATCHES).filter(pk=batch_id).exists()
    # Its poll's message is overdue: lost, handed out again.
    overdue = timezone.now() - timedelta(
        seconds=settings.QA_BATCH_POLL_INTERVAL + settings.QA_BATCH_LEASE + settings.QA_JUDGE_SWEEP_INTERVAL + 1
    )
    JudgeBatch.objects.filter(pk=batch_id).update(started_at=overdue)
    assert jobs_due(kind=BATCHES).filter(pk=batch_id).exists()


def test_a_batch_runs_own_task_redacts_it_and_leaves_it_to_the_collector(batch_server, batch_judge, rubric):
    """The run's task (published for every run) does the redaction, so the workers share it; the
    collector then only batches."""
    [run] = runs_for(rubric, 1)
    assert judge_run_execute(run_id=run.pk).outcome is Outcome.SKIPPED
    run.refresh_from_db()
    assert run.status == "pending" and run.batch_id is None
    assert RecordingRedaction.objects.filter(recording_id=run.recording_id).exists()
    [batch_id] = batches_collect()
    run.refresh_from_db()
    assert run.batch_id == batch_id and run.status == "running"


def test_the_collector_leaves_a_calls_redaction_to_its_runs_task(batch_server, batch_judge, rubric):
    """The collector only batches: a run whose task has not redacted its call yet waits for it. The
    collector redacting calls one after another in one task fell behind at 12 calls a second whenever
    the workers' queue was behind, and the next minute's collector redacted the same calls again."""
    [run] = runs_for(rubric, 1)
    assert batches_collect() == []
    run.refresh_from_db()
    assert run.status == "pending" and run.batch_id is None
    assert not RecordingRedaction.objects.filter(recording_id=run.recording_id).exists()


def test_a_run_whose_task_was_lost_before_redacting_is_handed_out_again_by_the_sweep(
    batch_server, batch_judge, rubric, settings
):
    """A batch judge's runs are left to the collector, but one still unredacted once its message should
    have arrived (a broker that was down) gets its task again, so a worker redacts it."""
    lost, fresh, waiting = runs_for(rubric, 3)
    JudgeRun.objects.filter(pk__in=[lost.pk, waiting.pk]).update(
        created_at=timezone.now() - timedelta(seconds=settings.QA_JUDGE_SWEEP_INTERVAL + 1)
    )
    assert judge_run_execute(run_id=waiting.pk).outcome is Outcome.SKIPPED  # redacted: the collector's now
    assert list(jobs_due(kind=RUNS).values_list("pk", flat=True)) == [lost.pk]


def test_runs_redacted_while_the_collector_works_wait_for_the_next_collection(
    batch_server, batch_judge, rubric, settings, monkeypatch
):
    """The collector makes another batch only while the last was full (QA_BATCH_MAX_REQUESTS): a run a
    worker redacts while it works waits for the next collection instead of making a batch of its own."""
    import qa.batching

    first, late = runs_for(rubric, 2)
    judge_run_execute(run_id=first.pk)
    batch_create = qa.batching._batch_create

    def a_worker_redacts_meanwhile(*, judge):
        claimed = batch_create(judge=judge)
        if not RecordingRedaction.objects.filter(recording_id=late.recording_id).exists():
            judge_run_execute(run_id=late.pk)  # a worker, at the same time
        return claimed

    monkeypatch.setattr(qa.batching, "_batch_create", a_worker_redacts_meanwhile)
    [batch_id] = batches_collect()
    assert list(JudgeRun.objects.filter(batch=batch_id).values_list("pk", flat=True)) == [first.pk]
    late.refresh_from_db()
    assert late.status == "pending" and late.batch_id is None
    [later] = batches_collect()
    assert list(JudgeRun.objects.filter(batch=later).values_list("pk", flat=True)) == [late.pk]

    # A full batch is followed by another at once: the runs beyond the limit need not wait a minute.
    settings.QA_BATCH_MAX_REQUESTS = 2
    monkeypatch.setattr(qa.batching, "_batch_create", batch_create)
    runs = runs_for(rubric, 3)
    tasks_run()
    assert [JudgeRun.objects.filter(batch=pk).count() for pk in batches_collect()] == [2, 1]
    assert all(run.batch_id for run in JudgeRun.objects.filter(pk__in=[run.pk for run in runs]))


def test_a_run_in_a_batch_is_never_given_to_the_synchronous_path(batch_server, batch_judge, rubric):
    [run] = runs_for(rubric, 1)
    tasks_run()
    batches_collect()
    run.refresh_from_db()
    assert run.status == "running" and run.batch_id
    # Its claim is leased for the provider's whole window: the runs' sweep does not take it back.
    assert run.leased_until > timezone.now() + timedelta(hours=24)
    assert judge_run_execute(run_id=run.pk).outcome is Outcome.SKIPPED
    assert batches_collect() == []  # and no second batch takes it


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_after_creating_the_batch_loses_nothing_and_doubles_nothing(
    batch_server, batch_judge, rubric, settings
):
    runs = runs_for(rubric, 3)
    tasks_run()
    [batch_id] = batches_collect()
    batch_server.hold_create = hold = __import__("threading").Event()
    worker = subprocess.Popen(
        [sys.executable, "-c",
         "import django; django.setup(); from qa.batching import judge_batch_execute; "
         f"judge_batch_execute(batch_id={batch_id})"],
        cwd=ROOT, env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "DATABASE_URL": database_url()},
        start_new_session=True,
    )  # fmt: skip
    try:
        # The provider has created the batch; the worker dies before it hears so (and saves its id).
        assert batch_server.create_received.wait(timeout=120)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        hold.set()
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
    batch = JudgeBatch.objects.get(pk=batch_id)
    assert batch.status == "running" and batch.input_file_id and not batch.provider_batch_id
    assert len(batch_server.created) == 1

    # Its lease runs out; the sweep hands the batch out again, and the next claim finds the provider's batch.
    JudgeBatch.objects.filter(pk=batch_id).update(leased_until=timezone.now() - timedelta(seconds=1))
    settings.CELERY_TASK_ALWAYS_EAGER = False
    batches_sweep()
    assert JudgeBatch.objects.get(pk=batch_id).status == "pending"
    drive()

    assert_judged_once(runs, criteria=2)
    batch = JudgeBatch.objects.get(pk=batch_id)
    assert batch_server.created == [batch.provider_batch_id] and batch.status == "succeeded"
    assert len(batch_server.requests) == 3  # each line answered once by the provider


def test_only_a_server_judge_takes_batches(db):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="Only a server judge can take batches"):
        Judge(name="local-batch", backend=Judge.Backend.LOCAL, mode="batch").full_clean()
