"""Webhook subscriptions and their deliveries: one delivery per event and subscription, each with the
log of its attempts."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from access.querysets import ScopedManager, ScopePaths
from access.models import ApiKey, Workspace, default_workspace_id
from access.scope import scope_for_key
from outbox.models import Event


class Subscription(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", _("active")
        PAUSED = "paused", _("paused")

    # It receives the events of this workspace's recordings, reviews and experiments alone.
    workspace = models.ForeignKey(
        Workspace, verbose_name=_("workspace"), on_delete=models.CASCADE, related_name="webhook_subscriptions",
        default=default_workspace_id,
    )  # fmt: skip
    url = models.URLField(_("URL"), max_length=2000, help_text=_("Its host must be allowed by QA_WEBHOOK_ALLOWED_HOSTS."))
    events = models.JSONField(_("events"), default=list, help_text=_("The event names it receives."))
    # Kept to sign every delivery (an HMAC needs the secret itself); shown once, when it is created.
    secret = models.CharField(max_length=128, editable=False)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.ACTIVE)
    description = models.CharField(_("description"), max_length=200, blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, verbose_name=_("owner"), null=True, blank=True, on_delete=models.SET_NULL,
        related_name="webhook_subscriptions",
    )  # fmt: skip
    api_key = models.ForeignKey(
        ApiKey, verbose_name=_("API key"), null=True, blank=True, on_delete=models.CASCADE,
        related_name="webhook_subscriptions", help_text=_("The key that created it, which alone may manage it."),
    )  # fmt: skip
    contact_email = models.EmailField(
        _("contact e-mail"), blank=True, help_text=_("Told when the subscription is paused (else the owner's e-mail).")
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The first failed attempt since the last delivered one: failing that long pauses the subscription.
    failing_since = models.DateTimeField(_("failing since"), null=True, blank=True, editable=False)
    paused_at = models.DateTimeField(_("paused at"), null=True, blank=True, editable=False)
    paused_reason = models.TextField(_("why it was paused"), blank=True, editable=False)

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths(workspace="workspace")
    objects = ScopedManager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("webhook subscription")
        verbose_name_plural = _("webhook subscriptions")

    def __str__(self) -> str:
        return self.url

    def receives_recording(self, recording: object | None) -> bool:
        """Whether an event about `recording` (a loaded Recording, or None for one about no call) may be
        sent here: a key's subscription only its key's calls (its scope: its source), as the key could
        read them; the workspace is checked by the fan-out's query."""
        if recording is None or self.api_key is None:
            return True
        return scope_for_key(self.api_key).contains_recording(recording)


class Delivery(models.Model):
    """An event sent to one subscription. Its id is the receiver's idempotency key
    (`X-Veredicto-Delivery` and the body's `id`): a retry or a redelivery sends the same id and body."""

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        RUNNING = "running", _("sending")  # an attempt under way (claimed by a worker: core.jobs)
        DELIVERED = "delivered", _("delivered")
        FAILED = "failed", _("failed")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No database constraint: on PostgreSQL the events are partitioned by month and their key is (id, created_at)
    # (outbox 0004). Django still cascades a deleted event; core.partitions' retention deletes an archived
    # month's deliveries, and checks none is left, before it drops the month.
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="webhook_deliveries", db_constraint=False)
    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.PENDING)
    body = models.TextField(_("body"), help_text=_("The JSON sent, byte for byte, on every attempt."))
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    next_attempt_at = models.DateTimeField(_("next attempt"), null=True, blank=True)
    # Retries stop a day (QA_WEBHOOK_RETRY_WINDOW) after this: the first send, or the last redelivery.
    retrying_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)
    # The job executor's claim (core.jobs): when the attempt under way started, and its lease, past which
    # the executor's sweep takes the delivery back from a worker that died.
    started_at = models.DateTimeField(null=True, blank=True, editable=False)
    leased_until = models.DateTimeField(null=True, blank=True, editable=False)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    error = models.TextField(_("last error"), blank=True)

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths(workspace="subscription__workspace")
    objects = ScopedManager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        constraints = [models.UniqueConstraint(fields=["event", "subscription"], name="one_delivery_per_event_and_subscription")]
        indexes = [
            models.Index(fields=["next_attempt_at"], condition=models.Q(status="pending"), name="delivery_due"),
        ]

    def __str__(self) -> str:
        return f"{self.event.name} → {self.subscription.url}"


class Attempt(models.Model):
    class Outcome(models.TextChoices):
        DELIVERED = "delivered", _("delivered (2xx)")
        RETRY = "retry", _("failed, will retry")
        FAILED = "failed", _("failed, given up")

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveIntegerField(_("attempt"))
    started_at = models.DateTimeField(_("started"))
    duration_ms = models.FloatField(_("duration (ms)"))
    response_code = models.PositiveIntegerField(_("response code"), null=True, blank=True)
    response_body = models.TextField(_("response body"), blank=True, help_text=_("A short excerpt of its start."))
    error = models.TextField(_("error"), blank=True)
    outcome = models.CharField(_("outcome"), max_length=10, choices=Outcome.choices)

    class Meta:
        ordering = ["delivery", "number"]
        verbose_name = _("delivery attempt")
        verbose_name_plural = _("delivery attempts")

    def __str__(self) -> str:
        return f"attempt {self.number}: {self.response_code or self.error}"
