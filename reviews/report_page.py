"""The report pages' base, shared by the reports, the scorecards and the dashboard: the filter form (a rubric
version, the calls' days, a team and an agent, validated once for the pages and the API), the view that
validates it and renders the page or, with ?format=csv, its table, and the links that carry the filters."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.db.models import Case, When
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views import View

from access import Capability, PageAccessMixin
from access.scope import Scope, scope_for
from reviews.filters import ReportFilters
from reviews.forms import clean_date_range
from reviews.selectors import latest_reviewed_rubric, rubric_choices, rubric_version_choices
from rubrics.models import Rubric
from rubrics.selectors import rubrics_in


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


def filter_query(filters: ReportFilters, **extra: Any) -> str:
    """The filters (with the resolved rubric version, so links stay put) plus `extra`, as a query string."""
    params = {
        "rubric": filters.rubric.slug,
        "version": filters.rubric.version,
        "date_from": filters.date_from and filters.date_from.isoformat(),
        "date_to": filters.date_to and filters.date_to.isoformat(),
        "team": filters.team,
        "agent": filters.agent,
        **extra,
    }
    return urlencode({key: value for key, value in params.items() if value not in (None, "", False)})


def review_url(recording_id: int) -> str:
    return reverse("review-detail", args=[recording_id])


def filters_refused(request: HttpRequest, template_name: str, form: forms.Form) -> HttpResponse:
    """The page with its form's errors, or, on an install with no published rubric yet, what comes
    first: an empty rubric field's "This field is required" says nothing to a first visitor."""
    if not rubric_choices(scope=form.scope):
        return render(request, "reports/no_rubric.html")
    return render(request, template_name, {"form": form}, status=400)


def query_with_default_rubric(query: QueryDict, scope: Scope) -> QueryDict:
    """A report's filters as given; the first visit has none: open on the rubric version with the most recent
    reviews (else the first rubric), not on a version nobody has reviewed yet."""
    if "rubric" in query:
        return query
    latest = latest_reviewed_rubric(scope=scope)
    choices = rubric_choices(scope=scope)
    if latest is None and not choices:
        return query
    query = query.copy()
    if latest is not None:
        query["rubric"], query["version"] = latest.slug, str(latest.version)
    else:
        query["rubric"] = choices[0][0]
    return query


class ReportView(PageAccessMixin, View):
    """Validates the filters, then renders the page or, with ?format=csv, its table."""

    access_capability = Capability.READ_REPORTS
    form_class: type[ReportFilterForm] = ReportFilterForm
    template_name: str

    def get(self, request: HttpRequest) -> HttpResponse:
        scope = scope_for(request.user)
        form = self.form_class(query_with_default_rubric(request.GET, scope), scope=scope)
        if not form.is_valid():
            return filters_refused(request, self.template_name, form)
        if request.GET.get("format") == "csv":
            return self.csv(form)
        return render(request, self.template_name, {"form": form, **self.context(form)})

    def context(self, form: ReportFilterForm) -> dict[str, Any]:
        raise NotImplementedError

    def csv(self, form: ReportFilterForm) -> HttpResponse:
        raise NotImplementedError
