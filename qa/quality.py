"""The judge's side of a call's quality score (rubrics.quality): the values that exist, and nothing else."""

from __future__ import annotations

from collections.abc import Iterable

from qa.models import Score
from rubrics.models import Rubric
from rubrics.quality import NOT_APPLICABLE, Quality, Value, quality_score
from rubrics.selectors import rubric_quality_policy


def judge_values(scores: Iterable[Score]) -> dict[str, Value]:
    """A run's values by criterion key as the quality score reads them: the judge's N/A as N/A, and a value
    whose quote did not verify left out, since it does not exist (`Score.value_exists`)."""
    values: dict[str, Value] = {}
    for score in scores:
        if score.value is None:
            values[score.criterion.key] = NOT_APPLICABLE
        elif score.value_exists:
            values[score.criterion.key] = score.value
    return values


def judge_quality(*, rubric: Rubric, scores: Iterable[Score]) -> Quality:
    """The call's quality score by the judge's values that exist."""
    return quality_score(rubric_quality_policy(rubric), judge_values(scores))
