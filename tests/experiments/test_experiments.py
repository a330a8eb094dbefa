"""Experiments end to end against the fake OpenAI-protocol server, with tasks run in-process."""

from __future__ import annotations

import pytest
from django.forms.models import model_to_dict

from qa.models import Judge, JudgeRun, Recording, Score
from experiments.models import Experiment, Item, ItemScore
from experiments.selectors import experiment_comparison
from experiments.services import ArmSpec, experiment_cancel, experiment_create
from reviews.models import CriterionReview, Review
from rubrics.models import Criterion
from rubrics.services import rubric_new_version
from tests.experiments.conftest import answering, human_values
from tests.support.fake_openai import error

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(reviewed):
    """Version 2 of the rubric, a draft with the same criteria."""
    return rubric_new_version(rubric=next(iter(reviewed.values())).rubric)


def run(django_capture_on_commit_callbacks, **arguments) -> Experiment:
    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_create(rubric_slug="care", **arguments)
    experiment.refresh_from_db()
    return experiment


def verdicts(comparison) -> dict[str, str]:
    return {delta.criterion_key: delta.verdict for delta in comparison.deltas}


def test_a_candidate_answering_like_the_supervisors_is_better_everywhere(
    draft, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    experiment = run(django_capture_on_commit_callbacks, candidates=[ArmSpec(rubric_version=2)])

    assert experiment.status == Experiment.Status.FINISHED
    assert len(experiment.recording_ids) == 30
    comparison = experiment_comparison(experiment)
    assert comparison.progress.done == 30 and comparison.progress.failed == 0 and comparison.progress.total == 30
    assert verdicts(comparison) == {"c1": "better", "c2": "better"}
    for delta in comparison.deltas:
        assert delta.delta.mae_delta == -2.0 and delta.delta.mae_delta_ci[1] < 0
        assert delta.delta.qwk_delta > 0 and delta.delta.qwk_delta_ci[0] > 0
    baseline, candidate = comparison.arms
    assert [c.mae for c in baseline.criteria] == [2.0, 2.0] and [c.mae for c in candidate.criteria] == [0.0, 0.0]
    assert candidate.prompt_tokens == 30 * 900 and baseline.prompt_tokens == 0
    # The candidate's draft was asked: its criteria, in one request per recording.
    assert len(fake_llm.requests) == 30


def test_every_figure_is_also_split_by_verified_and_unverified_quotes(
    draft, reviewed, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    # Production's quotes for c1 did not verify on the first ten calls: the baseline still compares them
    # (the experiment measures the judge), and shows them apart.
    Score.objects.filter(run__recording__in=[reviewed[i] for i in range(10)], criterion__key="c1").update(
        evidence_verified=False, verification_status="not_found", confidence=0
    )
    experiment = run(django_capture_on_commit_callbacks, candidates=[ArmSpec(rubric_version=2)])
    baseline, candidate = experiment_comparison(experiment).arms
    c1, c2 = baseline.criteria
    assert (c1.n, c1.verified.n, c1.unverified.n) == (30, 20, 10)
    assert c1.verified.mae == c1.unverified.mae == 2.0 and c1.unverified_rate == pytest.approx(1 / 3)
    assert (c2.verified.n, c2.unverified.n) == (30, 0) and c2.unverified.mae is None
    assert [(c.verified.n, c.unverified.n) for c in candidate.criteria] == [(30, 0), (30, 0)]


def test_identical_arms_make_no_difference(reviewed, fake_llm, eager_celery, django_capture_on_commit_callbacks):
    experiment = run(
        django_capture_on_commit_callbacks,
        baseline=ArmSpec(),  # re-judged, by the same judge as the candidate
        candidates=[ArmSpec()],
        limit=12,
        seed=4,
    )

    comparison = experiment_comparison(experiment)
    assert len(experiment.recording_ids) == 12 and comparison.progress.done == 24
    assert verdicts(comparison) == {"c1": "no_difference", "c2": "no_difference"}
    for delta in comparison.deltas:
        assert delta.delta.mae_delta == 0 and delta.delta.mae_delta_ci == (0.0, 0.0)


def test_the_same_seed_draws_the_same_set(reviewed, fake_llm, eager_celery, django_capture_on_commit_callbacks):
    first = run(django_capture_on_commit_callbacks, candidates=[ArmSpec()], limit=10, seed=1)
    again = run(django_capture_on_commit_callbacks, candidates=[ArmSpec()], limit=10, seed=1)
    other = run(django_capture_on_commit_callbacks, candidates=[ArmSpec()], limit=10, seed=2)

    assert first.recording_ids == again.recording_ids != other.recording_ids


def test_a_split_criterion_has_no_reference_and_a_dropped_one_is_removed(
    draft, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    Criterion.objects.filter(rubric=draft, key="c2").delete()
    Criterion.objects.create(rubric=draft, key="c1b", title="Greets by name", description="Gives a name.", order=3)

    comparison = experiment_comparison(
        run(django_capture_on_commit_callbacks, candidates=[ArmSpec(rubric_version=2)])
    )

    assert verdicts(comparison) == {"c1": "better", "c1b": "no_reference"}
    candidate = comparison.arms[1]
    assert candidate.removed == ["c2"]
    split = next(c for c in candidate.criteria if c.criterion_key == "c1b")
    assert split.has_reference is False and split.n == 0 and split.scored == 30 and split.mae is None
    assert split.unverified_rate == 0 and split.not_applicable_rate == 0 and split.distribution == {2: 30}


def test_a_failed_call_counts_as_failed_not_as_a_score(
    draft, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    fake_llm.script(error(400, "bad request"))

    experiment = run(django_capture_on_commit_callbacks, candidates=[ArmSpec(rubric_version=2)])

    comparison = experiment_comparison(experiment)
    assert comparison.progress.failed == 1 and comparison.progress.done == 29
    failed = Item.objects.get(status=Item.Status.FAILED)
    assert "HTTP 400" in failed.error and not failed.scores.exists()
    assert [c.n for c in comparison.arms[1].criteria] == [29, 29] and comparison.arms[1].failed == 1
    assert experiment.status == Experiment.Status.FINISHED


def test_production_rows_are_untouched_by_a_whole_experiment(
    draft, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    def snapshot():
        return [
            [model_to_dict(row) | {"updated_at": getattr(row, "updated_at", None)} for row in model.objects.order_by("pk")]
            for model in (Recording, JudgeRun, Score, Review, CriterionReview)
        ]

    before = snapshot()
    experiment = run(django_capture_on_commit_callbacks, baseline=ArmSpec(), candidates=[ArmSpec(rubric_version=2)])

    assert ItemScore.objects.filter(item__arm__experiment=experiment).count() == 2 * 30 * 2
    assert snapshot() == before


def test_cancel_stops_the_items_left(reviewed, fake_llm, django_capture_on_commit_callbacks):
    # No eager tasks: the items stay queued until cancelled.
    with django_capture_on_commit_callbacks(execute=False):
        experiment = experiment_create(rubric_slug="care", candidates=[ArmSpec()])

    assert experiment_cancel(experiment=experiment) is True
    assert experiment.status == Experiment.Status.CANCELLED
    assert set(Item.objects.values_list("status", flat=True)) == {Item.Status.CANCELLED}
    assert experiment_cancel(experiment=experiment) is False


def test_an_unusable_judge_or_an_empty_set_is_refused_and_stores_nothing(reviewed, monkeypatch):
    from core.errors import InvalidInputError

    monkeypatch.delenv("JUDGE_X_KEY", raising=False)
    judge = Judge.objects.create(name="x", model="gpt-x", api_key_variable="JUDGE_X_KEY")
    with pytest.raises(InvalidInputError, match="JUDGE_X_KEY"):
        experiment_create(rubric_slug="care", candidates=[ArmSpec(judge=judge)])
    with pytest.raises(InvalidInputError, match="final review"):
        experiment_create(rubric_slug="care", candidates=[ArmSpec()], group="flagged")
    assert not Experiment.objects.exists() and not Item.objects.exists()


def test_three_samples_that_disagree_give_the_median_and_are_unstable(
    reviewed, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    judge = Judge.objects.create(
        name="sampler", base_url=fake_llm.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY",
        temperature=0.7, samples=3,
    )
    answers = iter([1, 5, 3] * 200)
    fake_llm.default = answering(lambda index, key: next(answers) if key == "c1" else human_values(index)[key])

    comparison = experiment_comparison(
        run(django_capture_on_commit_callbacks, candidates=[ArmSpec(judge=judge)], limit=5)
    )

    assert len(fake_llm.requests) == 15 and all(r["temperature"] == 0.7 for r in fake_llm.requests)
    scores = ItemScore.objects.filter(criterion__key="c1")
    assert {s.value for s in scores} == {3} and all(s.unstable and sorted(s.sample_values) == [1, 3, 5] for s in scores)
    c1, c2 = comparison.arms[1].criteria
    assert c1.stability == 0.0 and c2.stability == 1.0


def test_a_priced_judge_shows_its_cost_per_call_beside_its_agreement(
    reviewed, fake_llm, eager_celery, django_capture_on_commit_callbacks
):
    from decimal import Decimal

    from tests.support.fake_openai import completion

    # Issue 45's worked example (tests/judge/test_costs.py): 1,200 prompt tokens, 1,024 of them cached,
    # and 300 completion tokens at 2.50 / 1.25 / 10.00 per million cost 0.00472 a call.
    judge = Judge.objects.create(
        name="priced", base_url=fake_llm.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY",
        prompt_price=Decimal("2.50"), cached_prompt_price=Decimal("1.25"), completion_price=Decimal("10.00"),
    )  # fmt: skip
    values = answering(lambda index, key: human_values(index)[key])
    fake_llm.default = lambda request: completion(
        values(request).body["choices"][0]["message"]["content"], prompt_tokens=1200, cached_tokens=1024, completion_tokens=300
    )

    comparison = experiment_comparison(
        run(django_capture_on_commit_callbacks, candidates=[ArmSpec(judge=judge)], limit=5)
    )

    candidate = comparison.arms[1]
    assert (candidate.calls, candidate.cached_tokens) == (5, 5 * 1024)
    assert candidate.cost == Decimal("0.02360") and candidate.cost_per_call == Decimal("0.00472")
    assert all(row.mae == 0.0 for row in candidate.criteria)  # as cheap per call as it agrees: the finding
