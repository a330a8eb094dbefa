"""The beat's certification run by a real `celery worker` on Redis: published by name twice, as a beat delivered
twice, it writes each criterion's day once."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from core.queue import task_publish
from qa.models import CertifiedThreshold
from tests.factories import published_rubric
from tests.routing.test_thresholds import reviewed_call
from tests.support.workers import celery_worker

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def test_a_worker_certifies_the_day_once():
    rubric = published_rubric(slug="care", criteria=2)
    for _ in range(22):
        reviewed_call(rubric, confidence={"c1": 0.9, "c2": 0.8}, human={"c1": 4, "c2": 4}, reasons=["random_audit"])
    for _ in range(3):
        reviewed_call(rubric, confidence={"c1": 0.9, "c2": 0.8}, human={"c1": 4, "c2": 2}, reasons=["random_audit"])
    with celery_worker("--concurrency=2", env={}) as worker:
        task_publish("routing.certify")
        task_publish("routing.certify")  # a duplicate: the day is frozen, the second writes nothing
        deadline = time.monotonic() + 60
        while CertifiedThreshold.objects.filter(rubric=rubric).count() < 2:
            assert worker.poll() is None, "the worker exited"
            assert time.monotonic() < deadline, "the worker did not certify in time"
            time.sleep(0.2)
        time.sleep(1)  # the duplicate's turn
    rows = {row.criterion.key: row for row in CertifiedThreshold.objects.filter(rubric=rubric)}
    assert len(rows) == 2 and {row.day for row in rows.values()} == {timezone.localdate()}
    # c1: 25 agreeing pairs at 0.9, certified; c2: 22 of 25 agree, 0.8 is not enough for 0.9.
    assert (rows["c1"].threshold, rows["c1"].pairs) == (0.9, 25)
    assert (rows["c2"].threshold, rows["c2"].pairs, rows["c2"].more_pairs_needed) == (None, 25, 0)
