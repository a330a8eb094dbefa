"""API keys in the admin: created with a generated key that is shown once, revocable, expirable.

Registered on import: qa/admin.py imports this module.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from access.admin import ScopedAdminMixin
from qa.api.services import api_key_create, api_key_revoke
from access.models import ApiKey



def shown_once(model_admin: admin.ModelAdmin, request: HttpRequest, obj: models.Model, message: str) -> HttpResponse:
    """The answer to an add form that made a secret (an API key here, a webhook's signing secret in
    webhooks.admin): the secret in the page itself, never stored anywhere, not in a message (the cookie
    storage signs messages but does not encrypt them), not in the session, and not cached."""
    context = {**model_admin.admin_site.each_context(request), "opts": model_admin.opts, "original": obj, "message": message}
    response = TemplateResponse(request, "admin/shown_once.html", context)
    response["Cache-Control"] = "no-store"
    return response

@admin.register(ApiKey)
class ApiKeyAdmin(ScopedAdminMixin, admin.ModelAdmin):
    scope_workspace = "workspace"
    list_display = [
        "name", "prefix", "scope", "can_review", "can_run_experiments", "can_export", "active", "created_at", "expires_at",
        "revoked_at", "last_used_at",
    ]  # fmt: skip
    list_filter = ["all_sources", "can_review", "revoked_at"]
    search_fields = ["name", "prefix", "source"]
    actions = ["revoke"]

    def get_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        if obj is None:
            return ["name", "workspace", "source", "all_sources", "can_review", "can_run_experiments", "can_export", "expires_at"]
        return [
            "name", "workspace", "prefix", "source", "all_sources", "can_review", "can_run_experiments", "can_export", "created_at",
            "expires_at", "revoked_at", "last_used_at",
        ]  # fmt: skip

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        if obj is None:
            return []
        # The name is the default `source` of what the key posts: renaming it
        # would make a resend look like a new recording.
        # The source binds what the key may read: a key for another system is a new key.
        return ["name", "workspace", "prefix", "source", "all_sources", "created_at", "last_used_at"]

    def save_model(self, request: HttpRequest, obj: ApiKey, form, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        created, key = api_key_create(
            name=obj.name,
            source=obj.source,
            all_sources=obj.all_sources,
            can_review=obj.can_review,
            can_run_experiments=obj.can_run_experiments,
            can_export=obj.can_export,
            expires_at=obj.expires_at,
            workspace=obj.workspace,
        )
        # The admin logs and redirects with `obj`: make it the stored row.
        obj.pk = created.pk
        obj.refresh_from_db()
        request.new_api_key = key  # for response_add, in this request only

    def response_add(self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None) -> HttpResponse:
        """Show the new key on the answer to the form itself, never stored anywhere: not in a
        message (the cookie storage signs messages but does not encrypt them), not in the session."""
        key = getattr(request, "new_api_key", None)
        if key is None:
            return super().response_add(request, obj, post_url_continue)
        message = format_html(
            _("The key for {name} is <code>{key}</code>. Copy it now: only its hash is stored, it cannot be shown again."),
            name=obj.name,
            key=key,
        )
        return shown_once(self, request, obj, message)

    @admin.display(description=_("acts for"), ordering="source")
    def scope(self, api_key: ApiKey) -> str:
        if api_key.all_sources:
            return _("all sources")
        return api_key.source

    @admin.display(description=_("active"), boolean=True)
    def active(self, api_key: ApiKey) -> bool:
        return api_key.is_active

    @admin.action(description=_("Revoke the selected keys now"), permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset:
            api_key_revoke(api_key=api_key)
        self.message_user(request, _("%(count)d keys revoked.") % {"count": len(queryset)}, messages.SUCCESS)
