"""The judge's answer contract: the JSON schema sent with every request, and the
validation every answer passes before anything is stored.

The schema is keyed: `scores` is an object with one required property per
criterion key, so a schema-following decoder cannot repeat or omit a criterion.
Validation still checks everything, because not every server enforces schemas.

Evidence comes in one of two modes (`AnswerShape.evidence_mode`). Quote: a
string, the transcript's words as the model copied them. Reference: one to
three `{"turn": N, "words": "..."}`, N one of the numbers the prompt gives the
transcript's turns; the schema sent with a call makes N an enum of that
transcript's numbers, so a decoder that follows the schema cannot cite a turn
that does not exist. Validation takes any positive N (a server may ignore the
enum): the verifier calls an unknown one `bad_reference`.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from qa.evidence import Reference
from rubrics.models import Criterion

QUOTE, REFERENCE = "quote", "reference"
EVIDENCE_MODES = (QUOTE, REFERENCE)
MAX_REFERENCES = 3
# The token budget is fixed per rubric, before any transcript: it counts turn numbers of this many
# digits at most (a transcript of 100,000 turns is far past any judge's context).
TURN_DIGITS = 5

FIELDS = ("evidence", "rationale", "value", "confidence")
# Confidence in steps of 0.05, as an enum: llama.cpp's grammar ignores a
# number's minimum and maximum (SmolLM2 answered 1000000000000000), while every
# decoder enforces an enum, and 21 steps are finer than the prompt's bands.
CONFIDENCE_STEPS = [step / 20 for step in range(21)]

# A plain-text character: no double quote, no backslash (so no JSON escape,
# which writes one character as up to six), no control character, nothing above
# U+07FF (every Latin-script letter and punctuation mark of the rubric languages
# is below it), so each character is at most two bytes of UTF-8. A token is at
# least one byte, so a string of n such characters is at most 2n tokens, however
# a model splits it. The verifier ignores quote marks and symbols, so a quote
# written in these characters still verifies.
PLAIN_CHARACTER = r'[^"\\\x00-\x1F\x7F\u0800-\U0010FFFF]'
_PLAIN_OUTSIDE = re.compile(PLAIN_CHARACTER.replace("[^", "[", 1))


@dataclass(frozen=True)
class AnswerShape:
    """How long the answer's free texts may be, and how the schema bounds them.

    `bound_strings`: the schema carries the bounds (maxLength), which OpenAI's
    strict mode refuses but llama.cpp and vLLM need to stop a runaway string.
    The answer is checked against the bounds either way (`answer_parse`).
    `token_bounded`: the strings are also a `pattern` of plain characters
    (with the length bound in it, for a grammar that reads the pattern alone),
    so the widest answer has a known size in bytes and the token limit covers it.
    """

    evidence_max_chars: int
    rationale_max_chars: int
    bound_strings: bool = True
    token_bounded: bool = False
    evidence_mode: str = QUOTE

    @property
    def references(self) -> bool:
        return self.evidence_mode == REFERENCE

    @property
    def bounds(self) -> dict[str, int]:
        """The answer's free-text fields and their bounds (a reference's words apart)."""
        if self.references:
            return {"rationale": self.rationale_max_chars}
        return {"evidence": self.evidence_max_chars, "rationale": self.rationale_max_chars}

    @property
    def words_max_chars(self) -> int:
        """A reference's words: the turn locates them, so a few suffice; up to three references
        share about one quote's length."""
        return self.evidence_max_chars // 2

    def text_pattern(self, limit: int) -> str:
        return f"^{PLAIN_CHARACTER}{{0,{limit}}}$"


# Remote judges: a literal quote of 25 words and a two-sentence rationale fit.
STANDARD_SHAPE = AnswerShape(evidence_max_chars=160, rationale_max_chars=200)
UNBOUNDED_SHAPE = AnswerShape(evidence_max_chars=160, rationale_max_chars=200, bound_strings=False)
# Small models on CPU (the bundled SmolLM2-135M: about 19 tokens/s on 2 cores)
# pay for every token, and SmolLM2 fills its strings: a quote of about ten
# words and a rationale of a few, in plain characters. About 40 tokens of each
# criterion's answer are the JSON around them, so with 90 and 50 characters
# the 11 sample criteria took 1,091 tokens (57 s); these bounds keep a call
# near 800. Filled with digits (one token each) the standard shape cost 11 x
# 360 tokens, past its budget.
COMPACT_SHAPE = AnswerShape(evidence_max_chars=60, rationale_max_chars=20, token_bounded=True)


class InvalidAnswerError(Exception):
    """The model's answer breaks the contract; nothing of it may be stored."""


@dataclass(frozen=True)
class CriterionAnswer:
    criterion: Criterion
    value: int | None  # None: not applicable
    confidence: float
    evidence: str  # reference mode: ""
    rationale: str
    references: tuple[Reference, ...] | None = None  # reference mode only


def _value_enum(criterion: Criterion) -> list[int | None]:
    values: list[int | None] = list(range(criterion.scale_min, criterion.scale_max + 1))
    return [*values, None] if criterion.allows_not_applicable() else values


def answer_schema(
    *, criteria: Sequence[Criterion], shape: AnswerShape = STANDARD_SHAPE, turns: int | None = None
) -> dict[str, Any]:
    """The strict JSON schema for one judgment of all `criteria`, in `shape`.

    Evidence and rationale come before value and confidence so that a model
    writing in schema order commits to its quote before its score. In
    reference mode, `turns` is the transcript's number of turns: a reference's
    turn is then an enum of 1..turns; without it (the schema the prompt
    version hashes, the same for every transcript), any positive integer.
    """

    def text(limit: int) -> dict[str, Any]:
        if not shape.bound_strings:
            return {"type": "string"}
        if shape.token_bounded:
            return {"type": "string", "maxLength": limit, "pattern": shape.text_pattern(limit)}
        return {"type": "string", "maxLength": limit}

    def value_schema(criterion: Criterion) -> dict[str, Any]:
        if criterion.allows_not_applicable():
            return {"type": ["integer", "null"], "enum": _value_enum(criterion)}
        return {"type": "integer", "enum": _value_enum(criterion)}

    def evidence_schema() -> dict[str, Any]:
        turn = {"type": "integer", "enum": list(range(1, turns + 1))} if turns else {"type": "integer", "minimum": 1}
        reference = {
            "type": "object",
            "properties": {"turn": turn, "words": text(shape.words_max_chars)},
            "required": ["turn", "words"],
            "additionalProperties": False,
        }
        if not shape.bound_strings:  # the server refuses bounds; the answer is held to them anyway
            return {"type": "array", "items": reference}
        return {"type": "array", "items": reference, "minItems": 1, "maxItems": MAX_REFERENCES}

    def criterion_schema(criterion: Criterion) -> dict[str, Any]:
        evidence = {"evidence": evidence_schema()} if shape.references else {}
        return {
            "type": "object",
            "properties": {
                **evidence,
                **{field: text(limit) for field, limit in shape.bounds.items()},
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


def widest_answer(*, criteria: Sequence[Criterion], shape: AnswerShape) -> dict[str, Any]:
    """The answer of the most bytes a plain-text schema admits: every string at its
    bound in two-byte characters, every number at its longest literal."""
    confidence = max(CONFIDENCE_STEPS, key=lambda step: len(json.dumps(step)))
    references = [{"turn": int("9" * TURN_DIGITS), "words": "ñ" * shape.words_max_chars}] * MAX_REFERENCES
    return {
        "scores": {
            criterion.key: {
                **({"evidence": references} if shape.references else {}),
                **{field: "ñ" * limit for field, limit in shape.bounds.items()},
                "value": max(_value_enum(criterion), key=lambda value: len(json.dumps(value))),
                "confidence": confidence,
            }
            for criterion in criteria
        }
    }


def answer_max_tokens(*, criteria: Sequence[Criterion], shape: AnswerShape = STANDARD_SHAPE) -> int:
    """The completion budget.

    Token-bounded shape: a token is at least one byte, so the bytes of the
    widest answer the schema admits bound its text, plus one token of
    whitespace wherever JSON allows it (between any two of its tokens): the
    local server is asked for compact JSON, and a server that indents anyway
    writes a newline with its indentation as one token. A rambling model is
    then stopped by each field's bound, not by this limit. Other shapes: an estimate, both strings at their bound in
    Spanish text of about 1.5 characters per token, and room for the JSON.
    """
    if shape.token_bounded:
        widest = json.dumps(widest_answer(criteria=criteria, shape=shape), ensure_ascii=False, separators=(",", ":"))
        return len(widest.encode()) + json_gaps(widest)
    evidence = shape.words_max_chars * MAX_REFERENCES + 30 if shape.references else shape.evidence_max_chars
    per_criterion = (evidence + shape.rationale_max_chars) * 2 // 3 + 60
    return 100 + per_criterion * len(criteria)


def json_gaps(text: str) -> int:
    """Where whitespace may stand in a JSON text: after each of its tokens but the last.
    Its tokens: braces, brackets, colons, commas, strings and the other literals."""
    return len(re.findall(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', text)) - 1


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


def _criterion_errors(criterion: Criterion, item: Any, shape: AnswerShape) -> list[str]:
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
    for field, limit in shape.bounds.items():
        if field in item:
            errors += _text_errors(field, item[field], limit, shape)
    if shape.references and "evidence" in item:
        errors += _references_errors(item["evidence"], shape)
    return errors


def _text_errors(field: str, text: Any, limit: int, shape: AnswerShape) -> list[str]:
    if not isinstance(text, str):
        return [f"{field} is not a string"]
    if len(text) > limit:
        # Whether or not the schema carried the bound (OpenAI's strict mode gets none, a server may
        # ignore it), the answer is held to it: the verifier is built for quotes within it.
        return [f"{field} has {len(text)} characters, more than the schema's {limit}"]
    if shape.token_bounded and (outside := _PLAIN_OUTSIDE.search(text)):
        return [f"{field} has {outside.group()!r}, outside the schema's plain characters"]
    return []


def _references_errors(evidence: Any, shape: AnswerShape) -> list[str]:
    """A reference's turn only has to be a positive integer here: one the transcript lacks is the
    verifier's `bad_reference`, a score like any unverified one, not a broken answer."""
    if not isinstance(evidence, list) or not 1 <= len(evidence) <= MAX_REFERENCES:
        return [f"evidence is not a list of 1 to {MAX_REFERENCES} turn references"]
    errors = []
    for number, reference in enumerate(evidence, 1):
        name = f"evidence reference {number}"
        if not isinstance(reference, dict) or set(reference) != {"turn", "words"}:
            errors.append(f"{name} is not an object of only turn and words")
            continue
        turn = reference["turn"]
        if not (_is_number(turn) and turn == int(turn) and turn >= 1):
            errors.append(f"{name}: turn {turn!r} is not a positive integer")
        errors += _text_errors(f"{name} words", reference["words"], shape.words_max_chars, shape)
    return errors


def answer_parse(
    *, content: str, criteria: Sequence[Criterion], shape: AnswerShape = STANDARD_SHAPE
) -> list[CriterionAnswer]:
    """Validate the model's raw answer against every bound of the schema it was asked
    for (`answer_schema` in the same `shape`); return one answer per criterion, in rubric order.

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
            errors += [f"{key}: {problem}" for problem in _criterion_errors(criterion, scores[key], shape)]
    if errors:
        raise InvalidAnswerError("Invalid answer: " + "; ".join(errors) + ".")
    return [
        CriterionAnswer(
            criterion=criterion,
            value=None if scores[key]["value"] is None else int(scores[key]["value"]),
            confidence=float(scores[key]["confidence"]),
            evidence="" if shape.references else scores[key]["evidence"],
            rationale=scores[key]["rationale"],
            references=_references(scores[key]["evidence"]) if shape.references else None,
        )
        for key, criterion in by_key.items()
    ]


def _references(evidence: list[dict[str, Any]]) -> tuple[Reference, ...]:
    return tuple(Reference(turn=int(reference["turn"]), words=reference["words"]) for reference in evidence)


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
