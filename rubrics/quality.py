"""A call's quality score: one number from 0 to 100 per call, and whether a critical criterion failed it.

The one definition. Everything that shows a call's score computes it here: `quality_score` in Python (the
API, the queue, the routing, the exports), `quality_sql` in SQL (the scorecards and the dashboard, which sum
a million calls in the database) and `static/review/quality.js` in the review page while the supervisor
scores. Tests hold the three to the same worked examples and random inputs.

The arithmetic, on a rubric's policy (`QualityPolicy`) and one value per criterion key:
- Each value counts as its share of its criterion's scale, 0–100: (value − minimum) / (maximum − minimum).
- A criterion that does not apply (N/A) leaves the weights under the rubric's `not_applicable: exclude`, and
  counts as met (100) under `met`.
- A section's score is the weighted mean of its criteria's shares (their weights); the call's computed score
  is the weighted mean of its sections' scores (the sections' weights), over the sections with any weight
  left. A rubric without sections is one section: the weighted mean of its criteria.
- A critical criterion whose value is at or below its `fail_at` fails the call (`auto_fail_criteria`). Under
  `auto_fail: zero` the call's score is 0; under `flag` it keeps the computed score, marked `auto_failed`.
- A criterion with no value: a person's review must value every criterion, so a review's score waits for
  them all (`partial=False`, the review page's "every criterion needs a value"). The judge's score is over
  the values that exist (`partial=True`): a value whose quote did not verify does not exist, so it is left
  out like an excluded N/A, and `Quality.missing` says which criteria the score does not cover, which the
  pages show beside it (issue 41: with a weak judge every call had one, and every call showed "—"). An
  auto-fail under `zero` scores the call 0 either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Final

NO_SECTION: Final = ""  # the key of the section criteria are in when the rubric has none


class _NotApplicable:
    """The value of a criterion that does not apply to the call: not a number, and not missing."""

    def __repr__(self) -> str:
        return "NOT_APPLICABLE"


NOT_APPLICABLE: Final = _NotApplicable()
Value = int | float | _NotApplicable


@dataclass(frozen=True)
class CriterionPolicy:
    key: str
    section: str  # a section's key; NO_SECTION when the rubric has no sections
    weight: float
    scale_min: int
    scale_max: int
    critical: bool = False
    fail_at: int | None = None  # for a critical criterion: a value at or below it fails the call


@dataclass(frozen=True)
class SectionPolicy:
    key: str
    weight: float


@dataclass(frozen=True)
class QualityPolicy:
    criteria: tuple[CriterionPolicy, ...]
    sections: tuple[SectionPolicy, ...]  # those the criteria name; NO_SECTION's weight is 1
    auto_fail: str = "zero"  # or "flag"
    not_applicable: str = "exclude"  # or "met"

    def as_dict(self) -> dict:
        """The policy as the review page's script reads it (JSON)."""
        return asdict(self)


@dataclass(frozen=True)
class Quality:
    score: float | None  # 0–100; None when a value is missing (and no auto-fail zeroes the call)
    auto_failed: bool
    auto_fail_criteria: tuple[str, ...]  # the critical criteria at or below their fail value, in rubric order
    missing: tuple[str, ...] = ()  # the criteria without a value (a partial score does not cover them)


def quality_policy(rubric) -> QualityPolicy:  # noqa: ANN001 (a rubrics.models.Rubric; no import, no cycle)
    """A rubric version's policy, from its sections and criteria (a prefetch of both serves it)."""
    sections = {section.pk: section for section in rubric.sections.all()}
    criteria = tuple(
        CriterionPolicy(
            key=criterion.key,
            section=sections[criterion.section_id].key if criterion.section_id in sections else NO_SECTION,
            weight=float(criterion.weight),
            scale_min=criterion.scale_min,
            scale_max=criterion.scale_max,
            critical=criterion.critical,
            fail_at=criterion.fail_at if criterion.critical else None,
        )
        for criterion in rubric.criteria.all()
    )
    used = {criterion.section for criterion in criteria}
    section_policies = [SectionPolicy(s.key, float(s.weight)) for s in sections.values() if s.key in used]
    if NO_SECTION in used:
        section_policies.append(SectionPolicy(NO_SECTION, 1.0))
    return QualityPolicy(
        criteria=criteria,
        sections=tuple(section_policies),
        auto_fail=rubric.auto_fail,
        not_applicable=rubric.not_applicable,
    )


def share(criterion: CriterionPolicy, value: float) -> float:
    """A value as its share of the criterion's scale, 0–100."""
    return 100.0 * (value - criterion.scale_min) / (criterion.scale_max - criterion.scale_min)


def quality_score(policy: QualityPolicy, values: Mapping[str, Value], *, partial: bool = False) -> Quality:
    """The call's quality score from one value per criterion key (a number, or NOT_APPLICABLE); a key
    absent is a criterion without a value, which leaves no score unless `partial` (then the score is over
    the values given, and `missing` names the rest)."""
    totals: dict[str, list[float]] = {section.key: [0.0, 0.0] for section in policy.sections}
    failed, missing = [], []
    for criterion in policy.criteria:
        if criterion.key not in values or values[criterion.key] is None:
            missing.append(criterion.key)
            continue
        value = values[criterion.key]
        if value is NOT_APPLICABLE:
            if policy.not_applicable != "met":
                continue
            part = 100.0
        else:
            part = share(criterion, value)
            if criterion.critical and criterion.fail_at is not None and value <= criterion.fail_at:
                failed.append(criterion.key)
        total = totals.setdefault(criterion.section, [0.0, 0.0])
        total[0] += criterion.weight * part
        total[1] += criterion.weight
    auto_failed = bool(failed)
    if auto_failed and policy.auto_fail == "zero":
        score: float | None = 0.0
    elif missing and not partial:
        score = None
    else:
        score = _computed(policy, totals)
    return Quality(score=score, auto_failed=auto_failed, auto_fail_criteria=tuple(failed), missing=tuple(missing))


def _computed(policy: QualityPolicy, totals: dict[str, list[float]]) -> float | None:
    weighted = weights = 0.0
    for section in policy.sections:
        shares, weight = totals.get(section.key, (0.0, 0.0))
        if weight > 0:
            weighted += section.weight * shares / weight
            weights += section.weight
    return weighted / weights if weights > 0 else None


# --- the same in SQL -------------------------------------------------------------------------------------


def _real(number: float) -> str:
    """A constant in double precision: with PostgreSQL's numeric (what a literal 1.0 is), the scorecards'
    query cost half as much again."""
    return f"CAST({float(number)!r} AS DOUBLE PRECISION)"


@dataclass(frozen=True)
class SqlValue:
    """Where a query finds one criterion's value: `value`, SQL for the number (NULL when there is none),
    and `not_applicable`, a SQL condition true when the criterion does not apply."""

    value: str
    not_applicable: str


def quality_sql(policy: QualityPolicy, columns: Mapping[str, SqlValue]) -> str:
    """SQL for the call's quality score (0–100, NULL as `quality_score`'s None) from its per-criterion columns,
    by criterion key: `quality_score`'s arithmetic, term by term."""
    met = policy.not_applicable == "met"
    sections: dict[str, tuple[list[str], list[str]]] = {section.key: ([], []) for section in policy.sections}
    missing, failing = [], []
    for criterion in policy.criteria:
        column = columns[criterion.key]
        value, not_applicable = column.value, column.not_applicable
        per_point = 100.0 * criterion.weight / (criterion.scale_max - criterion.scale_min)
        when_na = _real(100.0 * criterion.weight if met else 0.0)
        shares, weights = sections.setdefault(criterion.section, ([], []))
        shares.append(
            f"CASE WHEN {value} IS NOT NULL THEN ({value} - {criterion.scale_min}) * {_real(per_point)}"
            f" WHEN {not_applicable} THEN {when_na} ELSE {_real(0)} END"
        )
        weights.append(
            f"CASE WHEN {value} IS NOT NULL THEN {_real(criterion.weight)}"
            f" WHEN {not_applicable} THEN {_real(criterion.weight if met else 0.0)} ELSE {_real(0)} END"
        )
        missing.append(f"({value} IS NULL AND NOT ({not_applicable}))")
        if criterion.critical and criterion.fail_at is not None:
            failing.append(f"{value} <= {int(criterion.fail_at)}")
    means = []
    for section in policy.sections:
        shares, weights = sections.get(section.key, ([], []))
        if shares:
            means.append((section.weight, f"(({' + '.join(shares)}) / NULLIF({' + '.join(weights)}, {_real(0)}))"))
    if len(means) == 1 and means[0][0] > 0:
        computed = means[0][1]  # one section: its mean (as the sum below gives, in fewer terms)
    elif means:
        weighted = " + ".join(f"COALESCE({mean} * {_real(weight)}, {_real(0)})" for weight, mean in means)
        present = " + ".join(f"CASE WHEN {mean} IS NULL THEN {_real(0)} ELSE {_real(weight)} END" for weight, mean in means)
        computed = f"(({weighted}) / NULLIF({present}, {_real(0)}))"
    else:
        computed = "NULL"
    cases = []
    if failing and policy.auto_fail == "zero":
        cases.append(f"WHEN {' OR '.join(failing)} THEN {_real(0)}")
    if missing:
        cases.append(f"WHEN {' OR '.join(missing)} THEN NULL")
    return f"(CASE {' '.join(cases)} ELSE {computed} END)" if cases else computed


def auto_failed_sql(policy: QualityPolicy, columns: Mapping[str, SqlValue]) -> str:
    """SQL true when a critical criterion's value is at or below its fail value (`Quality.auto_failed`)."""
    failing = [
        f"COALESCE({columns[c.key].value} <= {int(c.fail_at)}, FALSE)"
        for c in policy.criteria
        if c.critical and c.fail_at is not None
    ]
    return f"({' OR '.join(failing)})" if failing else "FALSE"
