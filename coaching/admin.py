from django.contrib import admin

from coaching.models import CoachedCriterion, CoachingCall, CoachingComment, CoachingSession


class CoachedCriterionInline(admin.TabularInline):
    model = CoachedCriterion
    extra = 0
    raw_id_fields = ["criterion"]


class CoachingCallInline(admin.TabularInline):
    model = CoachingCall
    extra = 0
    raw_id_fields = ["recording", "score"]


class CoachingCommentInline(admin.TabularInline):
    model = CoachingComment
    extra = 0
    raw_id_fields = ["author"]


@admin.register(CoachingSession)
class CoachingSessionAdmin(admin.ModelAdmin):
    list_display = ["id", "agent_id", "team", "coach", "goal", "follow_up_on", "status", "acknowledged_at"]
    list_filter = ["status", "team"]
    search_fields = ["agent_id", "agent_name", "goal"]
    raw_id_fields = ["rubric", "coach", "acknowledged_by"]
    inlines = [CoachedCriterionInline, CoachingCallInline, CoachingCommentInline]
