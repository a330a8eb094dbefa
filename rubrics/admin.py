from __future__ import annotations

import nested_admin
from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.defaultfilters import yesno
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import formats
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from access.admin import ScopedAdminMixin
from rubrics.lint import Finding, RubricLintError, rubric_lint
from rubrics.models import Criterion, CriterionException, Rubric, RubricFrozenError, Section
from rubrics.selectors import CriterionChange, SettingChange, rubric_diff
from rubrics.services import rubric_new_version, rubric_publish


# Django's own admin messages, translated again in our catalog (which Django reads first): its
# Spanish puts a masculine article before every model's name, which reads "El rúbrica".
ADMIN_MESSAGES = (
    gettext_noop("The {name} “{obj}” was added successfully."),
    gettext_noop("The {name} “{obj}” was changed successfully."),
    gettext_noop("The {name} “{obj}” was changed successfully. You may edit it again below."),
    gettext_noop("The {name} “{obj}” was added successfully. You may add another {name} below."),
    gettext_noop("The {name} “{obj}” was changed successfully. You may add another {name} below."),
    gettext_noop("The %(name)s “%(obj)s” was deleted successfully."),
)


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


class SectionInline(DraftOnlyMixin, nested_admin.NestedTabularInline):
    model = Section
    extra = 0
    fields = ["key", "title", "weight", "order"]


class CriterionInline(DraftOnlyMixin, nested_admin.NestedStackedInline):
    model = Criterion
    extra = 0
    fields = [
        ("key", "title"), "description", ("subject", "evidence_guidance"), ("scale_min", "scale_max", "weight", "order"),
        ("section", "critical", "fail_at"), "replaces",
    ]  # fmt: skip
    inlines = [CriterionExceptionInline]  # rubric_admin.js folds each criterion to one line

    def formfield_for_foreignkey(self, db_field, request: HttpRequest, **kwargs):
        if db_field.name == "section":
            # Only this rubric's sections (none while it is being added).
            match = request.resolver_match
            rubric_id = match.kwargs.get("object_id") if match is not None else None
            kwargs["queryset"] = Section.objects.filter(rubric_id=rubric_id if str(rubric_id).isdigit() else None)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class RubricForm(forms.ModelForm):
    class Meta:
        model = Rubric
        fields = "__all__"
        widgets = {"language": forms.Select(choices=settings.LANGUAGES)}


@admin.register(Rubric)
class RubricAdmin(ScopedAdminMixin, DraftOnlyMixin, nested_admin.NestedModelAdmin):
    scope_workspace = "workspace"
    form = RubricForm
    change_form_template = "admin/rubrics/rubric/change_form.html"
    list_display = ["name", "slug", "version", "status", "language", "published_at"]
    list_filter = ["status", "language"]
    search_fields = ["name", "slug"]
    readonly_fields = ["status", "published_at", "created_at"]
    fields = [
        "workspace",
        ("name", "slug"),
        ("language", "version"),
        "description",
        ("review_confidence_threshold", "audit_rate", "warm_up_judgments"),
        ("agreement_target", "agreement_risk", "agreement_tolerance"),
        ("auto_fail", "not_applicable", "route_auto_fail"),
        ("status", "published_at", "created_at"),
    ]
    inlines = [SectionInline, CriterionInline]

    class Media:
        css = {"all": ["rubric_admin.css"]}
        js = ["rubric_admin.js"]

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return super(DraftOnlyMixin, self).has_add_permission(request)

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        # A family moves between workspaces whole, with its calls: `manage.py move_rubric`.
        readonly = super().get_readonly_fields(request, obj)
        return [*readonly, "workspace"] if obj is not None else readonly

    def get_actions(self, request: HttpRequest) -> dict:
        # Publishing and new versions are buttons on a rubric's page, behind a confirmation
        # showing the diff and the lint; a published version is never deleted (scores point at it).
        return {}

    def get_urls(self):
        return [
            path("<int:object_id>/publish/", self.admin_site.admin_view(self.publish_view), name="rubrics_rubric_publish"),
            path(
                "<int:object_id>/new-version/",
                self.admin_site.admin_view(self.new_version_view),
                name="rubrics_rubric_new_version",
            ),
            *super().get_urls(),
        ]

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context=None):
        rubric = self.get_object(request, object_id)
        context = dict(extra_context or {})
        if rubric is not None:
            findings = rubric_lint(rubric)
            context.update(
                findings=findings,
                findings_by_criterion=_by_criterion(findings),
                can_publish=rubric.is_draft and self.has_change_permission(request, rubric),
                can_new_version=not rubric.is_draft and super(DraftOnlyMixin, self).has_add_permission(request),
            )
        return super().change_view(request, object_id, form_url, extra_context=context)

    def publish_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        rubric = get_object_or_404(self.get_queryset(request), pk=object_id)
        if not (rubric.is_draft and self.has_change_permission(request, rubric)):
            raise PermissionDenied
        findings = rubric_lint(rubric)
        errors = [finding for finding in findings if finding.is_error]
        warnings = [finding for finding in findings if not finding.is_error]
        problem = ""
        if request.method == "POST" and not errors:
            if warnings and not request.POST.get("confirm_warnings"):
                problem = _("Confirm that you read the warnings, or fix them first.")
            else:
                try:
                    published = rubric_publish(rubric=rubric)
                except (RubricFrozenError, RubricLintError) as error:
                    problem = " ".join(error.messages)
                else:
                    # Name and version only: the rubric's str() adds its status, which the sentence already says.
                    done = _("Published %(name)s v%(version)s.") % {"name": published.name, "version": published.version}
                    self.message_user(request, done, messages.SUCCESS)
                    return HttpResponseRedirect(reverse("admin:rubrics_rubric_change", args=[published.pk]))
        return self._confirmation(
            request, rubric, action="publish", errors=errors, warnings=warnings, problem=problem
        )

    def new_version_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        rubric = get_object_or_404(self.get_queryset(request), pk=object_id)
        if rubric.is_draft or not super(DraftOnlyMixin, self).has_add_permission(request):
            raise PermissionDenied
        problem = ""
        if request.method == "POST":
            try:
                draft = rubric_new_version(rubric=rubric)
            except RubricFrozenError as error:
                problem = " ".join(error.messages)
            else:
                self.message_user(request, _("Created %(rubric)s.") % {"rubric": draft}, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:rubrics_rubric_change", args=[draft.pk]))
        return self._confirmation(request, rubric, action="new_version", errors=[], warnings=[], problem=problem)

    def _confirmation(self, request: HttpRequest, rubric: Rubric, **context) -> TemplateResponse:
        diff = rubric_diff(rubric=rubric)
        return TemplateResponse(
            request,
            "admin/rubrics/rubric/confirm.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "original": rubric,
                "rubric": rubric,
                "diff": diff,
                "changed": [(change, _criterion_labels(change)) for change in diff.changed],
                "settings": [_change_text(Rubric, setting) for setting in diff.settings],
                "sections_changed": [
                    (section, [_change_text(Section, value) for value in section.values])
                    for section in diff.sections_changed
                ],
                "title": _("Publish %(rubric)s?") % {"rubric": rubric}
                if context["action"] == "publish"
                else _("Create a new draft version of %(rubric)s?") % {"rubric": rubric},
                **context,
            },
        )


def _change_text(model: type[models.Model], change: SettingChange) -> str:
    """A changed setting of a rubric, section or criterion as the diff lists it: "auto-fail: Zero the call's
    score → Flag the call and keep the computed score", translated."""
    field = model._meta.get_field(change.name)
    return f"{field.verbose_name}: {_shown(field, change.before)} → {_shown(field, change.after)}"


def _shown(field: models.Field, value: object) -> str:
    """A setting's value as a person reads it: a choice by its label, yes or no, a number in their language's
    format, a dash for none."""
    if value is None or value == "":
        return "—"
    if field.choices:
        return str(dict(field.flatchoices).get(value, value))
    if isinstance(field, models.BooleanField):
        return yesno(value)
    return str(formats.localize(value))


def _criterion_labels(change: CriterionChange) -> list[str]:
    """A changed criterion's changed fields: by name, and with their values where they are short (its weight,
    section, critical, fail value...)."""
    values = {value.name: value for value in change.values}
    return [_change_text(Criterion, values[name]) if name in values else _field_label(name) for name in change.fields]


def _field_label(name: str) -> str:
    """A criterion field's translated name, for the diff."""
    if name == "exceptions":
        return str(CriterionException._meta.verbose_name_plural)
    return str(Criterion._meta.get_field(name).verbose_name)


def _by_criterion(findings: list[Finding]) -> dict[str, list[dict[str, str]]]:
    """The findings as the page's script reads them, to show each beside its criterion."""
    grouped: dict[str, list[dict[str, str]]] = {}
    for finding in findings:
        grouped.setdefault(finding.criterion, []).append(
            {"severity": finding.severity.value, "label": str(finding.severity.label), "message": finding.message}
        )
    return grouped
