"""End to end through a real `celery worker` with its beat: a recording judged by the worker is
delivered to the suite's receiver after the commit, by beat's drain, retried on a 500 and on a timeout by the worker's own delayed
messages, with one delivery id throughout."""

from __future__ import annotations

import json
import time

import pytest

from qa.judging import recording_enqueue_judging
from tests.factories import RecordingFactory
from tests.judge.conftest import judge_rubric
from tests.support.webhook_receiver import Answer
from tests.support.workers import celery_worker
from tests.webhooks.conftest import readme_verify
from webhooks.models import Delivery
from webhooks.services import subscription_create

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def test_the_worker_delivers_retrying_a_500_and_a_timeout(fake_llm, receiver, tmp_path):
    env = {
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "test-key",
        "QA_JUDGE_MODEL": "fake-judge",
        "QA_WEBHOOK_ALLOWED_HOSTS": f"127.0.0.1:{receiver.port}",
        "QA_WEBHOOK_RETRY_BASE": "0.3",
        "QA_WEBHOOK_TIMEOUT": "1",
    }
    _subscription, secret = subscription_create(url=receiver.url, events=["recording.judged"])
    receiver.script(Answer(500), Answer(200, delay=2.5), Answer(200))
    recording = RecordingFactory(rubric=judge_rubric())
    schedule = tmp_path / "celerybeat-schedule"
    with celery_worker("--concurrency=2", "--beat", f"--schedule={schedule}", env=env) as worker:  # beat drains
        recording_enqueue_judging(recording=recording)  # committed: the judgment goes to the worker
        requests = receiver.wait_for(3, timeout=60)
        deadline = time.monotonic() + 10
        # The third answer has come back; the worker records it a moment later (running until then).
        unsettled = [Delivery.Status.PENDING, Delivery.Status.RUNNING]
        while Delivery.objects.filter(status__in=unsettled).exists():
            assert worker.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)

    delivery = Delivery.objects.get()
    assert delivery.status == Delivery.Status.DELIVERED
    assert [(a.outcome, a.response_code) for a in delivery.attempt_log.all()] == [
        ("retry", 500), ("retry", None), ("delivered", 200),
    ]  # fmt: skip
    assert {r.headers["X-Veredicto-Delivery"] for r in requests} == {str(delivery.pk)}
    assert len({r.body for r in requests}) == 1
    assert json.loads(requests[0].body)["data"]["id"] == recording.pk
    verify = readme_verify()
    assert all(verify(secret, r.headers, r.body) for r in requests)
    # The backoff: about 0.3 s after the 500, and the timeout (1 s) plus about 0.6 s after that.
    assert requests[1].at - requests[0].at >= 0.25
    assert requests[2].at - requests[1].at >= 1.5
