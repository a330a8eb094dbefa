from __future__ import annotations

from django.contrib import admin

from qa.admin import ReadOnlyAdmin
from reviews.models import CriterionReview, Review


class CriterionReviewInline(admin.TabularInline):
    model = CriterionReview
    extra = 0
    can_delete = False
    fields = ["criterion", "adjusted_value", "not_applicable", "rejected", "comment"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    """Reviews are append-only: they are made on the review page or through the API."""

    list_display = ["recording", "decision", "reject_reason", "reviewer", "adjusted_mean", "blind", "created_at"]
    list_filter = ["decision", "reject_reason", "blind", "created_at"]
    search_fields = ["recording__external_id", "reviewer", "comment"]
    list_select_related = ["recording"]
    inlines = [CriterionReviewInline]
