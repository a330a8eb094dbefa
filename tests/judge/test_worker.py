"""A real `celery worker` on the Redis broker, judging rows of the test
PostgreSQL database through the fake LLM server."""

from __future__ import annotations

import subprocess
import time

import pytest
from django.db import connection

from qa.judging import recording_enqueue_judging
from qa.models import JudgeRun, Recording, Score
from qa.tasks import judge_run
from rubrics.services import rubric_new_version, rubric_publish
from tests.factories import RecordingFactory
from tests.judge.conftest import judge_rubric
from tests.support.fake_openai import error
from tests.support.workers import celery_worker

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

DONE = (Recording.Status.JUDGED, Recording.Status.IN_REVIEW, Recording.Status.FAILED)


@pytest.fixture
def worker(fake_llm):
    yield from _worker(fake_llm)


@pytest.fixture
def worker_keeping_connections(fake_llm):
    """A worker configured as production is: connections kept for a minute."""
    yield from _worker(fake_llm, CONN_MAX_AGE="60")


def _worker(fake_llm, **extra_env: str):
    env = {
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "test-key",
        "QA_JUDGE_MODEL": "fake-judge",
        "QA_JUDGE_RETRY_BASE": "0.2",
        **extra_env,
    }
    with celery_worker("--concurrency=2", env=env) as process:
        yield process


def _wait_until_done(recordings: list[Recording], worker: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    ids = [recording.pk for recording in recordings]
    while Recording.objects.filter(pk__in=ids).exclude(status__in=DONE).exists():
        assert worker.poll() is None, "the worker exited"
        assert time.monotonic() < deadline, "the worker did not finish in time"
        time.sleep(0.2)


def test_worker_judges_retries_and_ignores_duplicates(worker, fake_llm):
    rubric = judge_rubric()
    fake_llm.script(error(429, "slow down", headers={"Retry-After": "1"}))
    recordings = [RecordingFactory(rubric=rubric) for _ in range(3)]

    runs = [recording_enqueue_judging(recording=recording) for recording in recordings]  # on commit: to Redis
    judge_run.delay(runs[0].pk)  # a duplicated message
    _wait_until_done(recordings, worker)

    assert JudgeRun.objects.count() == 3
    assert set(JudgeRun.objects.values_list("status", flat=True)) == {JudgeRun.Status.SUCCEEDED}
    assert Score.objects.count() == 3 * 2
    assert JudgeRun.objects.filter(attempts=2).count() == 1  # the one that met the 429
    assert len(fake_llm.requests) == 4
    for recording in Recording.objects.filter(pk__in=[r.pk for r in recordings]):
        assert recording.status == Recording.Status.JUDGED
        assert recording.current_run.backend == "openai-compatible"


def _sessions_opened() -> int:
    """How many sessions PostgreSQL has opened to the test database so far.

    A backend counts its own session in its statistics, which it reports when
    it goes idle (within a second) or exits; the wait lets the count settle.
    """
    time.sleep(1.5)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def test_worker_keeps_its_database_connections(worker_keeping_connections):
    """Celery's Django fixup would close every connection around every task
    (a new PostgreSQL backend per judgment); the worker keeps them as a web
    process does, within CONN_MAX_AGE."""
    rubric = judge_rubric()
    first = [RecordingFactory(rubric=rubric) for _ in range(2)]
    for recording in first:  # both worker threads open their connection
        recording_enqueue_judging(recording=recording)
    _wait_until_done(first, worker_keeping_connections)
    before = _sessions_opened()

    recordings = [RecordingFactory(rubric=rubric) for _ in range(8)]
    for recording in recordings:
        recording_enqueue_judging(recording=recording)
    _wait_until_done(recordings, worker_keeping_connections)

    assert Recording.objects.filter(pk__in=[r.pk for r in recordings], status=Recording.Status.JUDGED).count() == 8
    # The worker has two threads, each with its own connection: at most two
    # late first connections, never one per judgment.
    assert _sessions_opened() - before <= 2


def test_a_version_published_in_a_busy_queue_gets_its_own_warm_up(worker, fake_llm):
    """Two worker processes judge both versions at once: each version's first N
    to finish, and only they, are warm-up, however the judgments interleave."""
    first = judge_rubric(warm_up_judgments=5)
    old = [RecordingFactory(rubric=first) for _ in range(12)]
    for recording in old:
        recording_enqueue_judging(recording=recording)
    second = rubric_publish(rubric=rubric_new_version(rubric=first))  # while the queue is being worked
    new = [RecordingFactory(rubric=second) for _ in range(12)]
    for recording in new:
        recording_enqueue_judging(recording=recording)
    _wait_until_done(old + new, worker)

    for version in (first, second):
        runs = list(JudgeRun.objects.filter(rubric=version).order_by("finished_at", "pk"))
        assert len(runs) == 12
        assert [run.warm_up for run in runs] == [True] * 5 + [False] * 7
        for run in runs:
            reasons = Recording.objects.get(pk=run.recording_id).review_reasons
            assert ("warm_up" in reasons) == run.warm_up
