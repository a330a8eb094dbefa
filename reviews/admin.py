from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from access.admin import ScopedAdminMixin
from qa.admin import JudgeRunAdmin, ReadOnlyAdmin, RecordingAdmin, ScoreAdmin
from qa.models import JudgeRun, Recording, Score
from reviews.models import CriterionReview, Review
from reviews.selectors import blind_recordings_for, recording_is_blind_for

# Blind means blind in the admin too (supervisors browse it): the judgment of a call the user must see
# blind (a random audit they have not reviewed, an open calibration they take part in) is left out of
# the lists of scores, runs and reviews, and out of the recording's own page. qa cannot know about
# reviews, so its admins are extended here.
JUDGMENT_FIELDS = ("current_run", "lowest_confidence", "current_values")


class BlindRecordingAdmin(RecordingAdmin):
    def get_fields(self, request: HttpRequest, obj: Recording | None = None):
        fields = super().get_fields(request, obj)
        if obj is not None and recording_is_blind_for(recording=obj, user=request.user):
            return [field for field in fields if field not in JUDGMENT_FIELDS]
        return fields


class BlindJudgeRunAdmin(JudgeRunAdmin):
    def get_queryset(self, request: HttpRequest) -> QuerySet[JudgeRun]:
        return super().get_queryset(request).exclude(recording__in=blind_recordings_for(request.user))


class BlindScoreAdmin(ScoreAdmin):
    def get_queryset(self, request: HttpRequest) -> QuerySet[Score]:
        return super().get_queryset(request).exclude(run__recording__in=blind_recordings_for(request.user))


for model, model_admin in ((Recording, BlindRecordingAdmin), (JudgeRun, BlindJudgeRunAdmin), (Score, BlindScoreAdmin)):
    admin.site.unregister(model)
    admin.site.register(model, model_admin)


class CriterionReviewInline(admin.TabularInline):
    model = CriterionReview
    extra = 0
    can_delete = False
    fields = ["criterion", "adjusted_value", "not_applicable", "rejected", "comment"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Review)
class ReviewAdmin(ScopedAdminMixin, ReadOnlyAdmin):
    scope_recording = "recording__"
    """Reviews are append-only: they are made on the review page or through the API."""

    list_display = ["recording", "decision", "reject_reason", "reviewer", "adjusted_mean", "blind", "created_at"]
    list_filter = ["decision", "reject_reason", "blind", "created_at"]
    search_fields = ["recording__external_id", "reviewer", "comment"]
    list_select_related = ["recording"]
    inlines = [CriterionReviewInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Review]:
        return super().get_queryset(request).exclude(recording__in=blind_recordings_for(request.user))
