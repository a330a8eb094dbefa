from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from access.models import ApiKey
from access.querysets import ScopedManager, ScopePaths
from qa.models import JudgeRun, Recording
from rubrics.models import Criterion


class StandingReviews(ScopedManager):
    """Reviews that count: every one not undone (`ReviewVoid`). The default manager, so `Review.objects`
    and `recording.reviews` (the page, the service, the human reference, the reports) never read an
    undone review; `Review.log` keeps them all."""

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(void__isnull=True)


class Review(models.Model):
    """A supervisor's decision on a judged recording. Append-only: a later
    review supersedes an earlier one for reporting, an undone one is voided (`ReviewVoid`), and all are kept."""

    # Labels name the outcome ("Approved"), as lists and reports show it; the page's buttons say the verb.
    class Decision(models.TextChoices):
        APPROVE = "approve", pgettext_lazy("a review", "Approved")
        REJECT = "reject", pgettext_lazy("a review", "Rejected")
        NEEDS_REVIEW = "needs_review", pgettext_lazy("a review", "Needs another review")

    class RejectReason(models.TextChoices):
        """What was wrong overall, optional beside the criteria marked wrong (which a reject must have)."""

        WRONG_SCORE = "wrong_score", _("Wrong score")
        UNSUPPORTED_QUOTE = "unsupported_quote", _("The quote doesn't support the score")
        CRITERION_DOES_NOT_APPLY = "criterion_does_not_apply", _("The criterion doesn't apply")
        TRANSCRIPT_PROBLEM = "transcript_problem", _("Transcript problem")

    recording = models.ForeignKey(Recording, on_delete=models.CASCADE, related_name="reviews")
    run = models.ForeignKey(JudgeRun, on_delete=models.PROTECT, related_name="reviews")
    reviewer = models.CharField(_("reviewer"), max_length=150)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True)
    api_key = models.ForeignKey(ApiKey, on_delete=models.PROTECT, null=True, blank=True)
    decision = models.CharField(_("decision"), max_length=20, choices=Decision.choices)
    # db_default too: bulk loaders writing SQL (the benchmarks) need not know the column.
    reject_reason = models.CharField(
        _("reject reason"),
        max_length=32,
        choices=RejectReason.choices,
        blank=True,
        default="",
        db_default="",
        help_text=_("Only on a reject."),
    )
    adjusted_mean = models.FloatField(_("adjusted mean"), null=True, blank=True)
    comment = models.TextField(_("comment"), blank=True)
    blind = models.BooleanField(
        _("blind audit"), default=False, help_text=_("The reviewer entered values before seeing the model's.")
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # The human value per criterion key the review gives (`reviews.reference.review_values`; criteria
    # without a number left out), set when it is made: the scorecards read these rather than join the
    # scores and criterion entries of every audited call (bench/scorecards/README.md).
    human_values = models.JSONField(_("human values"), null=True, blank=True)
    # A QA lead's resolution of an agent's dispute (disputes): final, it supersedes the review disputed.
    from_dispute = models.BooleanField(
        _("from a dispute"),
        default=False,
        db_default=False,
        help_text=_("A QA lead's resolution of an agent's dispute of the review before it."),
    )

    objects = StandingReviews()
    # What its rows show of a workspace to whom: Review.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths.of_calls("recording__")
    log = models.Manager()  # undone ones too: the admin's full record

    class Meta:
        ordering = ["-created_at", "-id"]
        base_manager_name = "log"
        verbose_name = _("review")
        verbose_name_plural = _("reviews")
        indexes = [models.Index(fields=["recording", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_decision_display()} by {self.reviewer} on {self.recording_id}"

    @property
    def is_final(self) -> bool:
        """Approve and reject are a human's judgement; "needs another review" only passes the call on."""
        return self.decision != self.Decision.NEEDS_REVIEW


class ReviewVoid(models.Model):
    """A review its supervisor undid within seconds of submitting it (the page's Undo): appended, never an
    edit, so the review stays stored and stands for nothing (`StandingReviews`)."""

    review = models.OneToOneField(Review, on_delete=models.CASCADE, related_name="void")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("undone review")
        verbose_name_plural = _("undone reviews")

    def __str__(self) -> str:
        return f"Review {self.review_id} undone by {self.user_id}"


class CriterionReview(models.Model):
    """The supervisor's word on one criterion: their value, or `not_applicable`
    (the criterion does not apply to the call); with neither, the model's value stands."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="criteria")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="reviews")
    adjusted_value = models.SmallIntegerField(_("adjusted value"), null=True, blank=True)
    not_applicable = models.BooleanField(
        _("not applicable"),
        default=False,
        help_text=_("The supervisor finds this criterion does not apply to the call."),
    )
    rejected = models.BooleanField(_("rejected"), default=False, help_text=_("The judge got this criterion wrong."))
    comment = models.TextField(_("comment"), blank=True)

    class Meta:
        ordering = ["criterion__order", "criterion_id"]
        verbose_name = _("criterion review")
        verbose_name_plural = _("criterion reviews")
        constraints = [
            models.UniqueConstraint(fields=["review", "criterion"], name="criterion_review_once_per_review"),
            # A value and "does not apply" contradict each other; review_create refuses it with a message.
            models.CheckConstraint(
                condition=models.Q(adjusted_value__isnull=True) | models.Q(not_applicable=False),
                name="criterion_review_value_or_not_applicable",
            ),
        ]


class ReviewClaim(models.Model):
    """A supervisor working on a recording, so two don't review the same call at once."""

    recording = models.OneToOneField(Recording, on_delete=models.CASCADE, related_name="claim")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_claims")
    expires_at = models.DateTimeField()

    class Meta:
        verbose_name = _("review claim")
        verbose_name_plural = _("review claims")


class Assignment(models.Model):
    """A lead's word that a call waiting for review is one supervisor's to review: it comes first in
    their queue (so it is the review queue's, here; the calls pages make it). Open until that call is reviewed (by anyone, with a final decision; by its assignee,
    with any) or assigned again; then closed, and kept."""

    recording = models.ForeignKey(Recording, on_delete=models.CASCADE, related_name="assignments")
    assignee = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    assigned_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("assignment")
        verbose_name_plural = _("assignments")
        constraints = [
            models.UniqueConstraint(fields=["recording"], condition=Q(closed_at__isnull=True), name="one_open_assignment"),
        ]
        indexes = [models.Index(fields=["assignee"], condition=Q(closed_at__isnull=True), name="assignment_open_by_user")]

    def __str__(self) -> str:
        return f"{self.recording_id} → {self.assignee_id}"


# The calibration sessions' rows, in a module of their own; the `reviews` app's models, registered from here.
from reviews.calibration_models import (  # noqa: E402
    AgreedValue,
    CalibrationCall,
    CalibrationEntry,
    CalibrationSession,
    CalibrationValue,
)

__all__ = [
    "AgreedValue", "Assignment", "CalibrationCall", "CalibrationEntry", "CalibrationSession", "CalibrationValue",
    "CriterionReview", "Review", "ReviewClaim",
]  # fmt: skip
