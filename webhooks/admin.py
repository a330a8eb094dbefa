"""Webhooks in the admin, each person seeing the workspaces of their scope: subscriptions (the secret
shown once, on the answer to the form that created it), and the delivery log, each attempt with its outcome, duration, response code and answer, with a
Redeliver action."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from core.hosts import HostNotAllowed
from outbox.models import EVENT_NAMES
from qa.api.admin import shown_once
from webhooks.models import Attempt, Delivery, Subscription
from webhooks.selectors import (
    deliveries_visible,
    subscriptions_visible,
    workspace_to_subscribe,
    workspaces_to_subscribe,
)
from webhooks.services import (
    delivery_redeliver,
    subscription_create,
    subscription_delete,
    subscription_update,
    webhook_target,
)


class SubscriptionForm(forms.ModelForm):
    url = forms.URLField(label=_("URL"), max_length=2000, assume_scheme="https")
    events = forms.MultipleChoiceField(
        label=_("events"), choices=[(name, name) for name in EVENT_NAMES], widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = Subscription
        fields = ["workspace", "url", "events", "status", "description", "contact_email"]

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        try:
            webhook_target(url)
        except HostNotAllowed as error:
            raise forms.ValidationError(str(error)) from None
        return url


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    form = SubscriptionForm
    list_display = [
        "url", "workspace", "event_list", "status", "failing_since", "paused_reason", "owner", "api_key", "created_at",
    ]  # fmt: skip
    list_filter = ["status", "workspace"]
    search_fields = ["url", "description"]
    readonly_fields = ["workspace", "owner", "api_key", "created_at", "failing_since", "paused_at", "paused_reason"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Subscription]:
        return subscriptions_visible(api_key=None, user=request.user)

    def get_fields(self, request: HttpRequest, obj: Subscription | None = None) -> list[str]:
        if obj is None:
            return ["workspace", "url", "events", "description", "contact_email"]
        return ["url", "events", "status", "description", "contact_email", *self.readonly_fields]

    def get_form(self, request: HttpRequest, obj: Subscription | None = None, **kwargs: Any) -> type[forms.ModelForm]:
        form = super().get_form(request, obj, **kwargs)
        if "workspace" in form.base_fields:  # a new subscription: in one of the person's workspaces
            form.base_fields["workspace"].queryset = workspaces_to_subscribe(user=request.user)
            form.base_fields["workspace"].initial = workspace_to_subscribe(user=request.user, slug=None)
        return form

    def get_readonly_fields(self, request: HttpRequest, obj: Subscription | None = None) -> list[str]:
        return [] if obj is None else self.readonly_fields

    @admin.display(description=_("events"))
    def event_list(self, subscription: Subscription) -> str:
        return ", ".join(subscription.events)

    def save_model(self, request: HttpRequest, obj: Subscription, form: forms.ModelForm, change: bool) -> None:
        data = form.cleaned_data
        if change:
            subscription_update(
                subscription=obj, url=data["url"], events=data["events"], status=data["status"],
                description=data["description"], contact_email=data["contact_email"],
            )  # fmt: skip
            obj.refresh_from_db()
            return
        created, secret = subscription_create(
            url=data["url"], events=data["events"], description=data["description"],
            contact_email=data["contact_email"], owner=request.user, workspace=data["workspace"],
        )  # fmt: skip
        obj.pk = created.pk
        obj.refresh_from_db()
        request.new_webhook_secret = secret  # for response_add, in this request only

    def delete_model(self, request: HttpRequest, obj: Subscription) -> None:
        subscription_delete(subscription=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Subscription]) -> None:
        for subscription in queryset:
            subscription_delete(subscription=subscription)

    def response_add(self, request: HttpRequest, obj: Subscription, post_url_continue: str | None = None) -> HttpResponse:
        """The secret on the answer to the form itself: never in a message (a signed, not encrypted,
        cookie) or the session."""
        secret = getattr(request, "new_webhook_secret", None)
        if secret is None:
            return super().response_add(request, obj, post_url_continue)
        message = format_html(
            _("The signing secret of {url} is <code>{secret}</code>. Copy it now: it cannot be shown again."),
            url=obj.url,
            secret=secret,
        )
        return shown_once(self, request, obj, message)


class AttemptInline(admin.TabularInline):
    model = Attempt
    fields = ["number", "started_at", "outcome", "duration_ms", "response_code", "error", "response_body"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "event_name", "subscription", "status", "attempts", "last_response_code", "finished_at"]
    list_filter = ["status", "event__name"]
    search_fields = ["id", "subscription__url"]
    fields = [
        "id", "event_name", "subscription", "status", "attempts", "next_attempt_at", "created_at", "finished_at",
        "error", "body",
    ]  # fmt: skip
    readonly_fields = fields
    inlines = [AttemptInline]
    actions = ["redeliver"]
    list_select_related = ["event", "subscription"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Delivery]:
        return deliveries_visible(user=request.user).prefetch_related("attempt_log")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # deliveries come from events

    @admin.display(description=_("event"), ordering="event__name")
    def event_name(self, delivery: Delivery) -> str:
        return delivery.event.name

    @admin.display(description=_("last response code"))
    def last_response_code(self, delivery: Delivery) -> int | None:
        attempts = list(delivery.attempt_log.all())
        return attempts[-1].response_code if attempts else None

    @admin.action(description=_("Redeliver the selected deliveries (same id and body)"), permissions=["change"])
    def redeliver(self, request: HttpRequest, queryset: QuerySet[Delivery]) -> None:
        for delivery in queryset:
            delivery_redeliver(delivery=delivery)
        self.message_user(request, _("%(count)d deliveries sent again.") % {"count": len(queryset)}, messages.SUCCESS)
