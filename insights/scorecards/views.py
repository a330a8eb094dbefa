"""Scorecard pages: every team and agent, and one agent's page. ?format=csv downloads the figures."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.text import slugify
from django.utils.translation import gettext as _

from access import Capability, may_coach, page_requires
from access.scope import scope_for
from core.memory import collector_paused
from reviews.figures.charts import Series, line_chart
from reviews.figures.export import csv_download
from reviews.filters import ReportFilters
from reviews.figures.stats import MIN_AUDITED, POWER_TUNING_FROM, Estimate
from reviews.report_page import filters_refused, query_with_default_rubric, review_url
from insights.scorecards.forms import AgentForm, ScorecardFilterForm, ScorecardForm
from insights.scorecards.cells import CellWords, cell_format, cell_view, why_figures_are_missing
from insights.scorecards.selectors import OVERALL, AgentCriterion, agent_card, scorecard
from insights.selfreview.selectors import agent_agreement
from insights.scorecards.freshness import rollups_as_of

ESTIMATE_FIELDS = (
    "judged_n", "unverified_n", "known_n", "estimated_n", "waiting_n", "audited_n", "judge_mean",
    "human_audit_mean", "estimate", "ci_low", "ci_high", "corrected", "correction_level", "correction_n",
    "power_tuned",
)  # fmt: skip


# Logged in and allowed to read the reports (supervisors, rubric owners); the pages only read.
reader = page_requires(Capability.READ_REPORTS)


def estimate_values(estimate: Estimate) -> list[Any]:
    low, high = estimate.ci or (None, None)
    return [
        estimate.judged_n, estimate.unverified_n, estimate.known_n, estimate.estimated_n, estimate.waiting_n,
        estimate.audited_n, estimate.judge_mean, estimate.human_audit_mean, estimate.estimate, low, high,
        estimate.corrected, estimate.correction_level or "", estimate.correction_n, estimate.power_tuned,
    ]  # fmt: skip


def _query(filters: ReportFilters, **extra: Any) -> str:
    params = {
        "rubric": filters.rubric.slug,
        "version": filters.rubric.version,
        "since": filters.date_from and filters.date_from.isoformat(),
        "until": filters.date_to and filters.date_to.isoformat(),
        **extra,
    }
    return urlencode({key: value for key, value in params.items() if value not in (None, "")})


def _file_stem(name: str, filters: ReportFilters) -> str:
    return f"{name}-{filters.rubric.slug}-v{filters.rubric.version}"


def _form(request: HttpRequest, form_class: type[ScorecardFilterForm]) -> ScorecardFilterForm:
    scope = scope_for(request.user)
    return form_class(query_with_default_rubric(request.GET, scope), scope=scope)


@reader
@collector_paused()  # thousands of cells rendered as small objects: core.memory
def scorecard_page(request: HttpRequest) -> HttpResponse:
    form = _form(request, ScorecardForm)
    if not form.is_valid():
        return filters_refused(request, "scorecards/scorecard.html", form)
    filters = form.filters()
    card = scorecard(filters, sort=form.cleaned_data["sort"] or OVERALL)
    if request.GET.get("format") == "csv":
        rows = (
            [row.team, row.agent_id or "", row.agent_name or "", column.key, *estimate_values(cell)]
            for row in card.rows
            for column, cell in zip(card.columns, row.cells, strict=True)
        )
        header = ["team", "agent_id", "agent_name", "criterion_key", *ESTIMATE_FIELDS]
        return csv_download(request, f"{_file_stem('scorecard', filters)}.csv", header, rows)
    agent_url = reverse("scorecards:agent")
    words = CellWords.current()
    coach_url = _coach_urls(request, card)
    rows = [
        {
            "row": row,
            "url": row.agent_id and f"{agent_url}?{_query(filters, agent=row.agent_id)}",
            "cells": _overall_first(
                [
                    (cell_view(cell, column, words), coach_url(row, column))
                    for column, cell in zip(card.columns, row.cells, strict=True)
                ]
            ),
        }
        for row in card.rows
    ]
    return render(
        request,
        "scorecards/scorecard.html",
        {
            "form": form,
            "card": card,
            "columns": _overall_first(card.columns),
            "sorted_by": form.cleaned_data["sort"] or OVERALL,
            "sort_urls": {column.key: f"?{_query(filters, sort=column.key)}" for column in card.columns},
            "rows": rows,
            "may_coach_any": any(url for item in rows for _, url in item["cells"]),
            "as_of": rollups_as_of(rubric=filters.rubric),
            "totals": [
                {
                    "column": column,
                    "judge_mean": cell_format(column)(total.judge_mean),
                    "human_mean": cell_format(column)(total.human_audit_mean),
                    "cell": cell_view(total, column, words),
                }
                for column, total in zip(card.columns, card.totals, strict=True)
            ],
            "min_audited": MIN_AUDITED,
            "power_tuning_from": POWER_TUNING_FROM,
            "csv_url": f"?{_query(filters, sort=form.cleaned_data['sort'], format='csv')}",
        },
    )


def _coach_urls(request: HttpRequest, card: Any) -> Any:
    """A function giving an agent's criterion cell its link to a new coaching session on that criterion, or None
    where the reader may not coach that agent (access.may_coach: the coaching service's own rule), on a team's
    row and in the overall column."""
    scope = scope_for(request.user)
    workspace_id = card.rubric.workspace_id
    teams: dict[str, bool] = {}
    base = f"{reverse('coaching:new')}?rubric={card.rubric.pk}"

    def url(row: Any, column: Any) -> str | None:
        if row.agent_id is None or column.key == OVERALL:
            return None
        if row.team not in teams:
            teams[row.team] = may_coach(request.user, scope, workspace_id, row.team)
        if not teams[row.team]:
            return None
        return f"{base}&agent={quote(row.agent_id, safe='')}&criterion={quote(column.key, safe='')}"

    return url


def _overall_first(items: list) -> list:
    """The page shows the overall column first, beside the names, in view on any screen (the CSV keeps it last)."""
    return [items[-1], *items[:-1]] if items else items


def _trend(criterion: AgentCriterion, agent_label: str, team_label: str) -> str:
    fmt = cell_format(criterion.column)
    weeks = criterion.weeks
    return line_chart(
        [point.week.isoformat() for point in weeks],
        [
            Series(agent_label, [point.agent.estimate for point in weeks]),
            Series(team_label, [point.team.estimate for point in weeks]),
        ],
        title=_("%(criterion)s per week") % {"criterion": criterion.column.title},
        fmt=fmt,
    )


@reader
@collector_paused()  # thousands of cells rendered as small objects: core.memory
def agent_page(request: HttpRequest) -> HttpResponse:
    form = _form(request, AgentForm)
    if not form.is_valid():
        return filters_refused(request, "scorecards/agent.html", form)
    filters = form.filters()
    card = agent_card(filters, form.cleaned_data["agent"], viewer=request.user)
    if card is None:
        raise Http404(_("This agent has no judged calls with this rubric in the period."))
    if request.GET.get("format") == "csv":
        return _agent_csv(request, card, filters)
    scope = scope_for(request.user)
    coaches = may_coach(request.user, scope, card.rubric.workspace_id, card.team)
    agent_label = card.agent_name or card.agent_id
    team_label = _("Team %(team)s") % {"team": card.team} if card.team else _("No team")
    words = CellWords.current()
    return render(
        request,
        "scorecards/agent.html",
        {
            "form": form,
            "card": card,
            "as_of": rollups_as_of(rubric=filters.rubric),
            "agent_label": agent_label,
            "team_label": team_label,
            "criteria": [
                {
                    "criterion": criterion,
                    "agent": cell_view(criterion.agent, criterion.column, words),
                    "team": cell_view(criterion.team, criterion.column, words),
                    "agent_judge_mean": cell_format(criterion.column)(criterion.agent.judge_mean),
                    "agent_human_mean": cell_format(criterion.column)(criterion.agent.human_audit_mean),
                    "team_judge_mean": cell_format(criterion.column)(criterion.team.judge_mean),
                    "team_human_mean": cell_format(criterion.column)(criterion.team.human_audit_mean),
                    "why": why_figures_are_missing(criterion.agent),
                    "chart": _trend(criterion, agent_label, team_label),
                    "coaching": [(call, review_url(call.recording_id)) for call in criterion.coaching],
                    "unverified": [(call, review_url(call.recording_id)) for call in criterion.unverified],
                }
                for criterion in card.criteria
            ],
            "may_coach": coaches,
            # The agent's self-review figure, for those who coach them only (privacy fails closed).
            "self_agreement": agent_agreement(scope=scope, rubric=card.rubric, agent_id=card.agent_id) if coaches else None,
            "back_url": f"{reverse('scorecards:scorecard')}?{_query(filters)}",
            "csv_url": f"?{_query(filters, agent=card.agent_id, format='csv')}",
        },
    )


def _agent_csv(request: HttpRequest, card: Any, filters: ReportFilters) -> HttpResponse:
    def rows() -> Iterator[list[Any]]:
        for criterion in card.criteria:
            key = criterion.column.key
            yield [key, "agent", "", *estimate_values(criterion.agent)]
            yield [key, "team", "", *estimate_values(criterion.team)]
            for point in criterion.weeks:
                yield [key, "agent", point.week.isoformat(), *estimate_values(point.agent)]
                yield [key, "team", point.week.isoformat(), *estimate_values(point.team)]

    header = ["criterion_key", "scope", "week", *ESTIMATE_FIELDS]
    return csv_download(request, f"{_file_stem('scorecard', filters)}-{slugify(card.agent_id)}.csv", header, rows())
