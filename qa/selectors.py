"""Reads for recordings and the rubric catalogue, shaped so that the number of
queries per request does not grow with the rows returned."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, Prefetch, QuerySet

from qa.judging import ACTIVE
from qa.models import JudgeRun, Recording, Score
from reviews.models import CriterionReview, Review
from rubrics.models import Criterion, Rubric


@dataclass(frozen=True)
class RecordingFilters:
    status: str | None = None
    rubric: str | None = None  # slug, any version
    agent: str | None = None  # agent id
    team: str | None = None
    needs_review: bool | None = None
    source: str | None = None
    external_id: str | None = None
    occurred_after: datetime | None = None  # inclusive
    occurred_before: datetime | None = None  # exclusive


# Each filter's field lookup; a filter left empty is not applied.
RECORDING_FILTER_LOOKUPS = {
    "status": "status",
    "rubric": "rubric__slug",
    "agent": "agent_id",
    "team": "team",
    "needs_review": "needs_review",
    "source": "source",
    "external_id": "external_id",
    "occurred_after": "occurred_at__gte",
    "occurred_before": "occurred_at__lt",
}


def recording_list(*, filters: RecordingFilters) -> QuerySet[Recording]:
    conditions = {
        lookup: getattr(filters, name)
        for name, lookup in RECORDING_FILTER_LOOKUPS.items()
        if getattr(filters, name) not in (None, "")
    }
    return Recording.objects.select_related("rubric").defer("transcript", "turns").filter(**conditions)


def recording_detail(*, pk: int) -> Recording:
    """A recording with its latest run (as `latest_runs`, at most one), the
    scores of its current run, and its reviews, in five queries.

    Raises Recording.DoesNotExist.
    """
    latest_runs = Prefetch(
        "runs", queryset=JudgeRun.objects.defer("raw_output").order_by("-created_at", "-id")[:1], to_attr="latest_runs"
    )
    scores = Prefetch("current_run__scores", queryset=Score.objects.select_related("criterion"))
    return (
        Recording.objects.select_related("rubric", "current_run")
        .defer("current_run__raw_output")
        .prefetch_related(latest_runs, scores, Prefetch("reviews", queryset=_reviews()))
        .get(pk=pk)
    )


def review_detail(*, pk: int) -> Review:
    return _reviews().get(pk=pk)


def _reviews() -> QuerySet[Review]:
    return Review.objects.select_related("api_key").prefetch_related(
        Prefetch("criteria", queryset=CriterionReview.objects.select_related("criterion"))
    )


def recording_active_run(*, recording: Recording) -> JudgeRun | None:
    return JudgeRun.objects.filter(recording=recording, status__in=ACTIVE).first()


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
