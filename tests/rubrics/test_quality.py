"""The call's quality score (rubrics.quality): its arithmetic on worked examples, the SQL form against the
Python one, and the rubric policy it reads (YAML, freezing, lint)."""

from __future__ import annotations

import random

import pytest
from django.db import connection

from rubrics.lint import rubric_lint
from rubrics.models import Criterion, RubricFrozenError, Section
from rubrics.quality import (
    NOT_APPLICABLE,
    CriterionPolicy,
    QualityPolicy,
    SectionPolicy,
    SqlValue,
    quality_policy,
    quality_score,
    quality_sql,
)
from rubrics.rubric_file import RubricFileError, rubric_spec_dump, rubric_spec_of, rubric_spec_parse
from rubrics.services import rubric_import, rubric_publish

NA = NOT_APPLICABLE


def policy(*criteria: CriterionPolicy, sections=(SectionPolicy("", 1.0),), auto_fail="zero", not_applicable="exclude"):
    return QualityPolicy(criteria=criteria, sections=tuple(sections), auto_fail=auto_fail, not_applicable=not_applicable)


def c(key, weight=1.0, section="", low=1, high=5, fail_at=None):
    return CriterionPolicy(key, section, weight, low, high, fail_at is not None, fail_at)


# --- worked examples ---------------------------------------------------------------------------------------


def test_weights_within_one_section():
    # shares: a=4 on 1..5 → 75, b=2 → 25, c=0 on 0..1 → 0; weights 2, 1, 1: (150 + 25 + 0) / 4 = 43.75
    rules = policy(c("a", 2), c("b", 1), c("c", 1, low=0, high=1))
    result = quality_score(rules, {"a": 4, "b": 2, "c": 0})
    assert result.score == pytest.approx(43.75)
    assert (result.auto_failed, result.auto_fail_criteria, result.missing) == (False, (), ())


def test_sections_weigh_their_means():
    # opening (weight 1): a=5 → 100; closing (weight 3): b=1 → 0 (w 1), c=3 → 50 (w 1): mean 25.
    # (1 × 100 + 3 × 25) / 4 = 43.75, where one flat mean of the three would be 50.
    rules = policy(
        c("a", section="opening"), c("b", section="closing"), c("c", section="closing"),
        sections=[SectionPolicy("opening", 1), SectionPolicy("closing", 3)],
    )  # fmt: skip
    assert quality_score(rules, {"a": 5, "b": 1, "c": 3}).score == pytest.approx(43.75)


def test_not_applicable_excluded_from_the_weights():
    rules = policy(c("a"), c("b"), c("c"))
    # b does not apply: (a=5 → 100, c=2 → 25) / 2 = 62.5
    assert quality_score(rules, {"a": 5, "b": NA, "c": 2}).score == pytest.approx(62.5)


def test_not_applicable_counted_as_met():
    rules = policy(c("a"), c("b"), c("c"), not_applicable="met")
    # b counts as 100: (100 + 100 + 25) / 3 = 75
    assert quality_score(rules, {"a": 5, "b": NA, "c": 2}).score == pytest.approx(75.0)


def test_a_section_with_every_criterion_not_applicable_leaves_the_section_weights():
    rules = policy(
        c("a", section="s1"), c("b", section="s2"), sections=[SectionPolicy("s1", 1), SectionPolicy("s2", 3)]
    )
    assert quality_score(rules, {"a": 3, "b": NA}).score == pytest.approx(50.0)  # s2 drops out, s1 alone
    assert quality_score(rules, {"a": NA, "b": NA}).score is None  # nothing left to weigh


def test_an_auto_fail_zeroes_the_call():
    rules = policy(c("debt", fail_at=2), c("tone"))
    result = quality_score(rules, {"debt": 2, "tone": 5})  # at the fail value: fails
    assert (result.score, result.auto_failed, result.auto_fail_criteria) == (0.0, True, ("debt",))
    passing = quality_score(rules, {"debt": 3, "tone": 5})  # above it: (50 + 100) / 2
    assert (passing.score, passing.auto_failed) == (pytest.approx(75.0), False)


def test_an_auto_fail_flags_the_call_and_keeps_the_computed_score():
    rules = policy(c("debt", fail_at=2), c("tone"), auto_fail="flag")
    result = quality_score(rules, {"debt": 1, "tone": 5})
    assert (result.score, result.auto_failed, result.auto_fail_criteria) == (pytest.approx(50.0), True, ("debt",))


def test_a_critical_criterion_that_does_not_apply_fails_nothing():
    rules = policy(c("debt", fail_at=2), c("tone"))
    result = quality_score(rules, {"debt": NA, "tone": 3})
    assert (result.score, result.auto_failed) == (pytest.approx(50.0), False)


def test_an_unverified_critical_value_is_no_value():
    # The judge's value of "debt" did not verify: it is absent. No score, and no auto-fail from it,
    # however low the model's number was.
    rules = policy(c("debt", fail_at=2), c("tone"))
    result = quality_score(rules, {"tone": 5})
    assert (result.score, result.auto_failed, result.missing) == (None, False, ("debt",))
    # Another critical criterion that verified and failed still zeroes the call: no value could undo it.
    two = policy(c("debt", fail_at=2), c("pressure", fail_at=1), c("tone"))
    result = quality_score(two, {"pressure": 1, "tone": 5})
    assert (result.score, result.auto_fail_criteria, result.missing) == (0.0, ("pressure",), ("debt",))
    # Under `flag` there is no computed score to keep without the missing value.
    flagged = policy(c("debt", fail_at=2), c("pressure", fail_at=1), c("tone"), auto_fail="flag")
    assert quality_score(flagged, {"pressure": 1, "tone": 5}).score is None


# --- the SQL form is the same arithmetic -------------------------------------------------------------------


def _sql_scores(rules: QualityPolicy, rows: list[dict]) -> list[float | None]:
    """Evaluate quality_sql on literal rows in the database."""
    keys = [criterion.key for criterion in rules.criteria]
    sql = quality_sql(rules, {key: SqlValue(f"v_{index}", f"n_{index} = 1") for index, key in enumerate(keys)})
    columns = ", ".join(f"v_{i}, n_{i}" for i in range(len(keys)))
    values, params = [], []
    for row in rows:
        cells = []
        for key in keys:
            value = row.get(key)
            cells += [None if value is NA else value, 1 if value is NA else 0]
        values.append("(" + ", ".join(["CAST(%s AS INTEGER)"] * len(cells)) + ")")
        params += cells
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {sql} FROM (VALUES {', '.join(values)}) AS t({columns})", params)
        return [row[0] for row in cursor.fetchall()]


def random_case(rng: random.Random) -> tuple[QualityPolicy, list[dict]]:
    sections = [SectionPolicy(f"s{i}", rng.choice([0, 0.5, 1, 2, 3])) for i in range(rng.randint(1, 3))]
    criteria = []
    for index in range(rng.randint(1, 6)):
        low = rng.choice([0, 1])
        high = low + rng.randint(1, 4)
        fail_at = rng.randint(low, high - 1) if rng.random() < 0.3 else None
        criteria.append(c(f"k{index}", rng.choice([0, 1, 1, 2, 0.5]), rng.choice(sections).key, low, high, fail_at))
    rules = policy(
        *criteria, sections=sections, auto_fail=rng.choice(["zero", "flag"]), not_applicable=rng.choice(["exclude", "met"])
    )
    rows = []
    for _ in range(8):
        row = {}
        for criterion in criteria:
            draw = rng.random()
            if draw < 0.15:
                row[criterion.key] = NA
            elif draw > 0.9:
                continue  # no value
            else:
                row[criterion.key] = rng.randint(criterion.scale_min, criterion.scale_max)
        rows.append(row)
    return rules, rows


@pytest.mark.django_db
def test_the_sql_form_agrees_with_the_python_one_on_random_policies():
    rng = random.Random(28)
    for _ in range(60):
        rules, rows = random_case(rng)
        expected = [quality_score(rules, row).score for row in rows]
        for got, want in zip(_sql_scores(rules, rows), expected, strict=True):
            assert (got is None) == (want is None), (rules, rows)
            assert want is None or got == pytest.approx(want), (rules, rows)


# --- the policy in YAML, frozen, linted -----------------------------------------------------------------

POLICY_YAML = """\
slug: collections
name: Collections
language: en
sections:
- key: compliance
  title: Compliance
  weight: 3
- key: service
  title: Service
  weight: 1
auto_fail: flag
not_applicable: met
criteria:
- key: debt-stated
  title: States the debt
  description: The agent states the amount owed and its due date.
  evidence_guidance: Quote the agent's words with the amount.
  section: compliance
  critical: true
  fail_at: 1
  exceptions:
  - when: The customer hangs up before the agent can speak.
    outcome: not_applicable
- key: greeting
  title: Greets
  description: The agent greets the customer by name.
  section: service
  weight: 2
"""


@pytest.mark.django_db
def test_yaml_round_trips_the_policy():
    rubric = rubric_import(spec=rubric_spec_parse(POLICY_YAML))
    assert (rubric.auto_fail, rubric.not_applicable, rubric.route_auto_fail) == ("flag", "met", True)
    assert [(s.key, s.title, s.weight) for s in rubric.sections.all()] == [("compliance", "Compliance", 3), ("service", "Service", 1)]
    debt = rubric.criteria.get(key="debt-stated")
    assert (debt.section.key, debt.critical, debt.fail_at) == ("compliance", True, 1)
    assert rubric_spec_parse(rubric_spec_dump(rubric_spec_of(rubric))) == rubric_spec_of(rubric)
    assert rubric_spec_dump(rubric_spec_of(rubric)).count("fail_at: 1") == 1
    rules = quality_policy(rubric)
    assert [(s.key, s.weight) for s in rules.sections] == [("compliance", 3.0), ("service", 1.0)]
    # debt 1 fails (flag keeps the computed score): compliance 0, service 100 → (0 × 3 + 100) / 4 = 25
    result = quality_score(rules, {"debt-stated": 1, "greeting": 5})
    assert (result.score, result.auto_fail_criteria) == (25.0, ("debt-stated",))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("  fail_at: 1\n", ""), "a critical criterion needs 'fail_at'"),
        (("  critical: true\n", ""), "'fail_at' is only for a critical criterion"),
        (("fail_at: 1", "fail_at: 5"), "'fail_at' (5) must be on the scale and below its maximum"),
        (("section: service", "section: other"), "unknown section 'other'"),
        (("  section: service\n", ""), "the rubric has sections, so 'section' is required"),
        (("auto_fail: flag", "auto_fail: maybe"), "unknown auto_fail 'maybe' (use one of: zero, flag)"),
        (("not_applicable: met", "not_applicable: skip"), "unknown not_applicable 'skip'"),
        (("critical: true", "critical: yes please"), "'critical' must be true or false"),
    ],
)
def test_bad_policies_name_the_field(change, message):
    with pytest.raises(RubricFileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rubric_spec_parse(POLICY_YAML.replace(*change))


@pytest.mark.django_db
def test_a_published_versions_policy_cannot_change():
    rubric = rubric_publish(rubric=rubric_import(spec=rubric_spec_parse(POLICY_YAML)))
    section = Section.objects.get(rubric=rubric, key="service")
    section.weight = 10
    with pytest.raises(RubricFrozenError):
        section.save()
    with pytest.raises(RubricFrozenError):
        Section(rubric=rubric, key="new", title="New").save()
    with pytest.raises(RubricFrozenError):
        section.delete()
    criterion = Criterion.objects.get(rubric=rubric, key="greeting")
    criterion.critical, criterion.fail_at = True, 2
    with pytest.raises(RubricFrozenError):
        criterion.save()
    rubric.auto_fail = "zero"
    with pytest.raises(RubricFrozenError):
        rubric.save()
    rubric.refresh_from_db()
    assert rubric.auto_fail == "flag" and Criterion.objects.get(pk=criterion.pk).critical is False


@pytest.mark.django_db
def test_lint_warns_on_an_ambiguous_critical_criterion_and_a_weightless_section():
    text = POLICY_YAML.replace(
        "  exceptions:\n  - when: The customer hangs up before the agent can speak.\n    outcome: not_applicable\n", ""
    ).replace("  weight: 1\nauto_fail", "  weight: 0\nauto_fail")
    rubric = rubric_import(spec=rubric_spec_parse(text))
    findings = {(finding.rule, finding.criterion) for finding in rubric_lint(rubric)}
    assert ("critical-ambiguous", "debt-stated") in findings
    assert ("section-zero-weight", "") in findings
    clean = rubric_import(spec=rubric_spec_parse(POLICY_YAML.replace("slug: collections", "slug: collections-2")))
    rules = {finding.rule for finding in rubric_lint(clean)}
    assert "critical-ambiguous" not in rules and "section-zero-weight" not in rules


def _readme_yaml() -> str:
    from tests.support.docs import docs_section

    section = docs_section("docs/user/rubrics.md", "Critical criteria and the quality score")
    return section.split("```yaml\n", 1)[1].split("```", 1)[0]


@pytest.mark.django_db
def test_the_readmes_example_scores_as_it_says():
    spec = rubric_spec_parse(_readme_yaml())
    assert (spec.auto_fail, spec.not_applicable, spec.route_auto_fail) == ("zero", "exclude", True)
    rubric = rubric_import(spec=spec)
    values = {"debt-stated": 1, "greeting": 5}
    result = quality_score(quality_policy(rubric), values)
    assert (result.score, result.auto_failed, result.auto_fail_criteria) == (0.0, True, ("debt-stated",))
    flagged = rubric_spec_parse(_readme_yaml().replace("auto_fail: zero", "auto_fail: flag"))
    flagged.slug = "collections-flag"
    assert quality_score(quality_policy(rubric_import(spec=flagged)), values).score == 25.0
    assert not [f for f in rubric_lint(rubric) if f.rule in ("critical-ambiguous", "section-zero-weight")]
