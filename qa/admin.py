from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from qa.models import Judge, JudgeRun, Recording, Score


class ReadOnlyAdmin(admin.ModelAdmin):
    """Results are written by the pipeline only; the admin lets people look."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class ScoreInline(admin.TabularInline):
    model = Score
    extra = 0
    can_delete = False
    fields = ["criterion", "value", "confidence", "model_confidence", "evidence_label", "rationale", "sample_values", "unstable"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.display(description=_("evidence"))
    def evidence_label(self, score: Score) -> str:
        return evidence_display(score)


def evidence_display(score: Score) -> str:
    if score.evidence_verified:
        return score.evidence
    return format_html('<strong class="unverified">{}</strong> {}', _("NO VERIFICADA / NOT VERIFIED"), score.evidence)


@admin.register(Recording)
class RecordingAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "agent_name", "team", "channel", "rubric", "status", "needs_review", "occurred_at"]
    list_filter = ["status", "needs_review", "channel", "transcript_source", "rubric", "team"]
    search_fields = ["external_id", "source", "agent_id", "agent_name", "team"]
    date_hierarchy = "occurred_at"
    list_select_related = ["rubric"]


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    """Rubric owners name judges here; the key stays in the environment, only its variable's name is stored."""

    list_display = ["name", "backend", "model", "temperature", "samples", "is_default", "availability"]
    list_filter = ["backend", "is_default"]
    search_fields = ["name", "model"]
    fields = [
        "name",
        ("backend", "model"),
        "base_url",
        "gguf_path",
        "api_key_variable",
        ("temperature", "samples"),
        ("prompt_price", "completion_price"),
        "is_default",
    ]

    @admin.display(description=_("usable"))
    def availability(self, judge: Judge) -> str:
        return judge.unavailable_reason or _("yes")


@admin.register(JudgeRun)
class JudgeRunAdmin(ReadOnlyAdmin):
    list_display = [
        "id", "recording", "judge", "backend", "model", "prompt_version", "status", "created_at", "llm_duration_ms"
    ]
    list_filter = ["status", "judge", "backend", "model", "prompt_version"]
    search_fields = ["recording__external_id", "model", "prompt_version", "error"]
    list_select_related = ["recording"]
    inlines = [ScoreInline]


@admin.register(Score)
class ScoreAdmin(ReadOnlyAdmin):
    list_display = ["run", "criterion", "value", "confidence", "model_confidence", "verified", "verification_status"]
    list_filter = ["evidence_verified", "verification_status", "criterion__rubric", "criterion__key"]
    search_fields = ["evidence", "rationale", "criterion__key", "run__recording__external_id"]
    list_select_related = ["run__recording", "criterion"]

    @admin.display(description=_("verified"), boolean=True, ordering="evidence_verified")
    def verified(self, score: Score) -> bool:
        return score.evidence_verified


# The API key admin lives with the API; importing it registers it.
import qa.api.admin  # noqa: E402,F401
