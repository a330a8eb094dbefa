"""Reads for rubrics: the version new recordings are judged with, the catalogue, and what a version changed."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from access.scope import Scope
from rubrics.models import Criterion, Rubric
from rubrics.rubric_file import CriterionSpec, rubric_spec_of


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
        Prefetch("criteria", queryset=Criterion.objects.prefetch_related("exceptions"))
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
class CriterionChange:
    key: str
    title: str
    fields: list[str]  # the changed fields' names, as the YAML writes them


@dataclass(frozen=True)
class RubricDiff:
    """What a version changes against the one it follows, criterion by criterion key."""

    previous: Rubric | None
    added: list[CriterionSpec]
    removed: list[CriterionSpec]
    changed: list[CriterionChange]

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def rubric_diff(*, rubric: Rubric) -> RubricDiff:
    previous = rubric.previous_version()
    before = {c.key: c for c in rubric_spec_of(previous).criteria} if previous is not None else {}
    after = {c.key: c for c in rubric_spec_of(rubric).criteria}
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
    )
