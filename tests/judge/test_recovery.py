"""What happens when things break: the broker is down at ingest, a worker dies
mid-judgment, the LLM quota runs out."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone
from kombu.exceptions import OperationalError

from qa.execution import judge_run_execute, runs_sweep
from qa.judging import Outcome, judge_run_create, recording_enqueue_judging
from qa.models import JudgeRun, Recording, Score
from core.rate_limit import quota_settle, quota_try_acquire
from qa.tasks import judge_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


@contextmanager
def claimed_in_another_thread(run: JudgeRun) -> Iterator[Future[Outcome]]:
    """An executor judging `run` on a thread and connection of its own, as a second worker thread
    would; yielded once it holds the claim, so the test can act while it waits for the LLM."""

    def execute() -> Outcome:
        try:
            return judge_run_execute(run_id=run.pk).outcome
        finally:
            connection.close()

    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(execute)
        deadline = time.monotonic() + 10
        while JudgeRun.objects.get(pk=run.pk).status != JudgeRun.Status.RUNNING:
            assert time.monotonic() < deadline, "the first executor never claimed the run"
            time.sleep(0.02)
        yield first


def test_broker_down_keeps_the_recording_and_the_sweep_enqueues_it(
    fake_llm, recording, monkeypatch, django_capture_on_commit_callbacks
):
    def broker_down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    with monkeypatch.context() as patch:
        patch.setattr(judge_run, "apply_async", broker_down)
        with django_capture_on_commit_callbacks(execute=True):
            run = recording_enqueue_judging(recording=recording)
    recording.refresh_from_db()
    assert recording.status == Recording.Status.RECEIVED
    assert JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.PENDING

    assert runs_sweep() == 0  # just published runs get time to arrive
    JudgeRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert runs_sweep() == 1

    run.refresh_from_db()
    recording.refresh_from_db()
    assert run.status == JudgeRun.Status.SUCCEEDED
    assert recording.status == Recording.Status.JUDGED


def test_a_run_whose_worker_died_is_taken_up_again(fake_llm, recording, settings):
    run = recording_enqueue_judging(recording=recording)
    # What a worker killed after its claim leaves behind: a lease as long as the task may run.
    claimed = timezone.now()
    JudgeRun.objects.filter(pk=run.pk).update(
        status=JudgeRun.Status.RUNNING,
        attempts=1,
        started_at=claimed,
        leased_until=claimed + timedelta(seconds=settings.QA_JUDGE_TIME_LIMIT + 30),
    )
    assert runs_sweep() == 0  # still within its lease: it may be alive

    JudgeRun.objects.filter(pk=run.pk).update(leased_until=timezone.now() - timedelta(seconds=1))
    assert runs_sweep() == 1

    run.refresh_from_db()
    assert (run.status, run.attempts, run.scores.count()) == (JudgeRun.Status.SUCCEEDED, 2, 2)


def test_a_run_claimed_before_leases_were_recorded_runs_out_a_lease_after_it_started(fake_llm, recording, settings):
    run = recording_enqueue_judging(recording=recording)
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING, attempts=1, started_at=timezone.now())
    assert runs_sweep() == 0

    JudgeRun.objects.filter(pk=run.pk).update(started_at=timezone.now() - timedelta(seconds=settings.QA_JUDGE_TIME_LIMIT + 60))
    assert runs_sweep() == 1

    run.refresh_from_db()
    assert (run.status, run.attempts, run.scores.count()) == (JudgeRun.Status.SUCCEEDED, 2, 2)


def test_a_retry_waiting_for_its_delay_is_not_swept_early(fake_llm, recording):
    run = recording_enqueue_judging(recording=recording)
    JudgeRun.objects.filter(pk=run.pk).update(
        attempts=1, created_at=timezone.now() - timedelta(hours=1), started_at=timezone.now() - timedelta(seconds=30)
    )

    assert runs_sweep() == 0


@pytest.fixture
def quota_scope(settings):
    if not django_settings.QA_REDIS_URL:
        pytest.skip("The shared LLM quota lives in Redis: set CELERY_BROKER_URL or REDIS_URL.")
    return f"test-{uuid.uuid4().hex}"


def test_requests_per_minute_are_shared(quota_scope, settings):
    settings.QA_LLM_REQUESTS_PER_MINUTE = 3
    settings.QA_LLM_TOKENS_PER_MINUTE = 0

    assert [quota_try_acquire(tokens=10, scope=quota_scope) for _ in range(3)] == [0, 0, 0]
    wait = quota_try_acquire(tokens=10, scope=quota_scope)
    assert 19 < wait <= 20  # one request every 20 s once the minute's quota is spent


def test_tokens_per_minute_are_reserved_then_settled(quota_scope, settings):
    settings.QA_LLM_REQUESTS_PER_MINUTE = 0
    settings.QA_LLM_TOKENS_PER_MINUTE = 1000

    assert quota_try_acquire(tokens=600, scope=quota_scope) == 0
    assert quota_try_acquire(tokens=600, scope=quota_scope) > 0
    quota_settle(reserved=600, used=200, scope=quota_scope)  # the call used less than reserved
    assert quota_try_acquire(tokens=600, scope=quota_scope) == 0


@pytest.mark.django_db(transaction=True)  # two executors on two connections, as two worker threads
def test_a_swept_run_is_never_stored_by_its_old_executor(fake_llm, recording, settings):
    """Under the thread pool nothing stops a slow task: the sweep hands its run to another
    executor, and the first one, when it comes back, must not store over it."""
    fake_llm.latency = 1.0
    run, _created = judge_run_create(recording=recording)

    with claimed_in_another_thread(run) as first:
        # It looks stuck (its lease ran out): the sweep takes the run back, and (tasks in-process) a
        # second executor judges it.
        JudgeRun.objects.filter(pk=run.pk).update(leased_until=timezone.now() - timedelta(seconds=1))
        assert runs_sweep() == 1
        assert first.result(timeout=30) is Outcome.SKIPPED

    run.refresh_from_db()
    assert (run.status, run.attempts) == (JudgeRun.Status.SUCCEEDED, 2)
    assert run.scores.count() == 2  # one judgment's scores, not two
    assert Score.objects.filter(run__recording=recording).count() == 2
    assert len(fake_llm.requests) == 2


@pytest.mark.django_db(transaction=True)
def test_a_swept_run_taken_back_but_not_yet_reclaimed_is_not_stored_either(fake_llm, recording, settings):
    fake_llm.latency = 1.0
    run, _created = judge_run_create(recording=recording)

    with claimed_in_another_thread(run) as first:
        # What the sweep does before it publishes (the broker may be down): the run is pending again.
        JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.PENDING)
        assert first.result(timeout=30) is Outcome.SKIPPED

    run.refresh_from_db()
    assert (run.status, run.attempts, run.scores.count()) == (JudgeRun.Status.PENDING, 1, 0)
    assert Recording.objects.get(pk=recording.pk).current_run is None
