"""Writes for agents' acknowledgements and disputes. The agent pages, the leads' pages and the API all
go through here; the resolution's new review goes through `reviews.services.review_create`, the one
write path of reviews.

Where a dispute's review stands in the human reference (docs/dev/design.md): a calibration session's
agreed value first; else the latest final review, and an upheld dispute's resolution is a final review
(`Review.from_dispute`) made after the review disputed, so it supersedes it. A rejected dispute writes no
review: the review disputed keeps standing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from access import Capability, require
from access.models import Membership, Role
from access.scope import scope_for
from outbox.services import dispute_opened_emit, dispute_resolved_emit
from core.errors import ConflictError, InvalidInputError
from reviews.selectors import agent_recordings
from disputes.notifications import dispute_opened_notify, dispute_resolved_notify
from disputes.selectors import dispute_window_closes, standing_review_of
from disputes.models import Acknowledgement, Dispute, DisputedCriterion
from reviews.models import Review
from reviews.services import (
    CriterionAdjustment,
    criteria_say_what_was_wrong,
    judge_values,
    replaces_model_value,
    review_create,
)


class DisputeWindowClosedError(ConflictError):
    """The review is older than QA_DISPUTE_DAYS."""


class AlreadyDisputedError(ConflictError):
    """A review is disputed once; the lead's resolution is final."""


class NotDisputableError(ConflictError):
    """Not a review that stands: not final, superseded by a later one, or itself a dispute's resolution."""


class DisputeClosedError(ConflictError):
    """The dispute was resolved already."""


@dataclass(frozen=True)
class DisputedValue:
    """What the agent thinks is right for one criterion, and why."""

    criterion_key: str
    value: int | None = None
    not_applicable: bool = False
    reason: str = ""


@dataclass(frozen=True)
class CriterionResolution:
    """The lead's word on one disputed criterion: upheld (the agent's value, unless the lead gives `value` or
    `not_applicable`) or rejected, with a comment."""

    criterion_key: str
    outcome: str
    comment: str = ""
    value: int | None = None
    not_applicable: bool = False


def _check_own(*, review: Review, user: AbstractBaseUser) -> None:
    require(user, Capability.DISPUTE, _("Only an agent may acknowledge or dispute a review of their call."))
    if not agent_recordings(user).filter(pk=review.recording_id).exists():
        raise PermissionDenied(_("This review is not of one of your calls."))


@transaction.atomic
def review_acknowledge(*, review: Review, user: AbstractBaseUser, comment: str = "") -> Acknowledgement:
    """The agent's "I have read it" on the final review that stands for their call; again is a no-op."""
    _check_own(review=review, user=user)
    if not review.is_final:
        raise NotDisputableError(_("Only a final review is acknowledged."))
    found = Acknowledgement.objects.filter(review=review).first()
    if found is not None:
        return found
    return Acknowledgement.objects.create(review=review, user=user, comment=comment.strip())


@transaction.atomic
def dispute_open(
    *, review: Review, user: AbstractBaseUser, criteria: list[DisputedValue] | tuple[DisputedValue, ...]
) -> Dispute:
    """Dispute criteria of the final review that stands for one of the agent's calls, within QA_DISPUTE_DAYS.

    PermissionDenied for someone else's call; ConflictError subclasses when out of time, already
    disputed, or not the review that stands; InvalidInputError (keyed `criteria`, then by criterion key)
    for a missing reason, an unknown criterion, a value off the scale, or the value the review already gives.
    """
    _check_own(review=review, user=user)
    # One dispute at a time per call: two requests at once are serialized on the review's row.
    # Only the review row is locked (`of`): the default manager's outer join to its void cannot be.
    review = Review.objects.select_for_update(of=("self",)).select_related("run__rubric", "recording").get(pk=review.pk)
    if Dispute.objects.filter(review=review).exists():
        raise AlreadyDisputedError(_("This review has been disputed already; its resolution is final."))
    if review.from_dispute:
        raise NotDisputableError(_("This review is a QA lead's resolution of a dispute: it is final."))
    standing = standing_review_of(review.recording)
    if not review.is_final or standing is None or standing.pk != review.pk:
        raise NotDisputableError(_("Only the call's latest final review can be disputed."))
    closes = dispute_window_closes(review)
    if timezone.now() > closes:
        raise DisputeWindowClosedError(
            _("The time to dispute this review ended on %(date)s (%(days)s days after it).")
            % {"date": formats.date_format(timezone.localtime(closes), "SHORT_DATETIME_FORMAT"),
               "days": settings.QA_DISPUTE_DAYS},
            closed_at=closes.isoformat(),
        )  # fmt: skip
    criteria_by_key = {c.key: c for c in review.run.rubric.criteria.prefetch_related("exceptions")}
    current = review.human_values or {}
    not_applicable_now = {entry.criterion.key for entry in review.criteria.select_related("criterion") if entry.not_applicable}
    errors: dict[str, str] = {}
    if not criteria:
        raise InvalidInputError({"criteria": _("Dispute at least one criterion, with the value you think is right and why.")})
    for item in criteria:
        criterion = criteria_by_key.get(item.criterion_key)
        if criterion is None:
            errors[item.criterion_key] = _("Unknown criterion '%(key)s' for this rubric.") % {"key": item.criterion_key}
        elif item.criterion_key in errors or sum(1 for other in criteria if other.criterion_key == item.criterion_key) > 1:
            errors[item.criterion_key] = _("“%(title)s” appears twice.") % {"title": criterion.title}
        elif not item.reason.strip():
            errors[item.criterion_key] = _("Say why “%(title)s” should be different: a reason is required.") % {
                "title": criterion.title
            }
        elif item.not_applicable and item.value is not None:
            errors[item.criterion_key] = _("“%(title)s” has a value and is marked not applicable: choose one.") % {
                "title": criterion.title
            }
        elif item.not_applicable and not criterion.allows_not_applicable():
            errors[item.criterion_key] = _(
                "“%(title)s” cannot be marked not applicable: its rubric lists no \"not applicable\" exception."
            ) % {"title": criterion.title}
        elif not item.not_applicable and (item.value is None or not criterion.in_scale(item.value)):
            errors[item.criterion_key] = _("Give “%(title)s” a value between %(low)s and %(high)s, or N/A.") % {
                "title": criterion.title, "low": criterion.scale_min, "high": criterion.scale_max,
            }  # fmt: skip
        elif (item.not_applicable and criterion.key in not_applicable_now) or (
            not item.not_applicable and current.get(criterion.key) == item.value
        ):
            errors[item.criterion_key] = _("The review already gives “%(title)s” that value.") % {"title": criterion.title}
    if errors:
        raise InvalidInputError({"criteria": errors})
    try:
        with transaction.atomic():
            dispute = Dispute.objects.create(
                review=review,
                recording=review.recording,
                agent_id=review.recording.agent_id,
                opened_by=user,
                assigned_to=_lead_for(review),
                due_at=timezone.now() + timedelta(days=settings.QA_DISPUTE_RESOLVE_DAYS),
            )
    except IntegrityError:  # a second request that waited on the lock's other side
        raise AlreadyDisputedError(_("This review has been disputed already; its resolution is final.")) from None
    DisputedCriterion.objects.bulk_create(
        DisputedCriterion(
            dispute=dispute,
            criterion=criteria_by_key[item.criterion_key],
            proposed_value=None if item.not_applicable else item.value,
            proposed_not_applicable=item.not_applicable,
            reason=item.reason.strip(),
        )
        for item in criteria
    )
    dispute_opened_emit(
        dispute_id=dispute.pk, recording_id=review.recording_id, workspace_id=review.recording.workspace_id
    )
    dispute_opened_notify(dispute=dispute)
    return dispute


def _lead_for(review: Review) -> AbstractBaseUser | None:
    """QA_DISPUTE_ROUTING "reviewer_lead": a QA lead sharing a team with the reviewer in a workspace of
    theirs (the first by username); else, and by default ("qa_leads"), None: any QA lead."""
    if settings.QA_DISPUTE_ROUTING != "reviewer_lead" or review.user_id is None:
        return None
    teams = Membership.objects.filter(user_id=review.user_id).values("teams")
    lead = (
        Membership.objects.filter(
            role__in=[Role.QA_LEAD, Role.ADMIN], teams__in=teams, workspace_id=review.recording.workspace_id
        )
        .exclude(user_id=review.user_id)
        .select_related("user")
        .order_by("user__username")
        .first()
    )
    return lead.user if lead is not None else None


@transaction.atomic
def dispute_resolve(
    *,
    dispute: Dispute,
    user: AbstractBaseUser,
    resolutions: list[CriterionResolution] | tuple[CriterionResolution, ...],
    comment: str = "",
) -> Dispute:
    """A QA lead's word on every disputed criterion. Upheld ones become a new final review by the lead
    (`from_dispute`, superseding the review disputed: the review's other criteria copied as they were,
    each upheld one with the value that now stands and the lead's comment); with none upheld, no review.

    ConflictError when resolved already, or, with an upheld criterion, when a later review or a new
    judgment of the call came since (the review disputed no longer stands); InvalidInputError (keyed
    `criteria`, then by criterion key) for a criterion left undecided or without a comment.
    """
    require(user, Capability.RESOLVE_DISPUTES, _("Only a QA lead may resolve disputes."))
    dispute = Dispute.objects.select_for_update().select_related("recording").get(pk=dispute.pk)
    if not scope_for(user).may(Capability.RESOLVE_DISPUTES, dispute.recording.workspace_id):
        raise PermissionDenied(_("Only a QA lead of this call's workspace may resolve its dispute."))
    if dispute.status != Dispute.Status.OPEN:
        raise DisputeClosedError(_("This dispute was resolved already."))
    disputed = {
        entry.criterion.key: entry
        for entry in dispute.criteria.select_related("criterion").prefetch_related("criterion__exceptions")
    }
    given = {item.criterion_key: item for item in resolutions}
    errors: dict[str, str] = {}
    for key in given.keys() - disputed.keys():
        errors[key] = _("“%(key)s” is not disputed here.") % {"key": key}
    for key, entry in disputed.items():
        item = given.get(key)
        title = entry.criterion.title
        upholding = item is not None and item.outcome == DisputedCriterion.Outcome.UPHELD
        if item is None or item.outcome not in (DisputedCriterion.Outcome.UPHELD, DisputedCriterion.Outcome.REJECTED):
            errors[key] = _("Uphold or reject “%(title)s”.") % {"title": title}
        elif not item.comment.strip():
            errors[key] = _("Say why you decided so on “%(title)s”: a comment is required.") % {"title": title}
        elif upholding and item.not_applicable and item.value is not None:
            errors[key] = _("“%(title)s” has a value and is marked not applicable: choose one.") % {"title": title}
        elif upholding and item.not_applicable and not entry.criterion.allows_not_applicable():
            errors[key] = _(
                "“%(title)s” cannot be marked not applicable: its rubric lists no \"not applicable\" exception."
            ) % {"title": title}
        elif upholding and item.value is not None and not entry.criterion.in_scale(item.value):
            errors[key] = _("“%(title)s” must be between %(low)s and %(high)s.") % {
                "title": title, "low": entry.criterion.scale_min, "high": entry.criterion.scale_max,
            }  # fmt: skip
    if errors:
        raise InvalidInputError({"criteria": errors})
    upheld = {key: item for key, item in given.items() if item.outcome == DisputedCriterion.Outcome.UPHELD}
    resolution = None
    if upheld:
        resolution = _resolution_review(dispute=dispute, user=user, upheld=upheld, disputed=disputed, comment=comment)
    for key, entry in disputed.items():
        item = given[key]
        entry.outcome = item.outcome
        entry.lead_comment = item.comment.strip()
        if key in upheld:
            own = item.value is not None or item.not_applicable
            entry.resolved_not_applicable = item.not_applicable if own else entry.proposed_not_applicable
            entry.resolved_value = item.value if own else entry.proposed_value
    DisputedCriterion.objects.bulk_update(
        disputed.values(), ["outcome", "lead_comment", "resolved_value", "resolved_not_applicable"]
    )
    dispute.status = Dispute.Status.RESOLVED
    dispute.resolved_at = timezone.now()
    dispute.resolved_by = user
    dispute.resolution = resolution
    dispute.comment = comment.strip()
    dispute.save(update_fields=["status", "resolved_at", "resolved_by", "resolution", "comment"])
    dispute_resolved_emit(
        dispute_id=dispute.pk, recording_id=dispute.recording_id, workspace_id=dispute.recording.workspace_id
    )
    dispute_resolved_notify(dispute=dispute)
    return dispute


def _resolution_review(
    *,
    dispute: Dispute,
    user: AbstractBaseUser,
    upheld: dict[str, CriterionResolution],
    disputed: dict[str, DisputedCriterion],
    comment: str,
) -> Review:
    base = Review.objects.select_related("recording").get(pk=dispute.review_id)
    standing = standing_review_of(base.recording)
    latest = base.recording.reviews.order_by("-created_at", "-id").first()
    if standing is None or standing.pk != base.pk or latest.pk != base.pk:
        raise NotDisputableError(
            _("A later review of this call came after the review disputed: it no longer stands, so upholding "
              "cannot change it. Reject the criteria, or ask for the later review to be disputed.")
        )  # fmt: skip
    if base.recording.current_run_id != base.run_id:
        raise NotDisputableError(
            _("The call was judged again after the review disputed: upholding cannot change a review of an "
              "earlier judgment. Reject the criteria, or review the new judgment.")
        )  # fmt: skip
    entries = {entry.criterion.key: entry for entry in base.criteria.select_related("criterion")}
    model_values = judge_values(base.recording)
    adjustments = []
    for key in sorted({*entries, *upheld}):
        entry = entries.get(key)
        if key in upheld:
            item = upheld[key]
            own = item.value is not None or item.not_applicable
            not_applicable = item.not_applicable if own else disputed[key].proposed_not_applicable
            value = item.value if own else disputed[key].proposed_value
            upheld_entry = CriterionAdjustment(
                criterion_key=key,
                adjusted_value=None if not_applicable else value,
                not_applicable=not_applicable,
                comment=item.comment.strip(),
            )
            # "The judge got it wrong" stands only while the value upheld still differs from the judge's.
            if entry and entry.rejected and replaces_model_value(upheld_entry, model_values.get(key)):
                upheld_entry = replace(upheld_entry, rejected=True)
            adjustments.append(upheld_entry)
        else:
            adjustments.append(
                CriterionAdjustment(
                    criterion_key=key,
                    adjusted_value=entry.adjusted_value,
                    not_applicable=entry.not_applicable,
                    comment=entry.comment,
                    rejected=entry.rejected,
                )
            )
    # The decision follows from the values: a reject stays one only while its values still say what the
    # judge got wrong; upholding the judge's own value leaves nothing wrong, so the resolution approves.
    rejects = base.decision == Review.Decision.REJECT and criteria_say_what_was_wrong(
        criteria=adjustments, model_values=model_values
    )
    return review_create(
        recording=base.recording,
        decision=Review.Decision.REJECT if rejects else Review.Decision.APPROVE,
        reviewer=user.get_username(),
        user=user,
        comment=comment.strip() or _("Resolution of dispute %(id)s.") % {"id": dispute.pk},
        criteria=adjustments,
        reject_reason=base.reject_reason if rejects else "",
        replace_final=True,
        from_dispute=True,
    )


@transaction.atomic
def dispute_outcome_seen(*, dispute: Dispute, user: AbstractBaseUser) -> None:
    """The agent opened the outcome: it leaves their top bar's count."""
    if dispute.status == Dispute.Status.RESOLVED and dispute.outcome_seen_at is None and dispute.opened_by_id == user.pk:
        Dispute.objects.filter(pk=dispute.pk, outcome_seen_at__isnull=True).update(outcome_seen_at=timezone.now())
