"""Writes for self-reviews: the agent's blind values for one of their calls, or their choice to skip. Nothing here
writes a review: the values are counted apart (insights.selfreview.selectors), never as a human reference."""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from core.errors import ConflictError, InvalidInputError
from insights.selfreview.models import SelfReview, SelfReviewValue
from insights.selfreview.selectors import self_review_offered
from qa.models import Recording
from reviews.selectors import agent_recordings

NOT_APPLICABLE = "na"


class AlreadySeenError(ConflictError):
    """The agent has seen the call's values (or self-reviewed it already): a self-review would not be blind."""


def _check(recording: Recording, user: AbstractBaseUser) -> None:
    if not agent_recordings(user).filter(pk=recording.pk, current_run__isnull=False).exists():
        raise PermissionDenied(_("You may self-review only your own judged calls."))
    if not self_review_offered(recording=recording, user=user):
        raise AlreadySeenError(_("You have already seen this call's values or scored it yourself: a self-review is given once, blind."))


@transaction.atomic
def self_review_submit(*, recording: Recording, user: AbstractBaseUser, values: Mapping[str, int | str]) -> SelfReview:
    """The agent's value for every criterion of the call's rubric (`values`: criterion key -> a number on its scale,
    or NOT_APPLICABLE where the rubric lets it not apply). InvalidInputError keyed by criterion for bad input."""
    _check(recording, user)
    criteria = list(recording.rubric.criteria.prefetch_related("exceptions").order_by("order", "pk"))
    errors: dict[str, str] = {}
    rows = []
    unknown = sorted(set(values) - {criterion.key for criterion in criteria})
    if unknown:
        errors["values"] = _("Unknown criteria for this call's rubric: %(keys)s.") % {"keys": ", ".join(unknown)}
    for criterion in criteria:
        given = values.get(criterion.key)
        if given is None or given == "":
            errors[criterion.key] = _("Give your value for this criterion.")
        elif given == NOT_APPLICABLE:
            if criterion.allows_not_applicable():
                rows.append(SelfReviewValue(criterion=criterion, value=None, not_applicable=True))
            else:
                errors[criterion.key] = _("This criterion always applies: give a value.")
        elif isinstance(given, int) and not isinstance(given, bool) and criterion.in_scale(given):
            rows.append(SelfReviewValue(criterion=criterion, value=given))
        else:
            errors[criterion.key] = _("Give a value from %(low)s to %(high)s.") % {"low": criterion.scale_min, "high": criterion.scale_max}
    if errors:
        raise InvalidInputError(errors)
    try:
        with transaction.atomic():
            review = SelfReview.objects.create(recording=recording, user=user, agent_id=recording.agent_id)
    except IntegrityError:  # another request of theirs self-reviewed or skipped it first
        raise AlreadySeenError(_("You have already scored this call yourself.")) from None
    for row in rows:
        row.self_review = review
    SelfReviewValue.objects.bulk_create(rows)
    return review


@transaction.atomic
def self_review_skip(*, recording: Recording, user: AbstractBaseUser) -> SelfReview:
    """The agent sees the values without scoring first; once done, the call is no longer offered blind."""
    if not agent_recordings(user).filter(pk=recording.pk, current_run__isnull=False).exists():
        raise PermissionDenied(_("You may self-review only your own judged calls."))
    review, _created = SelfReview.objects.get_or_create(
        recording=recording, user=user, defaults={"agent_id": recording.agent_id, "skipped": True}
    )
    return review
