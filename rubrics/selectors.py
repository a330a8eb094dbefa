"""Reads for rubrics: the version new recordings are judged with, the catalogue, and what a version changed."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from rubrics.models import Criterion, Rubric
from rubrics.quality import QualityPolicy, quality_policy
from rubrics.rubric_file import CriterionSpec, rubric_spec_of


def rubric_latest_published(*, slug: str) -> Rubric | None:
    """The version new recordings are judged with."""
    return Rubric.objects.filter(slug=slug, status=Rubric.Status.PUBLISHED).order_by("-version").first()


def rubric_list_current() -> QuerySet[Rubric]:
    """The latest published version of each rubric: the one new recordings are judged with."""
    newer = Rubric.objects.filter(
        slug=OuterRef("slug"), status=Rubric.Status.PUBLISHED, version__gt=OuterRef("version")
    )
    return Rubric.objects.filter(status=Rubric.Status.PUBLISHED).exclude(Exists(newer)).order_by("slug")


def rubric_detail(*, slug: str, version: int | None = None) -> Rubric:
    """One version of a rubric (by default the latest published) with its criteria
    and their exceptions, and every version of its slug as `all_versions`.

    Raises Rubric.DoesNotExist.
    """
    rubrics = Rubric.objects.filter(slug=slug).prefetch_related(
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


def rubric_version_of(*, slug: str, version: int | None = None) -> Rubric | None:
    """The version a command means: the one asked for, else the published one, else the latest (a first draft)."""
    versions = Rubric.objects.filter(slug=slug)
    if version is not None:
        return versions.filter(version=version).first()
    return rubric_latest_published(slug=slug) or versions.order_by("-version").first()


@dataclass(frozen=True)
class CriterionChange:
    key: str
    title: str
    fields: list[str]  # the changed fields' names, as the YAML writes them


@dataclass(frozen=True)
class SettingChange:
    """A rubric-wide setting the version changes (its audit rate, warm-up, review threshold...)."""

    name: str  # as the YAML writes it
    before: object
    after: object


# The rubric's own settings a diff compares, beside its criteria (the slug never changes between versions).
DIFF_SETTINGS = ("name", "language", "description", "review_confidence_threshold", "audit_rate", "warm_up_judgments")


@dataclass(frozen=True)
class RubricDiff:
    """What a version changes against the one it follows: its settings, and criterion by criterion key."""

    previous: Rubric | None
    added: list[CriterionSpec]
    removed: list[CriterionSpec]
    changed: list[CriterionChange]
    settings: list[SettingChange] = dataclasses.field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.settings)


def rubric_diff(*, rubric: Rubric) -> RubricDiff:
    previous = rubric.previous_version()
    before_spec = rubric_spec_of(previous) if previous is not None else None
    after_spec = rubric_spec_of(rubric)
    before = {c.key: c for c in before_spec.criteria} if before_spec is not None else {}
    after = {c.key: c for c in after_spec.criteria}
    settings = [
        SettingChange(name, getattr(before_spec, name), getattr(after_spec, name))
        for name in DIFF_SETTINGS
        if before_spec is not None and getattr(before_spec, name) != getattr(after_spec, name)
    ]
    changed = []
    for key in after.keys() & before.keys():
        old, new = dataclasses.asdict(before[key]), dataclasses.asdict(after[key])
        if fields := [name for name in new if new[name] != old[name]]:
            changed.append(CriterionChange(key=key, title=after[key].title, fields=fields))
    order = list(after)
    return RubricDiff(
        previous=previous,
        added=[after[key] for key in order if key not in before],
        removed=[spec for key, spec in before.items() if key not in after],
        changed=sorted(changed, key=lambda change: order.index(change.key)),
        settings=settings,
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
