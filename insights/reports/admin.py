"""The rubric's admin page with each criterion's health beside its wording, and its routing guarantee.

The figures are human values, which live here, above `rubrics`: this admin extends the
rubrics' own, and the URLconf (the composition root) imports it so it replaces it.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from access.scope import scope_for
from reviews.filters import ReportFilters
from reviews.report_page import filter_query
from insights.reports.selectors import rubric_health
from routing.selectors import routing_table
from rubrics.admin import RubricAdmin
from rubrics.lint import rubric_lint
from rubrics.models import Rubric


class RubricHealthAdmin(RubricAdmin):
    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context=None):
        rubric = self.get_object(request, object_id)
        context = dict(extra_context or {})
        # The reader's calls: a staff supervisor limited to teams reads their teams' figures only.
        scope = scope_for(request.user)
        if rubric is not None and (health := rubric_health(slug=rubric.slug, scope=scope)) is not None:
            findings: dict[str, list] = {}
            for finding in rubric_lint(health.current):
                findings.setdefault(finding.criterion, []).append(finding)
            context["health"] = health
            context["health_rows"] = [
                {
                    "row": row,
                    "findings": findings.get(row.current.criterion.key, []),
                    "versions": [
                        {"figures": figures, "query": filter_query(ReportFilters(rubric=figures.criterion.rubric))}
                        for figures in (row.current, row.previous)
                        if figures is not None
                    ],
                }
                for row in health.criteria
            ]
        if rubric is not None and rubric.status != Rubric.Status.DRAFT:
            # What the random audit certified for this version (a draft is judged by no one yet).
            context["routing"] = routing_table(rubric=rubric)
            context["routing_target_percent"] = round(rubric.agreement_target * 100)
            context["routing_confidence_percent"] = round((1 - rubric.agreement_risk) * 100)
        return super().change_view(request, object_id, form_url, extra_context=context)


admin.site.unregister(Rubric)
admin.site.register(Rubric, RubricHealthAdmin)
