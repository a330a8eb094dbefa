from __future__ import annotations

from rubrics.models import Rubric


def rubric_latest_published(*, slug: str) -> Rubric | None:
    """The version new recordings are judged with."""
    return Rubric.objects.filter(slug=slug, status=Rubric.Status.PUBLISHED).order_by("-version").first()
