from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from access import Capability, may
from access.admin import ScopedAdminMixin
from access.scope import scope_for
from core.errors import InvalidInputError
from qa.audio import AudioTooLargeError, audio_inspect, channel_map_check, channel_name_check
from qa.models import UNVERIFIED_MARK, Judge, JudgeRun, Recording, Score, Transcription
from qa.redaction.admin import RecordingRedactionInline
from qa.services import recording_ingest
from qa.transcribing import transcription_create
from rubrics.models import Rubric


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
    return format_html('<strong class="unverified">{}</strong> {}', UNVERIFIED_MARK, score.evidence)


class AudioUploadForm(forms.ModelForm):
    """Adding a recording in the admin means uploading its audio; it goes through the same ingest as the API."""

    audio = forms.FileField(
        label=_("audio"),
        help_text=_("WAV, FLAC, MP3, OGG/Opus or M4A; mono, two channels, or more with a channel map."),
    )

    class Meta:
        model = Recording
        fields = [
            "external_id", "source", "rubric", "agent_id", "agent_name", "team", "agent_channel", "customer_channel",
            "audio",
        ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["rubric"].queryset = Rubric.objects.filter(status=Rubric.Status.PUBLISHED)
        self.fields["source"].initial = "admin"

    def clean(self):
        cleaned = super().clean()
        audio = cleaned.get("audio")
        if audio is None:
            return cleaned
        agent_channel, customer_channel = cleaned.get("agent_channel", ""), cleaned.get("customer_channel", "")
        try:
            channel_name_check("agent_channel", agent_channel)
            channel_name_check("customer_channel", customer_channel)
            info = audio_inspect(audio, size=audio.size)
            channel_map_check(channels=info.channels, agent_channel=agent_channel, customer_channel=customer_channel)
        except InvalidInputError as error:
            for field, message in error.errors.items():
                self.add_error(field if field in self.fields else None, message)
        except AudioTooLargeError as error:
            self.add_error("audio", str(error))
        return cleaned

    def validate_unique(self) -> None:
        rubric = self.cleaned_data.get("rubric")
        if rubric is not None and Recording.objects.filter(
            workspace=rubric.workspace_id,
            source=self.cleaned_data.get("source"),
            external_id=self.cleaned_data.get("external_id"),
        ).exists():
            self.add_error("external_id", _("A recording with this source and external id exists already."))


@admin.register(Recording)
class RecordingAdmin(ScopedAdminMixin, ReadOnlyAdmin):
    scope_recording = ""
    list_display = ["__str__", "agent_name", "team", "channel", "rubric", "status", "needs_review", "occurred_at"]
    list_filter = ["status", "needs_review", "channel", "transcript_source", "rubric", "team"]
    search_fields = ["external_id", "source", "agent_id", "agent_name", "team"]
    date_hierarchy = "occurred_at"
    list_select_related = ["rubric"]
    actions = ["transcribe_again"]
    inlines = [RecordingRedactionInline]  # how many entities of each type were masked (qa/redaction)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return may(request.user, Capability.ADD_RECORDINGS)

    def get_form(self, request: HttpRequest, obj=None, change: bool = False, **kwargs):
        if obj is None:
            kwargs["form"] = AudioUploadForm
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is None:  # only the rubrics of the uploader's workspaces
            form.base_fields["rubric"].queryset = form.base_fields["rubric"].queryset.filter(
                scope_for(request.user).workspaces_q()
            )
        return form

    def get_fields(self, request: HttpRequest, obj=None):
        return AudioUploadForm.Meta.fields if obj is None else super().get_fields(request, obj)

    def get_inlines(self, request: HttpRequest, obj=None):
        return self.inlines if obj is not None else []  # adding: nothing redacted yet, no inline to post

    def save_model(self, request: HttpRequest, obj: Recording, form: forms.ModelForm, change: bool) -> None:
        values = form.cleaned_data
        recording, _created = recording_ingest(
            external_id=values["external_id"],
            source=values["source"],
            rubric=values["rubric"],
            audio=values["audio"],
            agent_channel=values["agent_channel"],
            customer_channel=values["customer_channel"],
            agent_id=values["agent_id"],
            agent_name=values["agent_name"],
            team=values["team"],
        )
        obj.pk = recording.pk

    @admin.action(description=_("Transcribe the audio again"))
    def transcribe_again(self, request: HttpRequest, queryset: QuerySet[Recording]) -> None:
        started = 0
        # Only failed ones: a transcript already judged is what its scores' quotes were checked against.
        for recording in queryset.exclude(audio="").filter(status=Recording.Status.FAILED):
            started += transcription_create(recording=recording)[1]
        message = ngettext("%(count)d transcription enqueued.", "%(count)d transcriptions enqueued.", started)
        self.message_user(request, message % {"count": started})


@admin.register(Transcription)
class TranscriptionAdmin(ScopedAdminMixin, ReadOnlyAdmin):
    scope_recording = "recording__"
    list_display = [
        "id", "recording", "backend", "model", "status", "attempts", "audio_seconds", "duration_ms", "created_at"
    ]
    list_filter = ["status", "backend", "model"]
    search_fields = ["recording__external_id", "error"]
    list_select_related = ["recording"]


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    """Rubric owners name judges here; the key stays in the environment, only its variable's name is stored."""

    list_display = [
        "name", "backend", "model", "evidence_mode", "mode", "temperature", "samples", "is_default", "availability"
    ]
    list_filter = ["backend", "is_default"]
    search_fields = ["name", "model"]
    # A base URL typed without its scheme is taken as https, Django 6's default, chosen now.
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    fields = [
        "name",
        ("backend", "model"),
        "base_url",
        "gguf_path",
        "api_key_variable",
        "evidence_mode",
        "mode",
        ("temperature", "samples"),
        ("prompt_price", "cached_prompt_price", "completion_price"),
        "batch_discount",
        "is_default",
    ]

    @admin.display(description=_("usable"))
    def availability(self, judge: Judge) -> str:
        return judge.unavailable_reason or _("yes")


@admin.register(JudgeRun)
class JudgeRunAdmin(ScopedAdminMixin, ReadOnlyAdmin):
    scope_recording = "recording__"
    list_display = [
        "id", "recording", "judge", "backend", "model", "prompt_version", "status", "created_at", "llm_duration_ms"
    ]
    list_filter = ["status", "judge", "backend", "model", "prompt_version"]
    search_fields = ["recording__external_id", "model", "prompt_version", "error"]
    list_select_related = ["recording"]
    inlines = [ScoreInline]


@admin.register(Score)
class ScoreAdmin(ScopedAdminMixin, ReadOnlyAdmin):
    scope_recording = "run__recording__"
    list_display = ["run", "criterion", "value", "confidence", "model_confidence", "verified", "verification_status"]
    list_filter = ["evidence_verified", "verification_status", "criterion__rubric", "criterion__key"]
    search_fields = ["evidence", "rationale", "criterion__key", "run__recording__external_id"]
    list_select_related = ["run__recording", "criterion"]

    @admin.display(description=_("verified"), boolean=True, ordering="evidence_verified")
    def verified(self, score: Score) -> bool:
        return score.evidence_verified


# The API key admin lives with the API; importing it registers it.
import qa.api.admin  # noqa: E402,F401
