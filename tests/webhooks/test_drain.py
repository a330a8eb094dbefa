"""With a broker, the judging does not publish a message per commit: a process publishes one delayed
drain for the events of a moment (QA_WEBHOOK_DRAIN_DELAY), which fans out every event committed by
then. The messages are read from the suite's own Redis database, where no worker takes them."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest
import redis
from django.db import transaction

from outbox.models import Event
from outbox.services import recording_judged_emit
from qa.queue import tasks_in_process
from tests.factories import judged_recording
from webhooks.models import Delivery
from webhooks.services import events_drain, subscription_create
from webhooks.tasks import drain

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queue(settings):
    """The messages waiting in the default queue: (task name, eta) each."""
    if not settings.CELERY_BROKER_URL or tasks_in_process():
        pytest.skip("needs the broker (CELERY_BROKER_URL), as tests/webhooks/test_worker.py does")
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)

    class Queue:
        def __call__(self) -> list[tuple[str, str | None]]:
            messages = [json.loads(raw) for raw in reversed(client.lrange("celery", 0, -1))]  # oldest first
            return [(message["headers"]["task"], message["headers"]["eta"]) for message in messages]

        def clear(self) -> None:
            client.delete("celery")

    queue = Queue()
    queue.clear()
    yield queue
    queue.clear()


def warm(recording, settings, queue) -> None:
    """A first publish (this process's first message: its imports and its connection, which may take a
    second), then past the drain it published, and an empty queue."""
    with transaction.atomic():
        recording_judged_emit(recording_id=recording.pk, routed=False)
    time.sleep(settings.QA_WEBHOOK_DRAIN_DELAY + 0.1)
    events_drain()
    queue.clear()


def test_one_drain_per_moment_takes_every_event_committed(receiver, settings, queue):
    settings.QA_WEBHOOK_DRAIN_DELAY = 0.4
    subscription_create(url=receiver.url, events=["recording.judged", "recording.routed"])
    recordings = [judged_recording() for _ in range(3)]
    warm(recordings[0], settings, queue)

    published = time.time()
    for recording in recordings:  # three judgments' commits, one after the other
        with transaction.atomic():
            recording_judged_emit(recording_id=recording.pk, routed=recording is recordings[0])
    [(task, eta)] = queue()
    assert task == "webhooks.events_drain"
    # Delayed by QA_WEBHOOK_DRAIN_DELAY, so that it runs after the other two commits.
    assert 0.3 <= datetime.fromisoformat(eta).timestamp() - published <= 1.0
    assert Event.objects.filter(dispatched_at__isnull=True).count() == 4 and Delivery.objects.count() == 1

    assert drain() == 4  # what the worker runs when the message is due
    assert Event.objects.filter(dispatched_at__isnull=True).count() == 0
    assert sorted(Delivery.objects.values_list("event__name", flat=True)) == [
        "recording.judged", "recording.judged", "recording.judged", "recording.judged", "recording.routed",
    ]  # fmt: skip  (the first, the warm-up's)
    assert [task for task, _eta in queue()][1:] == ["webhooks.deliver"] * 4  # each delivery its message
    assert drain() == 0  # nothing twice

    # Once the window has passed, the next commit publishes the next drain.
    time.sleep(0.4)
    with transaction.atomic():
        recording_judged_emit(recording_id=recordings[0].pk, routed=False)
    assert [task for task, _eta in queue()].count("webhooks.events_drain") == 2
    assert events_drain() == 1


def test_a_rolled_back_transaction_publishes_nothing(receiver, settings, queue):
    subscription_create(url=receiver.url, events=["recording.judged"])
    recording = judged_recording()
    warm(recording, settings, queue)
    with pytest.raises(RuntimeError), transaction.atomic():
        recording_judged_emit(recording_id=recording.pk, routed=False)
        raise RuntimeError("the judging fails after writing its events")
    assert queue() == [] and Event.objects.filter(dispatched_at__isnull=True).count() == 0

