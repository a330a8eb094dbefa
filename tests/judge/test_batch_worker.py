"""A batch posted through the API is judged by a real `celery worker` on Redis, through the fake
LLM server: the chunk's one message fans out into one judgment per recording."""

from __future__ import annotations

import pytest

import qa.services
from qa.models import JudgeRun, Recording, Score
from tests.api.conftest import key_client, new_key
from tests.factories import SAMPLE_TRANSCRIPT
from tests.judge.conftest import judge_rubric
from tests.judge.test_worker import _wait_until_done, worker  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def test_a_batch_is_judged_by_the_worker(worker, fake_llm, monkeypatch):  # noqa: F811
    monkeypatch.setattr(qa.services, "CHUNK_SIZE", 3)  # two chunks: two messages, five judgments
    rubric = judge_rubric()
    _key, key = new_key("ccaas")
    batch = [
        {"external_id": f"call-{index}", "rubric": rubric.slug, "agent": "a-1", "transcript": SAMPLE_TRANSCRIPT}
        for index in range(5)
    ]

    response = key_client(key).post("/api/recordings/batch/", {"recordings": batch}, format="json")

    assert response.status_code == 200
    assert [result["status"] for result in response.json()["results"]] == [201] * 5
    recordings = list(Recording.objects.all())
    _wait_until_done(recordings, worker)
    assert set(Recording.objects.values_list("status", flat=True)) == {Recording.Status.JUDGED}
    assert set(JudgeRun.objects.values_list("status", flat=True)) == {JudgeRun.Status.SUCCEEDED}
    assert JudgeRun.objects.count() == 5 and Score.objects.count() == 5 * 2
    assert len(fake_llm.requests) == 5  # each judged once
