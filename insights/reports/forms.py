"""Filters of the report pages and API, validated once for both."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from access.scope import Scope
from insights.reports.selectors import EvidenceCell
from reviews.filters import GROUP_LABELS, Group
from reviews.report_page import ReportFilterForm
from reviews.selectors import rubric_choices
from rubrics.models import Criterion


class VersionsFilterForm(forms.Form):
    """The versions report compares every version of one rubric: only the rubric is chosen."""

    rubric = forms.ChoiceField(label=_("Rubric"))

    def __init__(self, *args, scope: Scope, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.scope = scope
        self.fields["rubric"].choices = rubric_choices(scope=scope)


class GroupFilterForm(ReportFilterForm):
    group = forms.TypedChoiceField(
        label=_("Group"), choices=list(GROUP_LABELS.items()), coerce=Group, required=False, empty_value=Group.ALL
    )


class CriterionFieldMixin(forms.Form):
    criterion = forms.SlugField(label=_("Criterion"), required=False)

    def clean(self) -> dict:
        data = super().clean()
        key, rubric = data.get("criterion"), data.get("rubric_version")
        data["criterion_object"] = None
        if key and rubric is not None:
            data["criterion_object"] = Criterion.objects.filter(rubric=rubric, key=key).first()
            if data["criterion_object"] is None:
                self.add_error("criterion", _("No criterion '%(key)s' in this rubric version.") % {"key": key})
        return data


class DeviationScoresForm(CriterionFieldMixin, GroupFilterForm):
    evidence = forms.ChoiceField(
        label=_("Quotes"),
        required=False,
        choices=[("", _("All")), ("verified", _("Verified")), ("unverified", _("Unverified"))],
    )

    def verified(self) -> bool | None:
        return {"verified": True, "unverified": False}.get(self.cleaned_data.get("evidence") or "")


class EvidenceScoresForm(CriterionFieldMixin, ReportFilterForm):
    model = forms.CharField(label=_("Model"), required=False, max_length=200)
    prompt_version = forms.CharField(label=_("Prompt version"), required=False, max_length=64)
    week = forms.DateField(label=_("Week starting"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    unverified = forms.BooleanField(label=_("Unverified quotes only"), required=False)

    def cell(self) -> EvidenceCell:
        data = self.cleaned_data
        return EvidenceCell(
            criterion=data["criterion_object"],
            model=data["model"],
            prompt_version=data["prompt_version"],
            week=data["week"],
            unverified_only=data["unverified"],
        )
