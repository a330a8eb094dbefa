"""Small display helpers for the review templates."""

from __future__ import annotations

import time

from django import template
from django.utils.translation import gettext_lazy as _

from qa.models import Recording
from qa.recorded import model_label
from reviews.claims import claim_is_active
from reviews.figures.formatting import number
from reviews.models import ReviewClaim
from reviews.selectors import is_blind_audit
from reviews.services import UNDO_SESSION_KEY

register = template.Library()

VERIFICATION_LABELS = {
    "verified": _("verified"),
    "empty": _("no quote given"),
    "too_short": _("quote too short to locate"),
    "wrong_subject": _("not the words of the person this criterion judges"),
    "wrong_speaker": _("said by another speaker"),
    "out_of_order": _("fragments out of order"),
    "partial": _("only partly found"),
    "paraphrase": _("paraphrased, not literal"),
    "not_found": _("not found in the transcript"),
    "bad_reference": _("cites a turn the transcript does not have"),
    "wrong_turn": _("words of another turn than the one cited"),
}


@register.filter
def clock(milliseconds: int | None) -> str:
    """A turn's timestamp as m:ss (h:mm:ss past an hour)."""
    if milliseconds is None:
        return ""
    minutes, seconds = divmod(int(milliseconds) // 1000, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


@register.filter
def figure(value: float | None, places: int = 1) -> str:
    """A figure as the charts draw it (`reviews.figures.formatting.number`): the same rounding and decimal
    mark, so a tile and its chart never show one figure two ways (floatformat rounds 81.25 up, the charts
    to even)."""
    return number(value, int(places))


@register.filter
def model_name(model: str | None) -> str:
    """A run's model in the page's language (a recorded judge's words and date: `qa.recorded.model_label`)."""
    return model_label(model or "")


@register.filter
def percent(fraction: float) -> int:
    """0.734 -> 73: confidences and similarities are read as whole percentages."""
    return round(fraction * 100)


@register.filter
def blind_audit(recording: Recording) -> bool:
    return is_blind_audit(recording)


@register.filter
def active_claim(recording: Recording) -> ReviewClaim | None:
    """The recording's claim if it is still running (the queue selects it along with the row)."""
    try:
        claim = recording.claim
    except ReviewClaim.DoesNotExist:
        return None
    return claim if claim_is_active(claim) else None


@register.filter
def item(mapping: dict, key: str):
    return mapping.get(key)


@register.filter
def tint(number: int | None) -> str:
    """The highlight colour class of the criterion numbered `number`: six colours, then they repeat."""
    return "" if not number else f"tint-{(number - 1) % 6 + 1}"


@register.filter
def reason_label(reason: str) -> str:
    return Recording.ReviewReason(reason).label if reason in Recording.ReviewReason.values else reason


@register.simple_tag
def unverified_mark() -> str:
    """The mark of a score whose quote was not verified, on a page: in the page's language. The bilingual
    qa.models.UNVERIFIED_MARK stays for what leaves the page (CSV, exports), but on a page it was a badge
    in two languages that wrapped every criterion's title to three or four lines."""
    return _("NOT VERIFIED")


@register.filter
def verification_label(status: str) -> str:
    return VERIFICATION_LABELS.get(status, status)


@register.filter
def quote_split(figures) -> list[tuple[str, object]]:
    """A criterion's figures' verified and unverified parts that have pairs, labelled for a sub-row."""
    parts = ((_("verified quotes"), figures.verified), (_("unverified quotes"), figures.unverified))
    return [(label, part) for label, part in parts if part.n]


@register.inclusion_tag("review/_undo_toast.html", takes_context=True)
def undo_toast(context: template.Context) -> dict:
    """The toast offering to undo the review just submitted, while its seconds last (reviews.views.undo)."""
    request = context.get("request")
    stored = request.session.get(UNDO_SESSION_KEY) if request is not None else None
    left = stored["until"] - time.time() if stored else 0
    if left <= 0:
        return {"undo": None}
    return {"undo": {"review": stored["review"], "left": int(left + 0.999)}, "csrf_token": context.get("csrf_token")}
