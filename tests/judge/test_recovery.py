"""What happens when things break: the broker is down at ingest, a worker dies
mid-judgment, the LLM quota runs out."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone
from kombu.exceptions import OperationalError

from qa.judging import recording_enqueue_judging, runs_sweep
from qa.models import JudgeRun, Recording
from qa.rate_limit import quota_settle, quota_try_acquire
from qa.tasks import judge_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


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
    # What a worker killed after its claim leaves behind.
    JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING, attempts=1, started_at=timezone.now())
    assert runs_sweep() == 0  # still within the time limit: it may be alive

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
