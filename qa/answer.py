"""The judge's answer contract: the JSON schema sent with every request, and the
validation every answer passes before anything is stored.

The schema is keyed: `scores` is an object with one required property per
criterion key, so a schema-following decoder cannot repeat or omit a criterion.
Validation still checks everything, because not every server enforces schemas.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rubrics.models import Criterion

# Bounds on the free-text fields: without them a small local model under a
# grammar can loop inside a string until the token limit, and one that fills
# them costs generation time on CPU (measured with SmolLM2 on 2 cores: about
# 30 tokens/s, so 11 criteria at 400 + 600 characters took minutes). A literal
# quote of 25 words and a two-sentence rationale fit.
EVIDENCE_MAX_CHARS = 160
RATIONALE_MAX_CHARS = 200
# Token budget per criterion: both strings at their bound (a token of Spanish
# text from a small model can be as short as 1.5 characters) plus the JSON around them.
_TOKENS_PER_CRITERION = (EVIDENCE_MAX_CHARS + RATIONALE_MAX_CHARS) * 2 // 3 + 60

FIELDS = ("evidence", "rationale", "value", "confidence")
# Confidence in steps of 0.05, as an enum: llama.cpp's grammar ignores a
# number's minimum and maximum (SmolLM2 answered 1000000000000000), while every
# decoder enforces an enum, and 21 steps are finer than the prompt's bands.
CONFIDENCE_STEPS = [step / 20 for step in range(21)]


class InvalidAnswerError(Exception):
    """The model's answer breaks the contract; nothing of it may be stored."""


@dataclass(frozen=True)
class CriterionAnswer:
    criterion: Criterion
    value: int | None  # None: not applicable
    confidence: float
    evidence: str
    rationale: str


def answer_schema(*, criteria: Sequence[Criterion], bound_strings: bool = True) -> dict[str, Any]:
    """The strict JSON schema for one judgment of all `criteria`.

    Evidence and rationale come before value and confidence so that a model
    writing in schema order commits to its quote before its score.
    `bound_strings` adds maxLength, which OpenAI's strict mode does not accept
    but llama.cpp and vLLM need to stop a runaway string.
    """

    def text(limit: int) -> dict[str, Any]:
        return {"type": "string", "maxLength": limit} if bound_strings else {"type": "string"}

    def value_schema(criterion: Criterion) -> dict[str, Any]:
        values: list[int | None] = list(range(criterion.scale_min, criterion.scale_max + 1))
        if criterion.allows_not_applicable():
            return {"type": ["integer", "null"], "enum": [*values, None]}
        return {"type": "integer", "enum": values}

    def criterion_schema(criterion: Criterion) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "evidence": text(EVIDENCE_MAX_CHARS),
                "rationale": text(RATIONALE_MAX_CHARS),
                "value": value_schema(criterion),
                "confidence": {"type": "number", "enum": CONFIDENCE_STEPS},
            },
            "required": list(FIELDS),
            "additionalProperties": False,
        }

    keys = [criterion.key for criterion in criteria]
    return {
        "type": "object",
        "properties": {
            "scores": {
                "type": "object",
                "properties": {criterion.key: criterion_schema(criterion) for criterion in criteria},
                "required": keys,
                "additionalProperties": False,
            }
        },
        "required": ["scores"],
        "additionalProperties": False,
    }


def answer_max_tokens(*, criteria: Sequence[Criterion]) -> int:
    """The completion budget: enough for every criterion at its string bounds, no more."""
    return 100 + _TOKENS_PER_CRITERION * len(criteria)


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads would silently keep the last of two equal keys, hiding a
    # criterion judged twice.
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise InvalidAnswerError(f"Key {key!r} appears twice.")
        seen[key] = value
    return seen


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _criterion_errors(criterion: Criterion, item: Any, bound_strings: bool) -> list[str]:
    if not isinstance(item, dict):
        return ["is not an object"]
    errors = []
    if missing := [field for field in FIELDS if field not in item]:
        errors.append(f"lacks {', '.join(missing)}")
    if unknown := sorted(set(item) - set(FIELDS)):
        errors.append(f"has unknown fields {', '.join(unknown)}")
    value = item.get("value")
    if value is None and "value" in item:
        if not criterion.allows_not_applicable():
            errors.append("value is null, but the criterion has no 'not applicable' exception")
    elif "value" in item and not (_is_number(value) and value == int(value) and criterion.in_scale(value)):
        errors.append(f"value {value!r} is not an integer in {criterion.scale_min}..{criterion.scale_max}")
    confidence = item.get("confidence")
    if "confidence" in item and not (_is_number(confidence) and 0 <= confidence <= 1):
        errors.append(f"confidence {confidence!r} is not a number in 0..1")
    for field, limit in (("evidence", EVIDENCE_MAX_CHARS), ("rationale", RATIONALE_MAX_CHARS)):
        if field in item and not isinstance(item[field], str):
            errors.append(f"{field} is not a string")
        elif field in item and bound_strings and len(item[field]) > limit:
            # A server may ignore the schema's maxLength; an over-long quote would also cost the verifier time.
            errors.append(f"{field} has {len(item[field])} characters, more than the schema's {limit}")
    return errors


def answer_parse(*, content: str, criteria: Sequence[Criterion], bound_strings: bool = True) -> list[CriterionAnswer]:
    """Validate the model's raw answer against every bound of the schema it was asked
    for (`answer_schema` with the same `bound_strings`); return one answer per
    criterion, in rubric order.

    Raises InvalidAnswerError naming every problem found, so a failed run says
    exactly what was wrong.
    """
    try:
        answer = json.loads(content, object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as error:
        raise InvalidAnswerError(f"The answer is not valid JSON: {error}.") from error
    if not isinstance(answer, dict) or set(answer) != {"scores"} or not isinstance(answer["scores"], dict):
        raise InvalidAnswerError('The answer must be an object with only a "scores" object.')
    scores: dict[str, Any] = answer["scores"]
    by_key = {criterion.key: criterion for criterion in criteria}
    errors = [f"missing criterion {key}" for key in by_key if key not in scores]
    errors += [f"unknown criterion {key}" for key in scores if key not in by_key]
    for key, criterion in by_key.items():
        if key in scores:
            errors += [f"{key}: {problem}" for problem in _criterion_errors(criterion, scores[key], bound_strings)]
    if errors:
        raise InvalidAnswerError("Invalid answer: " + "; ".join(errors) + ".")
    return [
        CriterionAnswer(
            criterion=criterion,
            value=None if scores[key]["value"] is None else int(scores[key]["value"]),
            confidence=float(scores[key]["confidence"]),
            evidence=scores[key]["evidence"],
            rationale=scores[key]["rationale"],
        )
        for key, criterion in by_key.items()
    ]


@dataclass(frozen=True)
class CombinedAnswer:
    """What k samples of one criterion stand for: one sample's answer, every sample's value, their stability."""

    answer: CriterionAnswer
    sample_values: list[int | None] | None  # None: a single sample
    unstable: bool


def answers_combine(samples: Sequence[CriterionAnswer]) -> CombinedAnswer:
    """Self-consistency over k answers to one criterion.

    The value is the lower median, so it is a value some sample gave, and that
    sample's evidence and confidence go with it. "Not applicable" wins only
    when at least half the samples say so. Unstable: the values differ by more
    than one point, or some samples found the criterion not applicable and others scored it.
    """
    values = [sample.value for sample in samples]
    numbers = sorted(value for value in values if value is not None)
    value = statistics.median_low(numbers) if numbers and len(numbers) * 2 > len(values) else None
    spread = numbers[-1] - numbers[0] if numbers else 0
    unstable = len(samples) > 1 and (spread > 1 or 0 < len(numbers) < len(values))
    chosen = next(sample for sample in samples if sample.value == value)
    return CombinedAnswer(answer=chosen, sample_values=values if len(samples) > 1 else None, unstable=unstable)
