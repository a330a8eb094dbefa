"""Redis stops (the broker and the throttle's store in one, as docs/operations/running.md's production
recipe sets it): ingest keeps the recording and says it is only received, the
throttle lets requests through with a warning, and the rest of the API answers."""

from __future__ import annotations

import logging

import pytest
import redis
from kombu import pools as kombu_pools

from config.celery import app as celery_app
from qa.execution import runs_sweep
from qa.models import JudgeRun, Recording
from tests.api.conftest import key_client, new_key
from tests.factories import SAMPLE_TRANSCRIPT, judged_recording, published_rubric
from tests.support.redis_server import RedisServer


@pytest.fixture
def own_redis(settings):
    """Broker, quota and throttle all on a Redis this test may stop."""
    server = RedisServer()
    settings.CELERY_BROKER_URL = settings.QA_REDIS_URL = server.url
    previous, eager = celery_app.conf.broker_write_url or celery_app.conf.broker_url, celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = False  # publish for real: nothing consumes it, nothing is judged
    _point_celery_at(server.url)
    yield server
    server.stop()
    _point_celery_at(previous)
    celery_app.conf.task_always_eager = eager


def _point_celery_at(url: str) -> None:
    # Drop every pooled broker connection (kombu's own reset, as after a fork), so the next
    # publish connects to `url`.
    kombu_pools.reset()
    celery_app.conf.broker_url = celery_app.conf.broker_write_url = url  # the write URL is what publishing reads
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


def post(client, external_id: str, rubric):
    body = {"external_id": external_id, "rubric": rubric.slug, "transcript": SAMPLE_TRANSCRIPT}
    return client.post("/api/recordings/", body, format="json")


@pytest.mark.django_db(transaction=True)  # committed for real, so the publish runs as in production
def test_with_redis_down_ingest_keeps_the_recording_and_the_api_answers(own_redis, caplog):
    rubric = published_rubric(slug="care")
    judged = judged_recording(rubric=rubric)
    _key, key = new_key("ccaas", all_sources=True)  # it reads a factory's recording too
    client = key_client(key)

    up = post(client, "call-up", rubric)
    assert (up.status_code, up.json()["status"]) == (201, Recording.Status.QUEUED)
    assert redis.Redis.from_url(own_redis.url).keys("*api-throttle*")  # the throttle counts in Redis

    own_redis.stop()
    with caplog.at_level(logging.WARNING):
        down = post(client, "call-down", rubric)

    assert down.status_code == 201, down.content
    assert down.json()["status"] == Recording.Status.RECEIVED  # honest: nothing was queued
    stored = Recording.objects.get(external_id="call-down")
    assert stored.status == Recording.Status.RECEIVED and stored.transcript == SAMPLE_TRANSCRIPT
    assert stored.runs.get().status == JudgeRun.Status.PENDING  # the sweep enqueues it later
    assert "the API throttle lets" in caplog.text
    for url in ["/api/recordings/", f"/api/recordings/{judged.pk}/", "/api/rubrics/", "/api/rubrics/care/"]:
        response = client.get(url)
        assert response.status_code == 200, (url, response.content)
        assert response["Content-Type"] == "application/json"
    rejudge = client.post(f"/api/recordings/{judged.pk}/rejudge/")
    assert rejudge.status_code == 202
    assert runs_sweep() == 0  # the sweep itself survives the broker being down
