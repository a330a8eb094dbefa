"""What the review and calibration pages' audio player needs: the audio's address, the turns' times, and each
verified quote's time span."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

register = template.Library()


@register.simple_tag
def player_data(page: Any) -> dict[str, Any] | None:
    """None when the call has no audio. A quote has a span only when it is verified (and the page is
    not blind): an unverified quote's characters were not found, so there is nothing to play."""
    recording = page.recording
    if not recording.audio:
        return None
    quotes = {}
    for view in [] if page.blind else page.criteria:  # blind: no quote (a calibration's criteria have no score)
        score = view.score
        if score is None or not score.evidence:
            continue
        if not score.evidence_verified:
            quotes[view.criterion.key] = None
        elif span := recording.quote_time_span(score.verification_spans):
            quotes[view.criterion.key] = list(span)
    return {
        "src": reverse("review-audio", args=[recording.pk]),
        "turns": [
            {"index": turn.index, "start_ms": turn.start_ms, "end_ms": turn.end_ms}
            for turn in page.turns
            if turn.start_ms is not None and turn.end_ms is not None
        ],
        "quotes": quotes,
    }
