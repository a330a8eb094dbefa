"""The dashboard: where QA leads and supervisors land, with the figures that need attention first."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.utils.html import format_html

from access import Capability, may

from insights.dashboard.selectors import dashboard
from insights.scorecards.freshness import rollups_as_of
from qa.selectors import judge_default_model
from reviews.figures.charts import Series, bar_chart, interval_chart
from reviews.figures.formatting import number, percent
from reviews.periods import week_end, week_start
from reviews.report_page import ReportFilterForm
from reviews.report_page import ReportView, filter_query
from reviews.filters import ReportFilters

DEFAULT_WEEKS = 12  # the period a first visit opens on: this week and the eleven before


def _queue_url(filters: ReportFilters, **extra: str) -> str:
    """The review queue with the dashboard's filters (the queue filters by rubric, every version)."""
    params = {"rubric": filters.rubric.slug, "team": filters.team, "agent": filters.agent, **extra}
    if filters.date_from:
        params["date_from"] = filters.date_from.isoformat()
    if filters.date_to:
        params["date_to"] = filters.date_to.isoformat()
    return f"{reverse('review-queue')}?{urlencode({k: v for k, v in params.items() if v})}"


class DashboardView(ReportView):
    template_name = "dashboard/index.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return super().get(_with_period(request))

    def context(self, form: ReportFilterForm) -> dict[str, Any]:
        filters = form.filters()
        board = dashboard(filters)
        query = filter_query(filters)
        weeks = [week.week.isoformat() if week.week else _("no date") for week in board.weeks]
        trend = ""
        # A chart with no point drew its axes alone (issue 41, the demo's calls): say why instead.
        drawable = any(
            value is not None for week in board.weeks for value in (week.judge.mean, week.human.mean, week.estimate.estimate)
        )
        if board.weeks and not drawable:
            trend = format_html(
                '<p class="muted" id="trend-empty">{}</p>',
                ngettext(
                    "Nothing to draw yet: no call of the period has a quality score of verified values, and %(n)s call waits for a supervisor's review because a quote of it did not verify.",
                    "Nothing to draw yet: no call of the period has a quality score of verified values, and %(n)s calls wait for a supervisor's review because a quote of theirs did not verify.",
                    board.quality.waiting_n,
                ) % {"n": board.quality.waiting_n},
            )
        elif board.weeks:
            trend = interval_chart(
                weeks,
                [
                    Series(_("Judge"), [week.judge.mean for week in board.weeks]),
                    Series(_("Audited supervisors"), [week.human.mean for week in board.weeks]),
                    Series(_("Estimate"), [week.estimate.estimate for week in board.weeks]),
                ],
                [
                    [week.judge.ci for week in board.weeks],
                    [week.human.ci for week in board.weeks],
                    [week.estimate.ci for week in board.weeks],
                ],
                title=_("Quality score by week, with 95 % intervals"),
                fmt=lambda value: number(value, 1),
            )
        auto_fail = ""
        if board.auto_fail and board.judged:
            auto_fail = bar_chart(
                [rate.criterion.title for rate in board.auto_fail],
                [Series(_("Auto-fail rate"), [rate.rate for rate in board.auto_fail])],
                title=_("Auto-fail rate by critical criterion"),
                fmt=percent,
            )
        return {
            "board": board,
            "trend_chart": trend,
            "auto_fail_chart": auto_fail,
            "auto_fail_rate": board.auto_failed / board.judged if board.judged else None,
            "no_review_percent": round(board.no_review.share * 100) if board.no_review.share is not None else None,
            "no_review_target": round(board.no_review.target * 100),
            "no_review_confidence": round((1 - board.no_review.risk) * 100),
            "judge_model": judge_default_model(),
            "as_of": rollups_as_of(rubric=filters.rubric),
            # Most quotes unverified: say why and what to do, on the tile that shows it.
            "evidence_mostly_unverified": board.evidence.rate is not None and board.evidence.rate > 0.5,
            "links": {
                "scorecard": f"{reverse('scorecards:scorecard')}?{query}",
                "evidence": f"{reverse('reports:evidence')}?{query}",
                "deviation": f"{reverse('reports:deviation')}?{query}",
                "queue": _queue_url(filters),
                # A lead resolves them; a supervisor follows their own reviews' (disputes).
                "disputes": reverse("disputes:list") + "?status=open"
                if may(self.request.user, Capability.RESOLVE_DISPUTES)
                else reverse("disputes:reviews") + "?status=disputed",
                "auto_fail": _queue_url(filters, reason="auto_fail"),
            },
        }

    def csv(self, form: ReportFilterForm) -> HttpResponse:
        raise Http404  # each tile's report has its table as CSV


def _with_period(request: HttpRequest) -> HttpRequest:
    """A first visit (no dates) opens on the last DEFAULT_WEEKS weeks. Dates given are widened to whole
    weeks, Monday to Sunday: the page's figures are weekly, and whole weeks are read from the weekly
    rollups alone (a period that starts on a Wednesday read its first days from the calls: 1.6 s against
    0.3 s at a million scores, bench/dashboard/README.md). The form shows the dates read, and the links
    to the reports carry them, so their figures are the same."""
    query: QueryDict = request.GET.copy()
    if "date_from" not in query and "date_to" not in query:
        today = timezone.localdate()
        query["date_from"] = (week_start(today) - timedelta(weeks=DEFAULT_WEEKS - 1)).isoformat()
    for name, whole_week in (("date_from", week_start), ("date_to", week_end)):
        try:
            day = date.fromisoformat(query.get(name, ""))
        except ValueError:
            continue  # blank, or not a date: the form says which
        query[name] = whole_week(day).isoformat()
    request.GET = query
    return request
