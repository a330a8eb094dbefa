"""The answer's shape per backend, and the token budget computed from its bounds."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from qa.answer import (
    COMPACT_SHAPE,
    REFERENCE,
    STANDARD_SHAPE,
    InvalidAnswerError,
    answer_max_tokens,
    answer_parse,
    answer_schema,
    json_gaps,
    widest_answer,
)
from qa.evidence import Reference
from qa.llm import local_answer_shape
from qa.llm_errors import LLMError
from rubrics.rubric_file import rubric_spec_parse
from rubrics.services import rubric_import
from tests.support.fake_openai import answer_for

pytestmark = pytest.mark.django_db

# Two-byte characters of the rubric languages, and the widest one-byte text: digits, one token each.
SPANISH = "ñáéíóúü¿¡ÑÁÉÍÓÚçãõâêôàèœ"


@pytest.fixture
def sample_criteria(settings):
    """The eleven criteria of the Spanish sample rubric, with their exceptions."""
    path = settings.BASE_DIR / "samples" / "rubrics" / "soporte-cobranzas.yaml"
    rubric = rubric_import(spec=rubric_spec_parse(path.read_text(encoding="utf-8")), publish=True)
    return list(rubric.criteria.prefetch_related("exceptions"))


def strings(schema):
    for criterion in schema["properties"]["scores"]["properties"].values():
        yield from (criterion["properties"][field] for field in ("evidence", "rationale"))


def test_the_compact_shape_bounds_every_string_by_length_and_plain_characters(sample_criteria):
    schema = answer_schema(criteria=sample_criteria, shape=COMPACT_SHAPE)

    for string in strings(schema):
        pattern, limit = re.compile(string["pattern"]), string["maxLength"]
        assert limit in (COMPACT_SHAPE.evidence_max_chars, COMPACT_SHAPE.rationale_max_chars)
        assert pattern.fullmatch("AGENTE: Le devuelvo 18.450 pesos, ¿quedó claro?"[:limit])
        assert pattern.fullmatch("ñ" * limit) and not pattern.fullmatch("ñ" * (limit + 1))
        # No escape (one character written as up to six), no control character, nothing of three bytes or more.
        for outside in ('"', "\\", "\n", "\x7f", "€", "…", "😀"):
            assert not pattern.fullmatch(outside), outside


def test_remote_judges_keep_the_standard_shape(sample_criteria):
    schema = answer_schema(criteria=sample_criteria, shape=STANDARD_SHAPE)

    assert {(string["maxLength"], "pattern" in string) for string in strings(schema)} == {(160, False), (200, False)}
    assert answer_max_tokens(criteria=sample_criteria, shape=STANDARD_SHAPE) == 3400


def test_the_budget_covers_the_widest_answer_the_compact_schema_admits(sample_criteria):
    budget = answer_max_tokens(criteria=sample_criteria, shape=COMPACT_SHAPE)
    widest = widest_answer(criteria=sample_criteria, shape=COMPACT_SHAPE)
    text = json.dumps(widest, ensure_ascii=False, separators=(",", ":"))

    # The widest answer is one the validation accepts, so the schema admits it.
    assert len(answer_parse(content=text, criteria=sample_criteria, shape=COMPACT_SHAPE)) == 11
    # A token is at least one byte; whitespace as SmolLM2 writes it, pretty-printed, is one token a gap.
    pretty = json.dumps(widest, ensure_ascii=False, indent=2)
    whitespace_runs = len(re.findall(r"\s+", re.sub(r'"[^"]*"', '""', pretty)))
    assert budget >= len(text.encode()) + whitespace_runs
    # It is at least the sum of the per-field bounds: two bytes per character of each string, and
    # each criterion's key, field names and numbers.
    per_field = sum(2 * limit for limit in COMPACT_SHAPE.bounds.values()) * len(sample_criteria)
    assert budget >= per_field + sum(len(criterion.key) for criterion in sample_criteria)
    # The prompt (3,177 tokens for this rubric and es-001) and the budget fit the local model's context.
    assert budget < 8192 - 3300


@pytest.mark.parametrize("fill", ["0", "ñ", "AGENTE: sí ", SPANISH])
def test_no_string_filled_to_its_bound_outgrows_the_budget(sample_criteria, fill):
    shape = COMPACT_SHAPE
    answer = {
        "scores": {
            criterion.key: {
                **{field: (fill * limit)[:limit] for field, limit in shape.bounds.items()},
                "value": None if criterion.allows_not_applicable() else criterion.scale_max,
                "confidence": 0.05,
            }
            for criterion in sample_criteria
        }
    }
    text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
    answer_parse(content=text, criteria=sample_criteria, shape=shape)  # admitted

    # Digits are one token each in SmolLM2's vocabulary, and no token is shorter than a byte.
    assert len(text.encode()) <= answer_max_tokens(criteria=sample_criteria, shape=shape)


@pytest.mark.parametrize(
    ("field", "text", "problem"),
    [
        ("evidence", "AGENTE: le cobramos 10 €", "evidence has '€', outside the schema's plain characters"),
        ("rationale", 'Dice "hola".', "rationale has '\"', outside the schema's plain characters"),
        ("evidence", "a" * 61, "evidence has 61 characters, more than the schema's 60"),
        ("rationale", "ñ" * 21, "rationale has 21 characters, more than the schema's 20"),
    ],
)
def test_a_compact_answer_outside_its_bounds_fails_validation(rubric, field, text, problem):
    criteria = list(rubric.criteria.prefetch_related("exceptions"))
    request = {"response_format": {"json_schema": {"schema": answer_schema(criteria=criteria, shape=COMPACT_SHAPE)}}}
    answer = answer_for(request, evidence="AGENTE: Buenas tardes, le atiende Marta.")
    answer["scores"]["saludo"][field] = text

    with pytest.raises(InvalidAnswerError, match=re.escape(f"saludo: {problem}")):
        answer_parse(content=json.dumps(answer), criteria=criteria, shape=COMPACT_SHAPE)
    # The standard shape takes the same text: within its 160/200 characters, and any character.
    answer_parse(content=json.dumps(answer), criteria=criteria, shape=STANDARD_SHAPE)


def test_the_local_answer_shape_is_a_setting(settings):
    assert local_answer_shape() == COMPACT_SHAPE
    settings.QA_LOCAL_ANSWER_SHAPE = "standard"
    assert local_answer_shape() == STANDARD_SHAPE
    settings.QA_LOCAL_ANSWER_SHAPE = "tiny"
    with pytest.raises(LLMError, match="QA_LOCAL_ANSWER_SHAPE is 'tiny': set it to compact or standard"):
        local_answer_shape()


COMPACT_REFERENCES = dataclasses.replace(COMPACT_SHAPE, evidence_mode=REFERENCE)


def compact_reference_answer(criteria) -> dict:
    """The scripted server's valid answer to a compact reference request (the first turn, whole)."""
    request = {"response_format": {"json_schema": {"schema": answer_schema(criteria=criteria, shape=COMPACT_REFERENCES)}}}
    answer = answer_for(request)
    for item in answer["scores"].values():
        item["rationale"] = "Se ve."  # within the compact 20 characters
    return answer


def test_the_budget_covers_the_widest_answer_the_compact_reference_schema_admits(sample_criteria):
    budget = answer_max_tokens(criteria=sample_criteria, shape=COMPACT_REFERENCES)
    widest = widest_answer(criteria=sample_criteria, shape=COMPACT_REFERENCES)
    text = json.dumps(widest, ensure_ascii=False, separators=(",", ":"))

    answers = answer_parse(content=text, criteria=sample_criteria, shape=COMPACT_REFERENCES)
    assert all(len(answer.references) == 3 for answer in answers)
    assert budget >= len(text.encode()) + json_gaps(text)
    # Three references of words at their bound, each with a five-digit turn number, per criterion.
    per_criterion = 3 * (2 * COMPACT_REFERENCES.words_max_chars + len("99999")) + 2 * COMPACT_REFERENCES.rationale_max_chars
    assert budget >= per_criterion * len(sample_criteria)
    assert budget < 8192 - 3300


def test_the_reference_schema_enums_the_turns_and_the_version_does_not_depend_on_them(sample_criteria):
    template = answer_schema(criteria=sample_criteria, shape=COMPACT_REFERENCES)
    sent = answer_schema(criteria=sample_criteria, shape=COMPACT_REFERENCES, turns=4)
    for schema, turn in ((template, {"type": "integer", "minimum": 1}), (sent, {"type": "integer", "enum": [1, 2, 3, 4]})):
        for criterion in schema["properties"]["scores"]["properties"].values():
            reference = criterion["properties"]["evidence"]["items"]
            assert reference["properties"]["turn"] == turn
            assert reference["properties"]["words"]["maxLength"] == COMPACT_REFERENCES.words_max_chars
            assert reference["required"] == ["turn", "words"] and reference["additionalProperties"] is False
            assert "evidence" not in COMPACT_REFERENCES.bounds


@pytest.mark.parametrize(
    ("evidence", "problem"),
    [
        ([], "evidence is not a list of 1 to 3 turn references"),
        ([{"turn": 1, "words": ""}] * 4, "evidence is not a list of 1 to 3 turn references"),
        ("AGENTE: Buenas tardes", "evidence is not a list of 1 to 3 turn references"),
        ([{"turn": 0, "words": ""}], "evidence reference 1: turn 0 is not a positive integer"),
        ([{"turn": True, "words": ""}], "evidence reference 1: turn True is not a positive integer"),
        ([{"turn": 2}], "evidence reference 1 is not an object of only turn and words"),
        ([{"turn": 2, "words": "", "why": "x"}], "evidence reference 1 is not an object of only turn and words"),
        ([{"turn": 1, "words": "a" * 31}], "evidence reference 1 words has 31 characters, more than the schema's 30"),
        ([{"turn": 1, "words": "10 €"}], "evidence reference 1 words has '€', outside the schema's plain characters"),
    ],
)
def test_references_outside_the_schema_fail_validation_naming_the_problem(rubric, evidence, problem):
    criteria = list(rubric.criteria.prefetch_related("exceptions"))
    answer = compact_reference_answer(criteria)
    assert answer["scores"]["saludo"]["evidence"] == [{"turn": 1, "words": ""}]
    answer_parse(content=json.dumps(answer), criteria=criteria, shape=COMPACT_REFERENCES)  # the valid one passes
    answer["scores"]["saludo"]["evidence"] = evidence

    with pytest.raises(InvalidAnswerError, match=re.escape(f"saludo: {problem}")):
        answer_parse(content=json.dumps(answer), criteria=criteria, shape=COMPACT_REFERENCES)


def test_a_turn_past_the_call_is_valid_here_and_the_verifier_s_bad_reference(rubric):
    # A server may ignore the enum: the answer stands, and the verifier says what the reference is worth.
    criteria = list(rubric.criteria.prefetch_related("exceptions"))
    answer = compact_reference_answer(criteria)
    answer["scores"]["saludo"]["evidence"] = [{"turn": 99, "words": "Buenas tardes"}]
    [saludo, _] = answer_parse(content=json.dumps(answer), criteria=criteria, shape=COMPACT_REFERENCES)
    assert saludo.references == (Reference(99, "Buenas tardes"),) and saludo.evidence == ""
