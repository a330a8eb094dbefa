from __future__ import annotations

import pytest

from config.celery import app as celery_app
from qa.models import Recording
from rubrics.models import Rubric
from rubrics.services import rubric_publish
from tests.factories import CriterionExceptionFactory, CriterionFactory, RecordingFactory, RubricFactory
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake_llm(monkeypatch, settings):
    """The fake OpenAI-protocol server, with the judge pointed at it."""
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        settings.QA_JUDGE_MODEL = "fake-judge"
        yield server


@pytest.fixture
def eager_celery():
    """Tasks run in-process, so on_commit enqueues judge inside the test."""
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


def judge_rubric(**fields) -> Rubric:
    """A published rubric with two criteria on different scales and one exception.

    No random audit and no warm-up by default, so routing in tests depends on the scores alone.
    """
    fields.setdefault("audit_rate", 0.0)
    fields.setdefault("warm_up_judgments", 0)
    rubric = RubricFactory(**fields)
    CriterionFactory(
        rubric=rubric,
        key="saludo",
        title="Greeting",
        description="The agent greets and gives their name.",
        evidence_guidance="Quote the agent's first turn.",
        order=1,
    )
    commitment = CriterionFactory(
        rubric=rubric,
        key="compromiso",
        title="Commitment",
        description="The agent commits to a concrete next step with a time.",
        evidence_guidance="Quote the commitment.",
        scale_min=0,
        scale_max=2,
        order=2,
    )
    CriterionExceptionFactory(criterion=commitment, text="the customer hangs up before the end", outcome="not_applicable")
    return rubric_publish(rubric=rubric)


@pytest.fixture
def rubric(db) -> Rubric:
    return judge_rubric()


@pytest.fixture
def recording(rubric) -> Recording:
    return RecordingFactory(rubric=rubric)
