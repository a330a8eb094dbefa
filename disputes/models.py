"""Agents' acknowledgements and disputes of final reviews (their tables keep the reviews_ names they had
there). A dispute's upheld criteria become a new final review (`Review.from_dispute`),
written by `disputes.services.dispute_resolve` through `reviews.services.review_create`."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from access.querysets import ScopedManager, ScopePaths
from qa.models import Recording
from rubrics.models import Criterion


class Acknowledgement(models.Model):
    """An agent's "I have read it" on a final review of one of their calls (one click, optional comment)."""

    review = models.OneToOneField("reviews.Review", on_delete=models.CASCADE, related_name="acknowledgement")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    comment = models.TextField(_("comment"), blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "reviews_acknowledgement"  # the table it had in reviews, kept: the move changed no row
        ordering = ["-created_at", "-id"]
        verbose_name = _("acknowledgement")
        verbose_name_plural = _("acknowledgements")


class Dispute(models.Model):
    """An agent's disagreement with criteria of a final review, for a QA lead to resolve by a due date."""

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        RESOLVED = "resolved", _("Resolved")

    review = models.ForeignKey("reviews.Review", on_delete=models.PROTECT, related_name="disputes")
    recording = models.ForeignKey(Recording, on_delete=models.CASCADE, related_name="disputes")
    agent_id = models.CharField(_("agent id"), max_length=100)  # the call's, when disputed
    opened_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="disputes_opened")
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.OPEN)
    # None: any QA lead (QA_DISPUTE_ROUTING "qa_leads", or a reviewer without a lead).
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="disputes_assigned"
    )
    due_at = models.DateTimeField(_("due"))
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="disputes_resolved"
    )
    # The new final review the upheld criteria made; None when every criterion was rejected.
    resolution = models.OneToOneField(
        "reviews.Review", on_delete=models.PROTECT, null=True, blank=True, related_name="resolved_dispute"
    )
    comment = models.TextField(_("lead's comment"), blank=True)
    # When the agent first opened the outcome: until then it counts in their notifications.
    outcome_seen_at = models.DateTimeField(null=True, blank=True)

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths.of_calls("recording__")
    objects = ScopedManager()

    class Meta:
        db_table = "reviews_dispute"  # the table it had in reviews, kept: the move changed no row
        ordering = ["-created_at", "-id"]
        verbose_name = _("dispute")
        verbose_name_plural = _("disputes")
        permissions = [("resolve_dispute", _("Can resolve agents' disputes"))]
        constraints = [
            # A review is disputed once: its resolution is the lead's word (services refuse it with a message).
            models.UniqueConstraint(fields=["review"], name="dispute_once_per_review"),
        ]

    def __str__(self) -> str:
        return f"Dispute {self.pk} of review {self.review_id}"


class DisputedCriterion(models.Model):
    """One criterion an agent disputes: the value they think right (or N/A) and why; then the lead's outcome."""

    class Outcome(models.TextChoices):
        PENDING = "", _("Pending")
        UPHELD = "upheld", _("Upheld")
        REJECTED = "rejected", _("Rejected")

    dispute = models.ForeignKey(Dispute, on_delete=models.CASCADE, related_name="criteria")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    proposed_value = models.SmallIntegerField(_("proposed value"), null=True, blank=True)
    proposed_not_applicable = models.BooleanField(_("proposed not applicable"), default=False)
    reason = models.TextField(_("reason"))
    outcome = models.CharField(_("outcome"), max_length=10, choices=Outcome.choices, blank=True, default="")
    # On an upheld criterion: the value that now stands (the agent's, or the lead's own).
    resolved_value = models.SmallIntegerField(_("resolved value"), null=True, blank=True)
    resolved_not_applicable = models.BooleanField(_("resolved not applicable"), default=False)
    lead_comment = models.TextField(_("lead's comment"), blank=True)

    class Meta:
        db_table = "reviews_disputedcriterion"  # the table it had in reviews, kept: the move changed no row
        ordering = ["criterion__order", "criterion_id"]
        verbose_name = _("disputed criterion")
        verbose_name_plural = _("disputed criteria")
        constraints = [
            models.UniqueConstraint(fields=["dispute", "criterion"], name="disputed_criterion_once"),
            models.CheckConstraint(
                condition=models.Q(proposed_value__isnull=True) | models.Q(proposed_not_applicable=False),
                name="disputed_criterion_value_or_not_applicable",
            ),
        ]
