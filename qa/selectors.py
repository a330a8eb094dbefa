"""Reads for recordings, shaped so that the number of queries per request does
not grow with the rows returned."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Prefetch, QuerySet

from qa.judging import ACTIVE
from qa.models import JudgeRun, Recording, Score


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


def recording_details() -> QuerySet[Recording]:
    """Recordings with their latest run (as `latest_runs`, at most one) and the scores
    of their current run, in four queries; the reviews layer adds the reviews."""
    latest_runs = Prefetch(
        "runs", queryset=JudgeRun.objects.defer("raw_output").order_by("-created_at", "-id")[:1], to_attr="latest_runs"
    )
    scores = Prefetch("current_run__scores", queryset=Score.objects.select_related("criterion"))
    return (
        Recording.objects.select_related("rubric", "current_run")
        .defer("current_run__raw_output")
        .prefetch_related(latest_runs, scores)
    )


def recording_active_run(*, recording: Recording) -> JudgeRun | None:
    return JudgeRun.objects.filter(recording=recording, status__in=ACTIVE).first()
