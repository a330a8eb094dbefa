"""The batch path through a real `celery worker` on Redis (issue 45): each run's task redacts its call in
the worker (one whose message was lost gets it again from the sweep), beat's collector (called here)
publishes the batch, and the worker submits it, polls it while the local Files and Batches server keeps
it in progress (each poll a task rescheduled by the worker), and ingests it."""

from __future__ import annotations

import time
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from qa.batching import batches_collect
from qa.execution import runs_sweep
from qa.judging import recording_enqueue_judging
from qa.models import Judge, JudgeBatch, JudgeRun, Recording, RecordingRedaction, Score
from tests.factories import RecordingFactory
from tests.judge.conftest import judge_rubric
from tests.support.fake_batches import FakeBatches
from tests.support.workers import celery_worker

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def test_a_worker_submits_polls_and_ingests_a_batch(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeBatches() as server, celery_worker(
        "--concurrency=2", env={"OPENAI_API_KEY": "test-key", "QA_BATCH_POLL_INTERVAL": "0"}
    ) as worker:
        server.polls_in_progress = 2
        Judge.objects.create(
            name="batcher", base_url=server.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY",
            is_default=True, evidence_mode="quote", mode="batch", prompt_price=Decimal("1"), completion_price=Decimal("1"),
        )  # fmt: skip
        rubric = judge_rubric()
        recordings = [RecordingFactory(rubric=rubric) for _ in range(3)]
        # Each run's own task reaches the worker too, which redacts its call and leaves it to the collector.
        runs = [recording_enqueue_judging(recording=recording) for recording in recordings]
        deadline = time.monotonic() + 120
        while RecordingRedaction.objects.filter(recording__in=recordings).count() < len(recordings):
            assert worker.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, "the worker did not redact the calls"
            time.sleep(0.3)
        assert set(JudgeRun.objects.values_list("status", flat=True)) == {"pending"}

        [batch_id] = batches_collect()  # beat's work; the batch goes to the worker on commit
        # A deadline of its own: the first one also paid for the worker's start, on a loaded machine most of it.
        deadline = time.monotonic() + 60
        while JudgeRun.objects.filter(pk__in=[run.pk for run in runs]).exclude(status="succeeded").exists():
            assert worker.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, "the worker did not finish the batch in time"
            time.sleep(0.3)

    batch = JudgeBatch.objects.get(pk=batch_id)
    assert (batch.status, batch.provider_status, batch.requests, batch.attempts) == ("succeeded", "completed", 3, 1)
    assert server.created == [batch.provider_batch_id]
    assert Score.objects.count() == 3 * 2
    assert set(Recording.objects.values_list("status", flat=True)) <= {Recording.Status.JUDGED, Recording.Status.IN_REVIEW}


def test_a_run_whose_task_was_lost_is_redacted_by_a_worker_then_batched(monkeypatch, settings):
    """A batch judge's run whose message never reached a worker: the executor's sweep publishes its task
    again, the worker redacts its call, and only then does the collector take it."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with FakeBatches() as server, celery_worker(
        "--concurrency=2", env={"OPENAI_API_KEY": "test-key", "QA_BATCH_POLL_INTERVAL": "0"}
    ) as worker:
        judge = Judge.objects.create(
            name="batcher", base_url=server.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY",
            is_default=True, evidence_mode="quote", mode="batch", prompt_price=Decimal("1"), completion_price=Decimal("1"),
        )  # fmt: skip
        rubric = judge_rubric()
        recording = RecordingFactory(rubric=rubric)
        # Created without its message (as with a broker that was down), a sweep interval ago.
        run = JudgeRun.objects.create(recording=recording, rubric=rubric, judge=judge)
        JudgeRun.objects.filter(pk=run.pk).update(
            created_at=timezone.now() - timedelta(seconds=settings.QA_JUDGE_SWEEP_INTERVAL + 1)
        )
        assert batches_collect() == []  # unredacted: not the collector's to redact

        assert runs_sweep() == 1
        deadline = time.monotonic() + 60
        while not RecordingRedaction.objects.filter(recording=recording).exists():
            assert worker.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, "the worker did not redact the call"
            time.sleep(0.3)
        [batch_id] = batches_collect()
        while JudgeRun.objects.get(pk=run.pk).status != "succeeded":
            assert worker.poll() is None, "the worker exited"
            assert time.monotonic() < deadline + 60, "the worker did not finish the batch in time"
            time.sleep(0.3)

    assert JudgeBatch.objects.get(pk=batch_id).requests == 1 and Score.objects.filter(run=run).count() == 2
    assert runs_sweep() == 0  # a redacted, judged run is nobody's to hand out again
