"""The outbox: what happened, written in the transaction that made it happen.

It sits at the bottom of the stack (outbox ← rubrics ← qa ← reviews ← webhooks) so that every app can
write to it in its own transaction, while whatever delivers events (webhooks, at the top, where each
object's API representation can be built) reads it after the commit. A rolled-back transaction takes its
events with it, so nothing is ever sent about a change that did not happen.
"""

from __future__ import annotations

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _

from access.models import Workspace

# Every event a consumer can subscribe to, and what it is about. The dispute events are named (and
# accepted by subscriptions) before disputes exist: their emit function is ready for that feature to call.
EVENT_NAMES = (
    "recording.judged",
    "recording.failed",
    "recording.routed",
    "review.created",
    "dispute.opened",
    "dispute.resolved",
    "experiment.finished",
    "coaching.created",
    "coaching.acknowledged",
)


class Event(models.Model):
    class Subject(models.TextChoices):
        RECORDING = "recording", _("recording")
        REVIEW = "review", _("review")
        DISPUTE = "dispute", _("dispute")
        EXPERIMENT = "experiment", _("experiment")
        COACHING = "coaching", _("coaching session")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(_("event"), max_length=40, choices=[(name, name) for name in EVENT_NAMES])
    subject_type = models.CharField(_("about a"), max_length=20, choices=Subject.choices)
    subject_id = models.BigIntegerField(_("its id"))
    # The recording the subject belongs to (a review's, a dispute's), so a receiver can find the call.
    recording_id = models.BigIntegerField(null=True, blank=True)
    # The workspace of what it is about: only that workspace's subscriptions receive it. None: the
    # default workspace (the emitter did not say, as before recordings belonged to workspaces).
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)
    # Set once a consumer has taken the event (fanned it out to its deliveries); the sweep hands out the others.
    dispatched_at = models.DateTimeField(null=True, blank=True)

    # Where its partition is (outbox 0004, core.partitions): the month it was written.
    partition_key = "created_at"

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("event")
        verbose_name_plural = _("events")
        indexes = [
            models.Index(fields=["created_at"], condition=models.Q(dispatched_at__isnull=True), name="event_undispatched")
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.subject_type} {self.subject_id}"
