"""Quotes against turn references on the same reviewed calls, as any two judges are compared: one judge of
each evidence mode, both served by the fake OpenAI-protocol server over HTTP, tasks run in-process."""

from __future__ import annotations

import json

import pytest

from qa.answer import QUOTE, REFERENCE
from qa.models import Judge
from experiments.models import Experiment, ItemScore
from experiments.selectors import experiment_comparison
from experiments.services import ArmSpec, experiment_create
from tests.experiments.conftest import call_index, human_values
from tests.support.fake_openai import completion, transcript_of

pytestmark = pytest.mark.django_db


def either_mode(request: dict):
    """The supervisors' values, evidence as the request's schema asks: the greeting quoted, or its turn cited."""
    keys = request["response_format"]["json_schema"]["schema"]["properties"]["scores"]["properties"]
    index = call_index(request)
    scores = {}
    for key, item in keys.items():
        if item["properties"]["evidence"]["type"] == "array":
            evidence = [{"turn": 1, "words": "Good morning, this is call"}]
        else:
            evidence = transcript_of(request).splitlines()[0]
        scores[key] = {"evidence": evidence, "rationale": "Shown.", "value": human_values(index)[key], "confidence": 0.9}
    return completion(json.dumps({"scores": scores}))


def test_a_quoting_judge_and_a_citing_judge_compare_on_the_same_calls(
    reviewed, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    fake_llm.default = either_mode
    judges = {
        mode: Judge.objects.create(
            name=f"judge-{mode}", base_url=fake_llm.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY",
            evidence_mode=mode,
        )
        for mode in (QUOTE, REFERENCE)
    }  # fmt: skip

    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_create(
            rubric_slug="care", candidates=[ArmSpec(judge=judges[QUOTE]), ArmSpec(judge=judges[REFERENCE])], limit=5
        )
    experiment.refresh_from_db()

    assert experiment.status == Experiment.Status.FINISHED
    arms = list(experiment.arms.order_by("order"))
    quoting, citing = arms[1], arms[2]
    # The two modes are two questions: each arm records its own prompt version.
    assert quoting.prompt_version and citing.prompt_version and quoting.prompt_version != citing.prompt_version
    schemas = [request["response_format"]["json_schema"]["schema"] for request in fake_llm.requests]
    evidence_types = sorted(schema["properties"]["scores"]["properties"]["c1"]["properties"]["evidence"]["type"] for schema in schemas)
    assert evidence_types == ["array"] * 5 + ["string"] * 5

    cited = ItemScore.objects.filter(item__arm=citing)
    assert cited.count() == 10
    assert all(score.evidence_verified and score.evidence == "[1] “Good morning, this is call”" for score in cited)
    assert all(score.evidence_verified for score in ItemScore.objects.filter(item__arm=quoting))

    comparison = experiment_comparison(experiment)
    baseline, quote_figures, reference_figures = comparison.arms
    # Both answered like the supervisors, every quote and reference verified: the same figures.
    assert [(c.n, c.verified.n, c.mae) for c in quote_figures.criteria] == [(5, 5, 0.0), (5, 5, 0.0)]
    assert [(c.n, c.verified.n, c.mae) for c in reference_figures.criteria] == [(5, 5, 0.0), (5, 5, 0.0)]
