"""The judge's side of a call's quality score (rubrics.quality): the values that exist, and nothing else."""

from __future__ import annotations

from collections.abc import Iterable

from qa.models import Score, judge_value_exists
from rubrics.models import Rubric
from rubrics.quality import NOT_APPLICABLE, Quality, QualityPolicy, Value, quality_score
from rubrics.selectors import rubric_quality_policy


def judge_value(*, value: int | None, evidence_verified: bool) -> Value | None:
    """A score's value as the quality score reads it: the judge's N/A as N/A, and None for a value whose quote
    did not verify, since it does not exist (`judge_value_exists`)."""
    if value is None:
        return NOT_APPLICABLE
    return value if judge_value_exists(evidence_verified=evidence_verified) else None


def judge_values(scores: Iterable[Score]) -> dict[str, Value]:
    """A run's values by criterion key, those that exist (`judge_value`)."""
    values: dict[str, Value] = {}
    for score in scores:
        found = judge_value(value=score.value, evidence_verified=score.evidence_verified)
        if found is not None:
            values[score.criterion.key] = found
    return values


def judge_quality(*, rubric: Rubric, scores: Iterable[Score]) -> Quality:
    """The call's quality score over the judge's values that exist (partial: `missing` names the criteria
    whose value does not exist, which the pages show beside the score)."""
    return judge_values_quality(policy=rubric_quality_policy(rubric), values=judge_values(scores))


def judge_values_quality(*, policy: QualityPolicy, values: dict[str, Value]) -> Quality:
    """`judge_quality` for values already read (`judge_value`) and a policy already built: many calls at once."""
    return quality_score(policy, values, partial=True)
