"""An agent's self-review: their own values for one of their judged calls, given blind (before the page shows the
judge's and the supervisor's), or their choice to skip it. Counted apart: no review, report, scorecard, routing
certification or human reference reads these rows (reviews.reference reads reviews and calibrations only)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from access.querysets import ScopedManager, ScopePaths
from qa.models import Recording
from rubrics.models import Criterion


class SelfReview(models.Model):
    """One per agent and call: once the page has shown the call's values, a blind score is no longer blind."""

    recording = models.ForeignKey(Recording, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    agent_id = models.CharField(_("agent id"), max_length=100)  # the call's, when self-reviewed
    # Skipped: the agent chose to see the values without scoring first; the row then has no values.
    skipped = models.BooleanField(_("skipped"), default=False)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths.of_calls("recording__")
    objects = ScopedManager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("self-review")
        verbose_name_plural = _("self-reviews")
        constraints = [models.UniqueConstraint(fields=["recording", "user"], name="self_review_once_per_call")]

    def __str__(self) -> str:
        return f"Self-review {self.pk} of call {self.recording_id}"


class SelfReviewValue(models.Model):
    self_review = models.ForeignKey(SelfReview, on_delete=models.CASCADE, related_name="values")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    value = models.SmallIntegerField(_("value"), null=True, blank=True)  # None exactly when not_applicable
    not_applicable = models.BooleanField(_("does not apply"), default=False)

    class Meta:
        ordering = ["criterion__order", "criterion_id"]
        constraints = [
            models.UniqueConstraint(fields=["self_review", "criterion"], name="self_review_value_once"),
            models.CheckConstraint(
                condition=models.Q(value__isnull=True, not_applicable=True)
                | models.Q(value__isnull=False, not_applicable=False),
                name="self_review_value_or_na",
            ),
        ]
