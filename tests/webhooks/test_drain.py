"""With a broker, the judging publishes nothing: its commit writes the events, and Celery beat's drain
(every QA_WEBHOOK_DRAIN_EVERY) fans out every event committed since the last. The messages are read
from the suite's own Redis database, where no worker takes them."""

from __future__ import annotations

import json

import pytest
import redis
from django.conf import settings as django_settings
from django.db import transaction

from outbox.models import Event
from outbox.services import recording_judged_emit
from core.queue import tasks_in_process
from tests.factories import judged_recording
from webhooks.models import Delivery
from webhooks.services import subscription_create
from webhooks.tasks import drain

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queue(settings):
    """The names of the tasks waiting in the default queue, oldest first."""
    if not settings.CELERY_BROKER_URL or tasks_in_process():
        pytest.skip("needs the broker (CELERY_BROKER_URL), as tests/webhooks/test_worker.py does")
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.delete("celery")
    yield lambda: [json.loads(raw)["headers"]["task"] for raw in reversed(client.lrange("celery", 0, -1))]
    client.delete("celery")


def test_the_judgings_commits_publish_nothing_and_one_drain_takes_their_events(receiver, queue):
    subscription_create(url=receiver.url, events=["recording.judged", "recording.routed"])
    recordings = [judged_recording() for _ in range(3)]
    for recording in recordings:  # three judgments' commits
        with transaction.atomic():
            recording_judged_emit(recording_id=recording.pk, routed=recording is recordings[0])
    assert queue() == []
    assert Event.objects.filter(dispatched_at__isnull=True).count() == 4 and Delivery.objects.count() == 0

    assert drain() == 4  # what beat's message runs in a worker
    assert Event.objects.filter(dispatched_at__isnull=True).count() == 0
    assert sorted(Delivery.objects.values_list("event__name", flat=True)) == [
        "recording.judged", "recording.judged", "recording.judged", "recording.routed",
    ]  # fmt: skip
    assert queue() == ["webhooks.deliver"] * 4  # each delivery its message, after the drain's commits
    assert drain() == 0  # nothing twice


def test_a_rolled_back_transaction_leaves_nothing_to_drain(receiver, queue):
    subscription_create(url=receiver.url, events=["recording.judged"])
    recording = judged_recording()
    with pytest.raises(RuntimeError), transaction.atomic():
        recording_judged_emit(recording_id=recording.pk, routed=False)
        raise RuntimeError("the judging fails after writing its events")
    assert Event.objects.count() == 0 and drain() == 0 and queue() == []


def test_beat_drains_every_second_and_a_late_drain_expires():
    entry = django_settings.CELERY_BEAT_SCHEDULE["webhooks-drain"]
    assert (entry["task"], entry["schedule"]) == ("webhooks.events_drain", 1.0)
    assert entry["options"]["expires"] == 5.0  # workers down: the drains do not pile up
