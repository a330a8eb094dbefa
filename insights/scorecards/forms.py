"""Filters of the scorecard pages and API: the reports' rubric and version, and the calls' period."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from reviews.filters import ReportFilters
from reviews.report_page import ReportFilterForm


class ScorecardFilterForm(ReportFilterForm):
    # The period is named as in the API (since/until); a scorecard covers every team and agent.
    date_from = date_to = team = agent = None
    since = forms.DateField(label=_("Calls from"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(label=_("Calls to"), required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self) -> dict:
        data = super().clean()
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            self.add_error("until", _("The end date is before the start date."))
        return data

    def filters(self) -> ReportFilters:
        data = self.cleaned_data
        return ReportFilters(
            rubric=data["rubric_version"], date_from=data["since"], date_to=data["until"], scope=self.scope
        )


class ScorecardForm(ScorecardFilterForm):
    # Set by the columns' headings (a link each), kept when the filters are applied: an empty text box
    # asking for a criterion's key was no way to choose one.
    sort = forms.SlugField(
        label=_("Sort by"),
        required=False,
        help_text=_("A criterion key, or 'overall' (the default)."),
        widget=forms.HiddenInput,
    )

    def clean(self) -> dict:
        data = super().clean()
        rubric, sort = data.get("rubric_version"), data.get("sort")
        if rubric is not None and sort and sort != "overall" and not rubric.criteria.filter(key=sort).exists():
            self.add_error("sort", _("No criterion '%(key)s' in this rubric version.") % {"key": sort})
        return data


class ScorecardAPIForm(ScorecardFilterForm):
    group = forms.ChoiceField(
        label=_("Group"),
        choices=[("agent", _("Agent")), ("team", _("Team"))],
        required=False,
        help_text=_("One row per agent (the default) or per team."),
    )


class AgentForm(ScorecardFilterForm):
    agent = forms.CharField(label=_("Agent id"), max_length=100, widget=forms.HiddenInput)
