"""Shapes of the webhooks' API. No logic: the services validate the URL and the events."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from outbox.models import EVENT_NAMES
from webhooks.models import Attempt, Delivery, Subscription

EVENT_CHOICES = [(name, name) for name in EVENT_NAMES]


class SubscriptionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Subscription
        fields = [
            "id", "workspace", "url", "events", "status", "description", "contact_email",
            "failing_since", "paused_at", "paused_reason", "created_at", "updated_at",
        ]  # fmt: skip

    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_CHOICES))
    workspace = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, help_text=_("Its workspace's slug: it receives that workspace's events alone.")
    )


class SubscriptionCreatedSerializer(SubscriptionSerializer):
    secret = serializers.CharField(help_text=_("The signing secret, shown this once."))

    class Meta(SubscriptionSerializer.Meta):
        fields = [*SubscriptionSerializer.Meta.fields, "secret"]


class SubscriptionInputSerializer(serializers.Serializer):
    url = serializers.CharField(max_length=2000, help_text=_("Its host must be allowed by QA_WEBHOOK_ALLOWED_HOSTS."))
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_CHOICES), min_length=1)
    secret = serializers.CharField(required=False, min_length=24, max_length=128, help_text=_("Default: generated."))
    description = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)
    contact_email = serializers.EmailField(required=False, default="", allow_blank=True)
    workspace = serializers.CharField(
        required=False, max_length=100,
        help_text=_("A person's: the slug of one of their workspaces (default: their only one, else the default "
                    "workspace). A key's subscriptions are where its calls are."),
    )  # fmt: skip


class SubscriptionUpdateSerializer(serializers.Serializer):
    url = serializers.CharField(required=False, max_length=2000)
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_CHOICES), min_length=1, required=False)
    status = serializers.ChoiceField(
        choices=Subscription.Status.choices, required=False, help_text=_("`active` resumes a paused subscription.")
    )
    description = serializers.CharField(required=False, allow_blank=True, max_length=200)
    contact_email = serializers.EmailField(required=False, allow_blank=True)


class AttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = Attempt
        fields = ["number", "started_at", "outcome", "duration_ms", "response_code", "error", "response_body"]


class DeliverySerializer(serializers.ModelSerializer):
    event = serializers.CharField(source="event.name")
    attempts = AttemptSerializer(source="attempt_log", many=True)
    attempt_count = serializers.IntegerField(source="attempts")

    class Meta:
        model = Delivery
        fields = [
            "id", "event", "status", "attempt_count", "next_attempt_at", "created_at", "finished_at", "error", "body",
            "attempts",
        ]  # fmt: skip
