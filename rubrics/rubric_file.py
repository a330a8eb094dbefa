"""Rubrics as code: read a rubric from YAML with errors that name the field
and line, and write one back so that export → import round-trips."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.utils.text import slugify

from rubrics.models import Criterion, CriterionException, Rubric

RUBRIC_FIELDS = {
    "slug", "name", "language", "description", "review_confidence_threshold", "audit_rate", "warm_up_judgments",
    "agreement_target", "agreement_risk", "agreement_tolerance", "sections", "auto_fail", "not_applicable", "route_auto_fail", "criteria",
}
CRITERION_FIELDS = {
    "key", "title", "description", "evidence_guidance", "scale_min", "scale_max", "weight", "replaces", "subject",
    "section", "critical", "fail_at", "exceptions",
}
SECTION_FIELDS = {"key", "title", "weight"}
EXCEPTION_FIELDS = {"when", "outcome"}


class RubricFileError(ValueError):
    def __init__(self, message: str, node: yaml.Node | None = None) -> None:
        line = f"line {node.start_mark.line + 1}: " if node is not None else ""
        super().__init__(f"{line}{message}")


@dataclass
class ExceptionSpec:
    when: str
    outcome: str


@dataclass
class CriterionSpec:
    key: str
    title: str
    description: str
    evidence_guidance: str = ""
    scale_min: int = 1
    scale_max: int = 5
    weight: float = 1.0
    replaces: str = ""
    subject: str = Criterion.Subject.ANY.value
    section: str = ""  # a section's key; empty when the rubric has no sections
    critical: bool = False
    fail_at: int | None = None
    exceptions: list[ExceptionSpec] = field(default_factory=list)


@dataclass
class SectionSpec:
    key: str
    title: str
    weight: float = 1.0


@dataclass
class RubricSpec:
    slug: str
    name: str
    language: str = "es"
    description: str = ""
    review_confidence_threshold: float = 0.75
    audit_rate: float = 0.20
    warm_up_judgments: int = 50
    agreement_target: float = 0.9
    agreement_risk: float = 0.1
    agreement_tolerance: str = Rubric.AgreementTolerance.EXACT.value
    sections: list[SectionSpec] = field(default_factory=list)
    auto_fail: str = Rubric.AutoFail.ZERO.value
    not_applicable: str = Rubric.NotApplicableRule.EXCLUDE.value
    route_auto_fail: bool = True
    criteria: list[CriterionSpec] = field(default_factory=list)


def rubric_spec_parse(text: str) -> RubricSpec:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise RubricFileError(f"not valid YAML: {error}") from error
    fields = _mapping(root, "the rubric", RUBRIC_FIELDS)
    slug = _text(fields, "slug", "the rubric")
    if slug != slugify(slug):
        raise RubricFileError(f"'slug' must be a slug (lowercase letters, digits, hyphens), got {slug!r}", fields["slug"][0])
    spec = RubricSpec(
        slug=slug,
        name=_text(fields, "name", "the rubric"),
        language=_text(fields, "language", "the rubric", default="es"),
        description=_text(fields, "description", "the rubric", default=""),
        review_confidence_threshold=_unit(fields, "review_confidence_threshold", default=0.75),
        audit_rate=_unit(fields, "audit_rate", default=0.20),
        warm_up_judgments=_integer(fields, "warm_up_judgments", "the rubric", default=50),
    )
    if spec.warm_up_judgments < 0:
        raise RubricFileError("'warm_up_judgments' must not be negative", fields["warm_up_judgments"][1])
    for name in ("agreement_target", "agreement_risk"):
        value = _number(fields, name, "the rubric", getattr(spec, name))
        if not 0 < value < 1:
            raise RubricFileError(f"'{name}' must be strictly between 0 and 1, got {value}", fields[name][1])
        setattr(spec, name, value)
    spec.agreement_tolerance = _choice(
        fields, "agreement_tolerance", "the rubric", Rubric.AgreementTolerance.values, spec.agreement_tolerance
    )
    spec.auto_fail = _choice(fields, "auto_fail", "the rubric", Rubric.AutoFail.values, spec.auto_fail)
    spec.not_applicable = _choice(
        fields, "not_applicable", "the rubric", Rubric.NotApplicableRule.values, spec.not_applicable
    )
    spec.route_auto_fail = _boolean(fields, "route_auto_fail", "the rubric", default=True)
    if "sections" in fields:
        sections_node = fields["sections"][1]
        if not isinstance(sections_node, yaml.SequenceNode):
            raise RubricFileError("'sections' must be a list", sections_node)
        for node in sections_node.value:
            section = _section(node)
            if any(other.key == section.key for other in spec.sections):
                raise RubricFileError(f"duplicate section key '{section.key}'", node)
            spec.sections.append(section)
    section_keys = {section.key for section in spec.sections}
    if "criteria" not in fields:
        raise RubricFileError("the rubric has no 'criteria'", root)
    criteria_node = fields["criteria"][1]
    if not isinstance(criteria_node, yaml.SequenceNode) or not criteria_node.value:
        raise RubricFileError("'criteria' must be a non-empty list", criteria_node)
    seen: dict[str, int] = {}
    for node in criteria_node.value:
        criterion = _criterion(node)
        if criterion.key in seen:
            raise RubricFileError(
                f"duplicate criterion key '{criterion.key}' (first at line {seen[criterion.key]})", node
            )
        seen[criterion.key] = node.start_mark.line + 1
        if criterion.section and criterion.section not in section_keys:
            known = ", ".join(sorted(section_keys)) or "none"
            raise RubricFileError(
                f"criterion '{criterion.key}': unknown section '{criterion.section}' (sections: {known})", node
            )
        if section_keys and not criterion.section:
            raise RubricFileError(
                f"criterion '{criterion.key}': the rubric has sections, so 'section' is required", node
            )
        spec.criteria.append(criterion)
    return spec


def _section(node: yaml.Node) -> SectionSpec:
    fields = _mapping(node, "a section", SECTION_FIELDS)
    key = _text(fields, "key", "a section")
    where = f"section '{key}'"
    if key != slugify(key):
        raise RubricFileError(f"{where}: 'key' must be a slug", fields["key"][0])
    section = SectionSpec(key=key, title=_text(fields, "title", where), weight=_number(fields, "weight", where, default=1.0))
    if section.weight < 0:
        raise RubricFileError(f"{where}: 'weight' must not be negative", fields["weight"][0])
    return section


def _criterion(node: yaml.Node) -> CriterionSpec:
    fields = _mapping(node, "a criterion", CRITERION_FIELDS)
    key = _text(fields, "key", "a criterion")
    where = f"criterion '{key}'"
    if key != slugify(key):
        raise RubricFileError(f"{where}: 'key' must be a slug", fields["key"][0])
    criterion = CriterionSpec(
        key=key,
        title=_text(fields, "title", where),
        description=_text(fields, "description", where),
        evidence_guidance=_text(fields, "evidence_guidance", where, default=""),
        scale_min=_integer(fields, "scale_min", where, default=1),
        scale_max=_integer(fields, "scale_max", where, default=5),
        weight=_number(fields, "weight", where, default=1.0),
        replaces=_text(fields, "replaces", where, default=""),
        subject=_text(fields, "subject", where, default=Criterion.Subject.ANY.value),
        section=_text(fields, "section", where, default=""),
        critical=_boolean(fields, "critical", where, default=False),
    )
    if "fail_at" in fields:
        criterion.fail_at = _integer(fields, "fail_at", where, default=0)
    if criterion.critical and criterion.fail_at is None:
        raise RubricFileError(f"{where}: a critical criterion needs 'fail_at' (the value at or below which the call fails)", fields["critical"][1])
    if criterion.fail_at is not None and not criterion.critical:
        raise RubricFileError(f"{where}: 'fail_at' is only for a critical criterion ('critical: true')", fields["fail_at"][0])
    if criterion.subject not in Criterion.Subject.values:
        choices = ", ".join(Criterion.Subject.values)
        raise RubricFileError(f"{where}: unknown subject '{criterion.subject}' (use one of: {choices})", fields["subject"][1])
    if criterion.weight < 0:
        raise RubricFileError(f"{where}: 'weight' must not be negative", fields["weight"][0])
    if criterion.replaces and criterion.replaces != slugify(criterion.replaces):
        raise RubricFileError(f"{where}: 'replaces' must be a criterion key", fields["replaces"][1])
    if criterion.scale_min >= criterion.scale_max:
        anchor = fields.get("scale_min", fields.get("scale_max", (node,)))[0]  # type: ignore[arg-type]
        raise RubricFileError(f"{where}: scale_min ({criterion.scale_min}) must be below scale_max ({criterion.scale_max})", anchor)
    if criterion.fail_at is not None and not criterion.scale_min <= criterion.fail_at < criterion.scale_max:
        raise RubricFileError(
            f"{where}: 'fail_at' ({criterion.fail_at}) must be on the scale and below its maximum"
            f" ({criterion.scale_min} to {criterion.scale_max - 1})",
            fields["fail_at"][1],
        )
    if "exceptions" in fields:
        exceptions_node = fields["exceptions"][1]
        if not isinstance(exceptions_node, yaml.SequenceNode):
            raise RubricFileError(f"{where}: 'exceptions' must be a list", exceptions_node)
        criterion.exceptions = [_exception(item, where) for item in exceptions_node.value]
    return criterion


def _exception(node: yaml.Node, where: str) -> ExceptionSpec:
    fields = _mapping(node, f"an exception of {where}", EXCEPTION_FIELDS)
    outcome = _text(fields, "outcome", f"an exception of {where}")
    if outcome not in CriterionException.Outcome.values:
        choices = ", ".join(CriterionException.Outcome.values)
        raise RubricFileError(f"{where}: unknown exception outcome '{outcome}' (use one of: {choices})", fields["outcome"][0])
    return ExceptionSpec(when=_text(fields, "when", f"an exception of {where}"), outcome=outcome)


class Fields(dict[str, tuple[yaml.Node, yaml.Node]]):
    """A mapping's fields as {name: (key node, value node)}, remembering the mapping's own node."""

    def __init__(self, node: yaml.Node) -> None:
        super().__init__()
        self.node = node


def _mapping(node: yaml.Node, what: str, allowed: set[str]) -> Fields:
    """Read a mapping, refusing unknown and repeated fields."""
    if not isinstance(node, yaml.MappingNode):
        raise RubricFileError(f"{what} must be a mapping of fields", node)
    fields = Fields(node)
    for key_node, value_node in node.value:
        name = key_node.value
        if name not in allowed:
            raise RubricFileError(f"unknown field '{name}' in {what} (allowed: {', '.join(sorted(allowed))})", key_node)
        if name in fields:
            raise RubricFileError(f"field '{name}' given twice in {what}", key_node)
        fields[name] = (key_node, value_node)
    return fields


_MISSING: Any = object()


def _scalar(fields: Fields, name: str, where: str, default: Any) -> tuple[yaml.Node | None, Any]:
    if name not in fields:
        if default is _MISSING:
            raise RubricFileError(f"{where}: '{name}' is required", fields.node)
        return None, default
    node = fields[name][1]
    if not isinstance(node, yaml.ScalarNode):
        raise RubricFileError(f"{where}: '{name}' must be a single value", node)
    return node, yaml.safe_load(yaml.serialize(node))


def _text(fields: Fields, name: str, where: str, default: Any = _MISSING) -> str:
    node, value = _scalar(fields, name, where, default)
    if node is None:
        return value
    if not isinstance(value, str) or not value.strip():
        raise RubricFileError(f"{where}: '{name}' must be non-empty text", node)
    return value.strip()


def _number(fields: Fields, name: str, where: str, default: float) -> float:
    node, value = _scalar(fields, name, where, default)
    if node is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise RubricFileError(f"{where}: '{name}' must be a number", node)
    return float(value)


def _integer(fields: Fields, name: str, where: str, default: int) -> int:
    node, value = _scalar(fields, name, where, default)
    if node is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise RubricFileError(f"{where}: '{name}' must be a whole number", node)
    return value


def _boolean(fields: Fields, name: str, where: str, default: bool) -> bool:
    node, value = _scalar(fields, name, where, default)
    if node is not None and not isinstance(value, bool):
        raise RubricFileError(f"{where}: '{name}' must be true or false", node)
    return value


def _choice(fields: Fields, name: str, where: str, choices: list[str], default: str) -> str:
    value = _text(fields, name, where, default=default)
    if value not in choices:
        raise RubricFileError(
            f"{where}: unknown {name} '{value}' (use one of: {', '.join(choices)})", fields[name][1]
        )
    return value


def _unit(fields: Fields, name: str, default: float) -> float:
    value = _number(fields, name, "the rubric", default)
    if not 0 <= value <= 1:
        raise RubricFileError(f"'{name}' must be between 0 and 1, got {value}", fields[name][1])
    return value


def rubric_spec_of(rubric: Rubric) -> RubricSpec:
    """The content of one stored rubric version, as a file would hold it."""
    return RubricSpec(
        slug=rubric.slug,
        name=rubric.name,
        language=rubric.language,
        description=rubric.description,
        review_confidence_threshold=rubric.review_confidence_threshold,
        audit_rate=rubric.audit_rate,
        warm_up_judgments=rubric.warm_up_judgments,
        agreement_target=rubric.agreement_target,
        agreement_risk=rubric.agreement_risk,
        agreement_tolerance=rubric.agreement_tolerance,
        sections=[SectionSpec(key=s.key, title=s.title, weight=s.weight) for s in rubric.sections.all()],
        auto_fail=rubric.auto_fail,
        not_applicable=rubric.not_applicable,
        route_auto_fail=rubric.route_auto_fail,
        criteria=[
            CriterionSpec(
                key=criterion.key,
                title=criterion.title,
                description=criterion.description,
                evidence_guidance=criterion.evidence_guidance,
                scale_min=criterion.scale_min,
                scale_max=criterion.scale_max,
                weight=criterion.weight,
                replaces=criterion.replaces,
                subject=criterion.subject,
                section=criterion.section.key if criterion.section is not None else "",
                critical=criterion.critical,
                fail_at=criterion.fail_at if criterion.critical else None,
                exceptions=[ExceptionSpec(when=e.text, outcome=e.outcome) for e in criterion.exceptions.all()],
            )
            for criterion in rubric.criteria.select_related("section").prefetch_related("exceptions")
        ],
    )


def rubric_spec_dump(spec: RubricSpec) -> str:
    """The YAML of a rubric, in the shape rubric_spec_parse reads."""
    data = dataclasses.asdict(spec)
    if not spec.description:
        del data["description"]
    # The quality policy's and the routing guarantee's defaults are left out, so a file written before it existed reads and writes the same.
    for name, default in (
        ("sections", []), ("auto_fail", "zero"), ("not_applicable", "exclude"), ("route_auto_fail", True),
        ("agreement_target", 0.9), ("agreement_risk", 0.1), ("agreement_tolerance", "exact"),
    ):  # fmt: skip
        if data[name] == default:
            del data[name]
    for criterion in data["criteria"]:
        for name, default in (("section", ""), ("critical", False), ("fail_at", None)):
            if criterion[name] == default:
                del criterion[name]
        # Empty optional texts are left out: the parser refuses an empty value it is given.
        for name in ("evidence_guidance", "replaces"):
            if not criterion[name]:
                del criterion[name]
        if criterion["subject"] == Criterion.Subject.ANY:
            del criterion["subject"]  # the default: a file written before subjects existed reads the same
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)
