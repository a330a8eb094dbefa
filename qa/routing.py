"""Which judged recordings a supervisor must see, and why.

A recording goes to review when any stored confidence is below the rubric's
threshold (every unverified quote has confidence 0, so it always does), and a
random audit takes the rubric's share of the others. The audit draw is a hash
of the recording's identity and the rubric version: anyone can recompute it,
re-judging does not redraw it, and over many recordings its rate converges to
the configured one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from django.utils import timezone

from qa.models import Recording, Score
from rubrics.models import Rubric

Reason = Recording.ReviewReason


def audit_draw(*, source: str, external_id: str, rubric_slug: str, rubric_version: int) -> float:
    """A reproducible uniform number in [0, 1) for this recording and rubric version."""
    identity = f"{source}\x1f{external_id}\x1f{rubric_slug}\x1f{rubric_version}"
    return int.from_bytes(hashlib.sha256(identity.encode()).digest()[:8], "big") / 2**64


def audit_selected(*, recording: Recording, rubric: Rubric) -> bool:
    draw = audit_draw(
        source=recording.source,
        external_id=recording.external_id,
        rubric_slug=rubric.slug,
        rubric_version=rubric.version,
    )
    return draw < rubric.audit_rate


def review_reasons(*, recording: Recording, rubric: Rubric, scores: Sequence[Score]) -> list[str]:
    """The reasons to review, in a stable order; empty when the recording need not be seen."""
    reasons = []
    if any(not score.evidence_verified for score in scores):
        reasons.append(Reason.UNVERIFIED_EVIDENCE.value)
    if any(score.evidence_verified and score.confidence < rubric.review_confidence_threshold for score in scores):
        reasons.append(Reason.LOW_CONFIDENCE.value)
    if not reasons and audit_selected(recording=recording, rubric=rubric):
        reasons.append(Reason.RANDOM_AUDIT.value)
    return reasons


def routing_fields(*, recording: Recording, rubric: Rubric, scores: Sequence[Score]) -> dict[str, object]:
    """The recording's fields that routing sets, ready for an UPDATE."""
    reasons = review_reasons(recording=recording, rubric=rubric, scores=scores)
    status = Recording.Status.IN_REVIEW if reasons else Recording.Status.JUDGED
    return {
        "needs_review": bool(reasons),
        "review_reasons": reasons,
        "status": status,
        "lowest_confidence": min((score.confidence for score in scores), default=None),
    }


def recording_route(*, recording: Recording, rubric: Rubric, scores: Sequence[Score]) -> bool:
    """Route a judged recording again from its current scores; return whether it was.

    A recording a supervisor already reviewed, or one being judged again, is
    left as it is.
    """
    fields = routing_fields(recording=recording, rubric=rubric, scores=scores)
    routable = Recording.objects.filter(
        pk=recording.pk, status__in=[Recording.Status.JUDGED, Recording.Status.IN_REVIEW]
    )
    return bool(routable.update(**fields, updated_at=timezone.now()))
