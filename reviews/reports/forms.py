"""Filters of the report pages and API, validated once for both."""

from __future__ import annotations

from django import forms
from django.db.models import Case, When
from django.utils.translation import gettext_lazy as _

from access.scope import Scope
from reviews.forms import clean_date_range
from reviews.reports.selectors import EvidenceCell, Group, ReportFilters
from reviews.selectors import rubric_choices, rubric_version_choices
from rubrics.models import Criterion, Rubric
from rubrics.selectors import rubrics_in

GROUP_LABELS = {
    Group.RANDOM_AUDIT: _("Random audit"),
    Group.WARM_UP: _("Warm-up"),
    Group.FLAGGED: _("Flagged"),
    Group.ALL: _("All reviewed"),
}


class VersionsFilterForm(forms.Form):
    """The versions report compares every version of one rubric: only the rubric is chosen."""

    rubric = forms.ChoiceField(label=_("Rubric"))

    def __init__(self, *args, scope: Scope, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.scope = scope
        self.fields["rubric"].choices = rubric_choices(scope=scope)


class ReportFilterForm(forms.Form):
    rubric = forms.ChoiceField(label=_("Rubric"))
    version = forms.TypedChoiceField(label=_("Version"), required=False, coerce=int, empty_value=None)
    date_from = forms.DateField(label=_("Calls from"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label=_("Calls to"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    team = forms.CharField(label=_("Team"), required=False, max_length=100)
    agent = forms.CharField(label=_("Agent id"), required=False, max_length=100)

    def __init__(self, *args, scope: Scope, **kwargs) -> None:
        """`scope`: the reader's (access.scope.scope_for or scope_for_request): its rubrics, its calls."""
        super().__init__(*args, **kwargs)
        self.scope = scope
        self.fields["rubric"].choices = rubric_choices(scope=scope)
        # The chosen rubric's versions, from a list: a typed number could name one that doesn't exist.
        slugs = dict(self.fields["rubric"].choices)
        slug = self.data.get("rubric")
        if slug not in slugs:  # unknown or garbage (a NUL byte): the rubric field says so, nothing is queried
            slug = next(iter(slugs), "")
        self.fields["version"].choices = [("", _("the published version")), *rubric_version_choices(slug, scope=scope)]

    def clean(self) -> dict:
        data = super().clean()
        clean_date_range(self, data)
        if data.get("rubric"):
            data["rubric_version"] = self._rubric_version(data["rubric"], data.get("version"))
        return data

    def _rubric_version(self, slug: str, version: int | None) -> Rubric | None:
        versions = rubrics_in(self.scope).filter(slug=slug).exclude(status=Rubric.Status.DRAFT)
        if version is not None:
            found = versions.filter(version=version).first()
            if found is None:
                self.add_error("version", _("This rubric has no published version %(version)s.") % {"version": version})
            return found
        # The published version; once archived (a newer one replaced it), the latest.
        return versions.order_by(Case(When(status=Rubric.Status.PUBLISHED, then=0), default=1), "-version").first()

    def filters(self) -> ReportFilters:
        data = self.cleaned_data
        return ReportFilters(
            rubric=data["rubric_version"],
            date_from=data["date_from"],
            date_to=data["date_to"],
            team=data["team"],
            agent=data["agent"],
            scope=self.scope,
        )


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
