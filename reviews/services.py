"""Writes for reviews. The review page, the API and the admin all go through here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from access import Capability, may
from access.scope import scope_for
from outbox.services import review_created_emit
from core.errors import ConflictError, InvalidInputError
from access.models import ApiKey
from qa.models import Recording
from qa.services import UPDATE_BATCH
from reviews.claims import claim_holder
from reviews.models import Assignment, CriterionReview, Review, ReviewClaim, ReviewVoid
from reviews.reference import review_values
from reviews.selectors import recording_is_blind_for
from rubrics.models import Criterion

REVIEWABLE_STATUSES = (Recording.Status.JUDGED, Recording.Status.IN_REVIEW, Recording.Status.REVIEWED)
# How long the page offers Undo after a submit; the service allows a few seconds more, for the round trip
# of a click made as the toast closes.
UNDO_SECONDS = 10
UNDO_GRACE_SECONDS = 5
# Where the page keeps the review just submitted, for the toast's Undo (the views write it, a template tag reads it).
UNDO_SESSION_KEY = "review_undo"


class RecordingNotJudgedError(ConflictError):
    """A review can only be given on a recording that has a judgment to review."""


class FinalReviewLockedError(ConflictError):
    """The call already has a final review: only an explicit new review (`replace_final`) replaces it,
    so a stray click, key or retried request never supersedes a finished call."""


class RecordingClaimedError(ConflictError):
    """Another supervisor holds the call's claim: their review would be thrown away by this one."""


def may_review(
    *, user: AbstractBaseUser | None = None, api_key: ApiKey | None = None, recording: Recording | None = None
) -> bool:
    """Who may give a review: a person allowed to review (the Supervisors group), or a key made with
    review rights; of `recording`, only with that right in its workspace and the call in their scope
    (a QA lead elsewhere who supervises other teams here reviews only theirs). The page, the API and
    the service all ask here."""
    if api_key is not None:
        return api_key.can_review and (recording is None or recording.workspace_id == api_key.workspace_id)
    if not may(user, Capability.REVIEW):
        return False
    if recording is None:
        return True
    scope = scope_for(user)
    return scope.may(Capability.REVIEW, recording.workspace_id) and scope.contains_recording(recording)


@dataclass(frozen=True)
class CriterionAdjustment:
    criterion_key: str
    adjusted_value: int | None = None
    comment: str = ""
    rejected: bool = False
    not_applicable: bool = False  # the criterion does not apply to the call; then no adjusted_value


@transaction.atomic
def review_create(
    *,
    recording: Recording,
    decision: str,
    reviewer: str,
    user: AbstractBaseUser | None = None,
    api_key: ApiKey | None = None,
    adjusted_mean: float | None = None,
    comment: str = "",
    criteria: list[CriterionAdjustment] | tuple[CriterionAdjustment, ...] = (),
    blind: bool = False,
    reject_reason: str = "",
    replace_final: bool = False,
    from_dispute: bool = False,
) -> Review:
    """Record a supervisor's decision on the recording's current judgment.

    The rules every caller (page, API, admin, scripts) shares live here: who may
    review (PermissionDenied), a call whose latest review is final is replaced
    only with `replace_final` (FinalReviewLockedError), a call another
    supervisor holds is theirs (RecordingClaimedError), and an approve cannot
    carry a judge's value that does not exist (an unverified quote).
    Raises InvalidInputError (keyed by field, with one entry per bad criterion)
    before anything is written, so a rejected review leaves no trace.
    `user` and `api_key` both None: a trusted caller of the code (a command).
    `from_dispute`: a QA lead's resolution of an agent's dispute (disputes.services.dispute_resolve),
    final like any approve or reject, so the human reference reads it in place of the review disputed.
    """
    # Lock the row: two reviews of one recording are serialized, never interleaved.
    recording = Recording.objects.select_for_update().get(pk=recording.pk)
    if (user is not None or api_key is not None) and not may_review(user=user, api_key=api_key, recording=recording):
        raise PermissionDenied(_("You may not review calls."))
    if recording.status not in REVIEWABLE_STATUSES or recording.current_run_id is None:
        raise RecordingNotJudgedError(
            _("Recording %(id)s is %(status)s: only a judged recording can be reviewed.")
            % {"id": recording.pk, "status": recording.status}
        )
    _check_claim(recording=recording, user=user)
    latest = recording.reviews.order_by("-created_at", "-id").first()
    if latest is not None and latest.is_final and not replace_final:
        raise FinalReviewLockedError(
            _(
                "Recording %(id)s already has a final review (%(decision)s by %(reviewer)s); "
                "start a new review to replace it."
            )
            % {"id": recording.pk, "decision": latest.get_decision_display(), "reviewer": latest.reviewer}
        )
    # A supervisor who has not seen the judge's values gives their own: the call is blind for them.
    # External systems (keys) read everything, so nothing is blind for them.
    blind = blind or (user is not None and recording_is_blind_for(recording=recording, user=user))
    errors: dict = {}
    if decision not in Review.Decision.values:
        errors["decision"] = _("Unknown decision '%(decision)s'; use one of: %(choices)s.") % {
            "decision": decision,
            "choices": ", ".join(Review.Decision.values),
        }
    if not reviewer.strip():
        errors["reviewer"] = _("Say who reviewed.")
    if reject_reason and reject_reason not in Review.RejectReason.values:
        errors["reject_reason"] = _("Unknown reject reason '%(reason)s'; use one of: %(choices)s.") % {
            "reason": reject_reason,
            "choices": ", ".join(Review.RejectReason.values),
        }
    elif reject_reason and decision != Review.Decision.REJECT:
        errors["reject_reason"] = _("Only a reject has a reject reason.")

    criteria_by_key = {
        criterion.key: criterion for criterion in recording.rubric.criteria.prefetch_related("exceptions")
    }
    if adjusted_mean is not None and criteria_by_key:
        low = min(criterion.scale_min for criterion in criteria_by_key.values())
        high = max(criterion.scale_max for criterion in criteria_by_key.values())
        if not low <= adjusted_mean <= high:
            errors["adjusted_mean"] = _("adjusted_mean must be between %(low)s and %(high)s.") % {
                "low": low,
                "high": high,
            }

    scores = list(recording.current_run.scores.select_related("criterion"))
    # What the judge said where its value exists; an unverified value is no value (docs/dev/design.md).
    model_values = {score.criterion.key: score.value for score in scores if score.value_exists}
    unverified = {score.criterion.key for score in scores if not score.value_exists}
    criterion_errors = _criteria_errors(criteria, criteria_by_key, model_values, blind=blind)
    if criterion_errors:
        errors["criteria"] = criterion_errors
    if decision == Review.Decision.APPROVE and (
        missing := _unverified_without_own_value(criteria, criteria_by_key, unverified)
    ):
        errors["unverified"] = missing
    if (
        "criteria" not in errors
        and decision == Review.Decision.REJECT
        and not criteria_say_what_was_wrong(criteria=criteria, model_values=model_values)
    ):
        # A reject with nothing marked tells no one what to fix, and reads as a 100% rejection in the reports.
        errors["decision"] = _(
            "A reject must say what was wrong: mark at least one criterion wrong or change its value, "
            "with a comment saying why."
        )
    if errors:
        raise InvalidInputError(errors)

    review = Review.objects.create(
        recording=recording,
        run=recording.current_run,
        reviewer=reviewer.strip(),
        user=user,
        api_key=api_key,
        decision=decision,
        reject_reason=reject_reason,
        adjusted_mean=adjusted_mean,
        comment=comment,
        blind=blind,
        from_dispute=from_dispute,
    )
    CriterionReview.objects.bulk_create(
        CriterionReview(
            review=review,
            criterion=criteria_by_key[item.criterion_key],
            adjusted_value=item.adjusted_value,
            not_applicable=item.not_applicable,
            comment=item.comment,
            rejected=item.rejected,
        )
        for item in criteria
    )
    reviews_human_values_store(reviews=Review.objects.filter(pk=review.pk))
    # "Needs review" sends the recording on: it stays in the queue for someone else.
    recording.status = Recording.Status.IN_REVIEW if decision == Review.Decision.NEEDS_REVIEW else Recording.Status.REVIEWED
    recording.rollup_stale = True  # its human values changed: the scorecards' rollup reads its week again
    recording.save(update_fields=["status", "rollup_stale", "updated_at"])
    ReviewClaim.objects.filter(recording=recording).delete()
    assignments_close_reviewed(recording=recording, user=user, final=review.is_final)
    review_created_emit(review_id=review.pk, recording_id=recording.pk, workspace_id=recording.workspace_id)
    return review


class UndoExpiredError(ConflictError):
    """Too late to undo, or not the latest review of its call: a later decision already builds on it."""


def assignments_close_reviewed(*, recording: Recording, user: AbstractBaseUser | None, final: bool) -> int:
    """Close the call's open assignment once it is reviewed: by anyone with a final decision (the call
    is done), by its assignee with any (a "needs another review" passes it on to the queue). review_create
    calls it in its transaction. Returns how many it closed."""
    done = Q() if final else Q(assignee=user) if user is not None else Q(pk__in=[])
    return Assignment.objects.filter(done, recording=recording, closed_at__isnull=True).update(closed_at=timezone.now())


@transaction.atomic
def review_void(*, review: Review, user: AbstractBaseUser) -> Recording:
    """Undo `user`'s own review within UNDO_SECONDS of submitting it: the page stores a submit at once and
    offers Undo in a toast, so no submit waits. Appends a ReviewVoid (the review stays stored and stands
    for nothing: the earlier review, if any, counts again) and puts the call back where the review found it.
    A blind audit has no undo: its submit revealed the model's values, so its redo would not be blind."""
    recording = Recording.objects.select_for_update().get(pk=review.recording_id)
    review = Review.objects.filter(pk=review.pk).first()
    if review is None or review.user_id != user.pk:
        raise PermissionDenied(_("Only the supervisor who gave a review can undo it."))
    if review.blind:
        raise UndoExpiredError(_("A blind audit cannot be undone: the model's values were shown after it."))
    if timezone.now() - review.created_at > timedelta(seconds=UNDO_SECONDS + UNDO_GRACE_SECONDS):
        raise UndoExpiredError(_("Too late to undo this review; start a new review of the call instead."))
    if recording.reviews.values_list("pk", flat=True).first() != review.pk:
        raise UndoExpiredError(_("This call was reviewed again since; that review stands."))
    ReviewVoid.objects.create(review=review, user=user)
    standing = recording.reviews.first()
    if standing is not None:  # as review_create left it after that review
        recording.status = Recording.Status.REVIEWED if standing.is_final else Recording.Status.IN_REVIEW
    else:
        recording.status = Recording.Status.IN_REVIEW if recording.needs_review else Recording.Status.JUDGED
    recording.rollup_stale = True  # its human values changed back: the scorecards read its week again
    recording.save(update_fields=["status", "rollup_stale", "updated_at"])
    return recording


def _check_claim(*, recording: Recording, user: AbstractBaseUser | None) -> None:
    """Refuse a review of a call someone else holds an active claim on (keys included: a person is on it)."""
    claim = claim_holder(recording=recording)
    if claim is not None and (user is None or claim.user_id != user.pk):
        raise RecordingClaimedError(
            _("%(user)s is reviewing recording %(id)s until %(until)s; your review was not saved.")
            % {
                "user": claim.user.get_username(),
                "id": recording.pk,
                "until": formats.date_format(timezone.localtime(claim.expires_at), "DATETIME_FORMAT"),
            },
            claimed_by=claim.user.get_username(),
            claimed_until=claim.expires_at.isoformat(),
        )


def _unverified_without_own_value(
    criteria: list[CriterionAdjustment] | tuple[CriterionAdjustment, ...],
    criteria_by_key: dict[str, Criterion],
    unverified: set[str],
) -> dict[str, str]:
    """Per criterion whose quote did not verify and that the approve gives no word on: the message.
    Its value does not exist, so approving "as judged" would invent a human value."""
    answered = {
        item.criterion_key
        for item in criteria
        if item.adjusted_value is not None or item.not_applicable or item.rejected
    }
    return {
        key: _(
            "“%(title)s”: the judge's quote was not found in the transcript, so its value does not exist. "
            "Give your own value, mark it not applicable, or mark that the judge got it wrong."
        )
        % {"title": criteria_by_key[key].title}
        for key in sorted(unverified & set(criteria_by_key) - answered, key=lambda key: criteria_by_key[key].order)
    }


def reviews_human_values_store(*, reviews: QuerySet[Review], batch_size: int = 2000) -> int:
    """Set `human_values` on `reviews` from what each says (`review_values`: the human reference's rule).
    review_create calls it; its migration and the benchmarks, for reviews stored without. Returns how many."""
    # Review.log: every review given, undone or not, and a query its migration (0007, before there were
    # undone reviews) can run.
    ids = sorted(reviews.values_list("pk", flat=True))
    for start in range(0, len(ids), batch_size):
        batch = ids[start : start + batch_size]
        values: dict[int, dict[str, int]] = {review_id: {} for review_id in batch}
        for row in review_values(reviews=Review.log.filter(pk__in=batch)):
            if row["human"] is not None:
                values[row["review_id"]][row["key"]] = row["human"]
        Review.log.bulk_update(
            [Review(pk=pk, human_values=values[pk]) for pk in batch], ["human_values"], batch_size=UPDATE_BATCH
        )
    return len(ids)


def _criteria_errors(
    criteria: list[CriterionAdjustment] | tuple[CriterionAdjustment, ...],
    criteria_by_key: dict[str, Criterion],
    model_values: dict[str, int | None],
    *,
    blind: bool,
) -> dict[str, str]:
    """One message per bad criterion entry, keyed by its position in the list.

    "Not applicable" is allowed where the judge may say it too: on a criterion
    whose rubric lists a not-applicable exception. A changed value, or "not
    applicable" where the model gave a number, needs a comment, except in a
    blind audit (the supervisor has not seen the model's value, so nothing was
    "changed") and where the judge's value does not exist (`model_values`
    holds only the values that do).
    """
    errors: dict[str, str] = {}
    seen: set[str] = set()
    for index, item in enumerate(criteria):
        criterion = criteria_by_key.get(item.criterion_key)
        if criterion is None:
            errors[str(index)] = _("Unknown criterion '%(key)s' for this rubric.") % {"key": item.criterion_key}
        elif item.criterion_key in seen:
            errors[str(index)] = _("“%(title)s” appears twice.") % {"title": criterion.title}
        elif item.not_applicable and not criterion.allows_not_applicable():
            errors[str(index)] = _(
                "“%(title)s” cannot be marked not applicable: its rubric lists no \"not applicable\" exception."
            ) % {"title": criterion.title}
        elif item.not_applicable and item.adjusted_value is not None:
            errors[str(index)] = _("“%(title)s” has a value and is marked not applicable: choose one.") % {
                "title": criterion.title
            }
        elif item.adjusted_value is not None and not criterion.in_scale(item.adjusted_value):
            errors[str(index)] = _("“%(title)s” must be between %(low)s and %(high)s.") % {
                "title": criterion.title,
                "low": criterion.scale_min,
                "high": criterion.scale_max,
            }
        elif (
            not blind
            and not item.comment.strip()
            # Only an existing judge value can be "changed": where its quote did not verify there is none.
            and item.criterion_key in model_values
            and replaces_model_value(item, model_values[item.criterion_key])
        ):
            message = (
                _("Marking “%(title)s” not applicable needs a comment saying why.")
                if item.not_applicable
                else _("Changing “%(title)s” needs a comment saying why.")
            )
            errors[str(index)] = message % {"title": criterion.title}
        seen.add(item.criterion_key)
    return errors


def judge_values(recording: Recording) -> dict[str, int | None]:
    """The judge's values on the recording's current judgment, by criterion key, where they exist
    (an unverified quote's value is none: docs/dev/design.md)."""
    return {
        score.criterion.key: score.value
        for score in recording.current_run.scores.select_related("criterion")
        if score.value_exists
    }


def criteria_say_what_was_wrong(
    *, criteria: list[CriterionAdjustment] | tuple[CriterionAdjustment, ...], model_values: dict[str, int | None]
) -> bool:
    """Would these values make a reject that review_create accepts: does any entry mark the judge wrong
    or replace its value, with a comment?"""
    return any(_says_what_was_wrong(item, model_values.get(item.criterion_key)) for item in criteria)


def _says_what_was_wrong(item: CriterionAdjustment, model_value: int | None) -> bool:
    """The entry marks the judge wrong or replaces its value, and says why."""
    return bool(item.comment.strip()) and (item.rejected or replaces_model_value(item, model_value))


def replaces_model_value(item: CriterionAdjustment, model_value: int | None) -> bool:
    """The entry puts another number, or "does not apply", in place of what the model said."""
    if item.not_applicable:
        return model_value is not None
    return item.adjusted_value is not None and item.adjusted_value != model_value
