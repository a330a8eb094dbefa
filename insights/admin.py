from django.contrib import admin

from insights.selfreview.models import SelfReview, SelfReviewValue


class SelfReviewValueInline(admin.TabularInline):
    model = SelfReviewValue
    extra = 0
    can_delete = False
    readonly_fields = ["criterion", "value", "not_applicable"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(SelfReview)
class SelfReviewAdmin(admin.ModelAdmin):
    """Read only: an agent's blind scores are theirs; an admin may look, or delete one to offer the call again."""

    list_display = ["id", "agent_id", "recording", "user", "skipped", "created_at"]
    list_filter = ["skipped"]
    search_fields = ["agent_id", "recording__external_id", "user__username"]
    readonly_fields = ["recording", "user", "agent_id", "skipped", "created_at"]
    inlines = [SelfReviewValueInline]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
