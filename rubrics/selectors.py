"""Reads for rubrics: the version new recordings are judged with, the catalogue, and what a version changed."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from access.scope import Scope
from rubrics.models import Criterion, Rubric
from rubrics.quality import QualityPolicy, quality_policy
from rubrics.rubric_file import CriterionSpec, SectionSpec, rubric_spec_of


def rubrics_in(scope: Scope) -> QuerySet[Rubric]:
    """The rubrics (every version) of the workspaces in `scope`: where every read of rubrics starts."""
    return Rubric.objects.filter(scope.workspaces_q())


def rubric_latest_published(*, slug: str, scope: Scope) -> Rubric | None:
    """The version new recordings are judged with."""
    return rubrics_in(scope).filter(slug=slug, status=Rubric.Status.PUBLISHED).order_by("-version").first()


def rubric_list_current(*, scope: Scope) -> QuerySet[Rubric]:
    """The latest published version of each rubric: the one new recordings are judged with."""
    newer = Rubric.objects.filter(
        slug=OuterRef("slug"), status=Rubric.Status.PUBLISHED, version__gt=OuterRef("version")
    )
    return rubrics_in(scope).filter(status=Rubric.Status.PUBLISHED).exclude(Exists(newer)).order_by("slug")


def rubric_detail(*, slug: str, scope: Scope, version: int | None = None) -> Rubric:
    """One version of a rubric (by default the latest published) with its criteria
    and their exceptions, and every version of its slug as `all_versions`.

    Raises Rubric.DoesNotExist.
    """
    rubrics = rubrics_in(scope).filter(slug=slug).prefetch_related(
        "sections", Prefetch("criteria", queryset=Criterion.objects.select_related("section").prefetch_related("exceptions"))
    )
    if version is None:
        rubric = rubrics.filter(status=Rubric.Status.PUBLISHED).order_by("-version").first()
        if rubric is None:
            raise Rubric.DoesNotExist(slug)
    else:
        rubric = rubrics.get(version=version)
    rubric.all_versions = list(
        Rubric.objects.filter(slug=slug).order_by("-version").only("version", "status", "published_at")
    )
    return rubric


def rubric_version_of(*, slug: str, scope: Scope, version: int | None = None) -> Rubric | None:
    """The version a command means: the one asked for, else the published one, else the latest (a first draft)."""
    versions = rubrics_in(scope).filter(slug=slug)
    if version is not None:
        return versions.filter(version=version).first()
    return rubric_latest_published(slug=slug, scope=scope) or versions.order_by("-version").first()


@dataclass(frozen=True)
class SettingChange:
    """A setting the version changes (the rubric's audit rate or auto-fail rule, a section's weight, a
    criterion's section or fail value...), before and after."""

    name: str  # as the YAML writes it
    before: object
    after: object


@dataclass(frozen=True)
class CriterionChange:
    key: str
    title: str
    fields: list[str]  # the changed fields' names, as the YAML writes them
    # The changed fields among CRITERION_VALUES, before and after: what a score counts for is read at a glance,
    # where a changed description or exception is only named.
    values: list[SettingChange] = dataclasses.field(default_factory=list)


@dataclass(frozen=True)
class SectionChange:
    key: str
    title: str
    values: list[SettingChange]  # its title and weight, where changed


# The rubric's own settings a diff compares, beside its sections and criteria (the slug never changes between
# versions): its wording, its routing (review threshold, audit, warm-up) and its quality score's policy.
DIFF_SETTINGS = (
    "name", "language", "description", "review_confidence_threshold", "audit_rate", "warm_up_judgments",
    "agreement_target", "agreement_risk", "agreement_tolerance",
    "auto_fail", "not_applicable", "route_auto_fail",
)  # fmt: skip
# A criterion's fields whose values a diff shows (short ones, the quality score's policy among them).
CRITERION_VALUES = ("section", "weight", "critical", "fail_at", "scale_min", "scale_max", "subject")
SECTION_VALUES = ("title", "weight")


@dataclass(frozen=True)
class RubricDiff:
    """What a version changes against the one it follows: its settings, its sections and its criteria, each by key."""

    previous: Rubric | None
    added: list[CriterionSpec]
    removed: list[CriterionSpec]
    changed: list[CriterionChange]
    settings: list[SettingChange] = dataclasses.field(default_factory=list)
    sections_added: list[SectionSpec] = dataclasses.field(default_factory=list)
    sections_removed: list[SectionSpec] = dataclasses.field(default_factory=list)
    sections_changed: list[SectionChange] = dataclasses.field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not (
            self.added or self.removed or self.changed or self.settings
            or self.sections_added or self.sections_removed or self.sections_changed
        )  # fmt: skip


def _changes(before: object, after: object, names: tuple[str, ...]) -> list[SettingChange]:
    """The fields `names` whose value differs between two specs, in that order."""
    return [
        SettingChange(name, getattr(before, name), getattr(after, name))
        for name in names
        if getattr(before, name) != getattr(after, name)
    ]


def rubric_diff(*, rubric: Rubric) -> RubricDiff:
    previous = rubric.previous_version()
    before_spec = rubric_spec_of(previous) if previous is not None else None
    after_spec = rubric_spec_of(rubric)
    if before_spec is None:  # the first version: every criterion is new, and there is nothing to compare
        return RubricDiff(previous=None, added=list(after_spec.criteria), removed=[], changed=[])
    before = {c.key: c for c in before_spec.criteria}
    after = {c.key: c for c in after_spec.criteria}
    changed = []
    for key in after.keys() & before.keys():
        old, new = dataclasses.asdict(before[key]), dataclasses.asdict(after[key])
        if fields := [name for name in new if new[name] != old[name]]:
            values = _changes(before[key], after[key], CRITERION_VALUES)
            changed.append(CriterionChange(key=key, title=after[key].title, fields=fields, values=values))
    order = list(after)
    sections_before = {s.key: s for s in before_spec.sections}
    sections_after = {s.key: s for s in after_spec.sections}
    return RubricDiff(
        previous=previous,
        added=[after[key] for key in order if key not in before],
        removed=[spec for key, spec in before.items() if key not in after],
        changed=sorted(changed, key=lambda change: order.index(change.key)),
        settings=_changes(before_spec, after_spec, DIFF_SETTINGS),
        sections_added=[spec for key, spec in sections_after.items() if key not in sections_before],
        sections_removed=[spec for key, spec in sections_before.items() if key not in sections_after],
        sections_changed=[
            SectionChange(key=key, title=spec.title, values=values)
            for key, spec in sections_after.items()
            if key in sections_before and (values := _changes(sections_before[key], spec, SECTION_VALUES))
        ],
    )


def criterion_title(*, slug: str, key: str) -> str | None:
    """The title a rubric's latest version gives criterion `key` (what a page calls it), None if no version has it."""
    return (
        Criterion.objects.filter(rubric__slug=slug, key=key)
        .order_by("-rubric__version")
        .values_list("title", flat=True)
        .first()
    )


# A version that is no longer a draft never changes (Rubric.save), so its policy is read once per process:
# the judging routes every call by it without a query more.
# Keyed with the creation time too, so a test database that reuses an id never finds another rubric's.
_frozen_policies: dict[tuple, QualityPolicy] = {}


def rubric_quality_policy(rubric: Rubric) -> QualityPolicy:
    """The quality score's policy of a rubric version (rubrics.quality): its sections, criteria and rules."""
    key = (rubric.pk, rubric.created_at)
    if key in _frozen_policies:
        return _frozen_policies[key]
    policy = quality_policy(rubric)
    if not rubric.is_draft:
        _frozen_policies[key] = policy
    return policy
