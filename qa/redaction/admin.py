"""The redaction policy in the admin, and per recording how many entities of each type were masked."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .models import ENTITY_CHOICES, RecordingRedaction, RedactionPolicy
from .policy import DEFAULTS

_LABELS = dict(ENTITY_CHOICES)


@admin.register(RedactionPolicy)
class RedactionPolicyAdmin(admin.ModelAdmin):
    """One row per entity type the operator sets; a type without a row keeps its default
    (settings.QA_REDACTION_POLICY, then the built-in one). A change applies to recordings redacted after it."""

    list_display = ["entity_type", "action", "default_action", "updated_at"]
    list_editable = ["action"]

    @admin.display(description=_("default"))
    def default_action(self, policy: RedactionPolicy) -> str:
        return DEFAULTS[policy.entity_type].label


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{_LABELS.get(kind, kind)}: {count}" for kind, count in sorted(counts.items())) or "—"


class RecordingRedactionInline(admin.StackedInline):
    model = RecordingRedaction
    can_delete = False
    extra = 0
    fields = readonly_fields = ["masked_at_rest_counts", "masked_for_llm_counts", "silenced_ms", "created_at"]
    verbose_name = verbose_name_plural = _("redaction")

    @admin.display(description=_("masked at rest"))
    def masked_at_rest_counts(self, redaction: RecordingRedaction) -> str:
        return _counts(redaction.masked_at_rest)

    @admin.display(description=_("masked for external models"))
    def masked_for_llm_counts(self, redaction: RecordingRedaction) -> str:
        return _counts(redaction.masked_for_llm)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
