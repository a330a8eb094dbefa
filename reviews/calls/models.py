from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from qa.models import Recording


class Assignment(models.Model):
    """A lead's word that a call waiting for review is one supervisor's to review: it comes first in
    their queue. Open until that call is reviewed (by anyone, with a final decision; by its assignee,
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
