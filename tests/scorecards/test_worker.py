"""The beat's scorecard refresh, run by a real `celery worker` on Redis."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from django.conf import settings
from django.utils import timezone

from config.celery import app
from insights.models import RollupClock, ScorecardWeek
from qa.models import Recording
from tests.factories import judged_recording, published_rubric
from tests.judge.conftest import fake_llm  # noqa: F401 (a fixture)
from tests.judge.test_worker import _worker

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(fake_llm):  # noqa: F811
    yield from _worker(fake_llm)


def test_the_beat_entry_brings_every_rubrics_rollup_up_to_date(worker):
    rubrics = [published_rubric(criteria=2, slug=slug) for slug in ("care", "sales")]
    for rubric in rubrics:
        for day in (3, 10):
            judged_recording(rubric=rubric, agent_id="a1", team="t", occurred_at=datetime(2026, 3, day, tzinfo=UTC))
    assert Recording.objects.filter(rollup_stale=True).count() == 4

    app.send_task(settings.CELERY_BEAT_SCHEDULE["scorecards-refresh"]["task"])  # as the beat sends it
    deadline = time.monotonic() + 60
    while Recording.objects.filter(rollup_stale=True).exists():
        assert worker.poll() is None, "the worker exited"
        assert time.monotonic() < deadline, "the worker did not refresh in time"
        time.sleep(0.2)
    for rubric in rubrics:  # two weeks × (2 criteria and the overall)
        assert ScorecardWeek.objects.filter(rubric=rubric, agent_id="a1", judged_n=1).count() == 6
    while not RollupClock.objects.exists():  # the pass's start, recorded once every rubric is done
        assert time.monotonic() < deadline, "the refresh recorded no clock"
        time.sleep(0.2)
    assert RollupClock.objects.get().keeping_up(now=timezone.now())
