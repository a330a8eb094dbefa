from __future__ import annotations

import nested_admin
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from rubrics.models import Criterion, CriterionException, Rubric, RubricFrozenError
from rubrics.services import rubric_new_version, rubric_publish


class DraftOnlyMixin:
    """Published and archived versions are shown read-only: scores point at them."""

    def _editable(self, obj: Rubric | Criterion | None) -> bool:
        rubric = obj.rubric if isinstance(obj, Criterion) else obj
        return rubric is None or rubric.is_draft

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return super().has_change_permission(request, obj) and self._editable(obj)

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return super().has_delete_permission(request, obj) and self._editable(obj)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return super().has_add_permission(request, obj) and self._editable(obj)


class CriterionExceptionInline(DraftOnlyMixin, nested_admin.NestedTabularInline):
    model = CriterionException
    extra = 0
    fields = ["text", "outcome", "order"]


class CriterionInline(DraftOnlyMixin, nested_admin.NestedStackedInline):
    model = Criterion
    extra = 0
    fields = [("key", "title"), "description", "evidence_guidance", ("scale_min", "scale_max", "order"), "replaces"]
    inlines = [CriterionExceptionInline]


@admin.register(Rubric)
class RubricAdmin(DraftOnlyMixin, nested_admin.NestedModelAdmin):
    list_display = ["name", "slug", "version", "status", "language", "published_at"]
    list_filter = ["status", "language"]
    search_fields = ["name", "slug"]
    readonly_fields = ["status", "published_at", "created_at"]
    fields = [
        ("name", "slug"),
        ("language", "version"),
        "description",
        ("review_confidence_threshold", "audit_rate", "warm_up_judgments"),
        ("status", "published_at", "created_at"),
    ]
    inlines = [CriterionInline]
    actions = ["publish", "new_version"]

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return super(DraftOnlyMixin, self).has_add_permission(request)

    @admin.action(description=_("Publish the selected drafts"), permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet[Rubric]) -> None:
        self._run(request, queryset, rubric_publish, _("Published %(rubric)s."))

    @admin.action(description=_("Create a new draft version"), permissions=["add"])
    def new_version(self, request: HttpRequest, queryset: QuerySet[Rubric]) -> None:
        self._run(request, queryset, rubric_new_version, _("Created %(rubric)s."))

    def _run(self, request: HttpRequest, queryset: QuerySet[Rubric], service, success: str) -> None:
        for rubric in queryset:
            try:
                result = service(rubric=rubric)
            except RubricFrozenError as error:
                self.message_user(request, f"{rubric}: {' '.join(error.messages)}", messages.ERROR)
            else:
                self.message_user(request, success % {"rubric": result}, messages.SUCCESS)
