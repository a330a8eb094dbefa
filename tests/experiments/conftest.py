"""Reviewed recordings whose supervisors' values are known, and a fake LLM that
can answer each transcript with those values (or anything else)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from qa.models import Recording
from reviews.models import CriterionReview, Review
from rubrics.models import Rubric
from rubrics.services import rubric_publish
from tests.factories import CriterionFactory, JudgeRunFactory, RecordingFactory, RubricFactory, ScoreFactory
from tests.support.fake_openai import FakeOpenAI, completion, transcript_of

KEYS = ("c1", "c2")


def care_rubric() -> Rubric:
    rubric = RubricFactory(slug="care", name="Care", audit_rate=0.0)
    CriterionFactory(rubric=rubric, key="c1", title="Greets", description="The agent greets by name.", order=1)
    CriterionFactory(rubric=rubric, key="c2", title="Confirms", description="The agent confirms the issue.", order=2)
    return rubric_publish(rubric=rubric)


def reviewed_recording(rubric: Rubric, index: int, human: dict[str, int], judged: dict[str, int]) -> Recording:
    """A judged recording (production values `judged`) whose supervisor approved with values `human`."""
    transcript = f"AGENT: Good morning, this is call {index}, my name is Ana.\nCUSTOMER: Hello.\n"
    recording = RecordingFactory(
        rubric=rubric, transcript=transcript, status=Recording.Status.REVIEWED, review_reasons=["random_audit"],
        occurred_at=datetime(2026, 3, 1 + index % 28, 12, tzinfo=UTC),
    )
    run = JudgeRunFactory(recording=recording)
    criteria = {criterion.key: criterion for criterion in rubric.criteria.all()}
    for key, value in judged.items():
        ScoreFactory(run=run, criterion=criteria[key], value=value, evidence=transcript.splitlines()[0])
    Recording.objects.filter(pk=recording.pk).update(current_run=run)
    review = Review.objects.create(recording=recording, run=run, reviewer="sup", decision=Review.Decision.APPROVE)
    for key, value in human.items():
        if value != judged[key]:
            CriterionReview.objects.create(review=review, criterion=criteria[key], adjusted_value=value, comment="no")
    return recording


def human_values(index: int) -> dict[str, int]:
    return {"c1": 1 + index % 3, "c2": 1 + (index + 1) % 3}


@pytest.fixture
def reviewed(db) -> dict[int, Recording]:
    """30 reviewed recordings; production scored each criterion 2 points above the supervisor."""
    rubric = care_rubric()
    return {
        index: reviewed_recording(rubric, index, human_values(index), {k: v + 2 for k, v in human_values(index).items()})
        for index in range(30)
    }


def call_index(request: dict) -> int:
    return int(transcript_of(request).split("this is call ")[1].split(",")[0])


def answering(values: Callable[[int, str], int | None]) -> Callable[[dict], object]:
    """A fake-LLM reply giving values(call index, criterion key) to every criterion the request asks for."""

    def reply(request: dict):
        keys = request["response_format"]["json_schema"]["schema"]["properties"]["scores"]["properties"]
        quote = transcript_of(request).splitlines()[0]
        index = call_index(request)
        scores = {
            key: {"evidence": quote, "rationale": "Shown.", "value": values(index, key), "confidence": 0.9} for key in keys
        }
        return completion(json.dumps({"scores": scores}))

    return reply


@pytest.fixture
def fake_llm(monkeypatch, settings):
    with FakeOpenAI(default=answering(lambda index, key: human_values(index).get(key, 2))) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        settings.QA_JUDGE_MODEL = "fake-judge"
        yield server
