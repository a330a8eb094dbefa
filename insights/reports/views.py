"""Report pages. Every figure links to the scores behind it, and every table is
also a CSV download: the same URL with ?format=csv."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields, replace
from datetime import timedelta
from itertools import chain, islice
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from access import Capability, page_requires
from qa.models import UNVERIFIED_MARK, Score
from qa.recorded import model_label
from reviews.models import Review
from reviews.figures.charts import Series, bar_chart, line_chart
from reviews.figures.export import csv_download
from reviews.figures.formatting import number, percent
from reviews.report_page import ReportFilterForm, ReportView, filter_query, review_url
from reviews.filters import GROUP_LABELS
from insights.reports.forms import DeviationScoresForm, EvidenceScoresForm, GroupFilterForm, VersionsFilterForm
from reviews.filters import Group, ReportFilters
from insights.reports.selectors import (
    CriterionDeviation,
    CriterionLine,
    DisputeTally,
    EvidenceReport,
    VersionsReport,
    WeekTally,
    deviation_recordings,
    deviation_report,
    deviation_scores,
    evidence_report,
    judge_costs,
    evidence_scores,
    previous_reviewed_version,
    versions_report,
)
from insights.scorecards.freshness import rollups_as_of
from reviews.figures.stats import MIN_N, Agreement, Tally  # MIN_N: too few pairs, greyed and left out of the charts
from reviews.periods import week_of
from reviews.selectors import blind_recordings_for, review_qualities
from rubrics.models import Rubric
from rubrics.selectors import criterion_title

PAGE_SIZE = 50


@dataclass(frozen=True)
class Column:
    field: str  # attribute of the figures, also the CSV/API name
    label: str
    fmt: Callable[[Any], str]


DEVIATION_COLUMNS = (
    Column("n", gettext_lazy("n"), str),
    Column("model_mean", gettext_lazy("Model mean"), number),
    Column("human_mean", gettext_lazy("Human mean"), number),
    Column("bias", gettext_lazy("Bias"), number),
    Column("mae", gettext_lazy("MAE"), number),
    Column("exact_agreement", gettext_lazy("Exact"), percent),
    Column("within_one", gettext_lazy("Within ±1"), percent),
    Column("qwk", gettext_lazy("QWK"), number),
    Column("rejection_rate", gettext_lazy("Rejected"), percent),
    Column("not_applicable_disputed", gettext_lazy("N/A disputed"), str),
)
TALLY_COLUMNS = (
    Column("total", gettext_lazy("Scores"), str),
    Column("unverified", gettext_lazy("Unverified"), str),
    Column("rate", gettext_lazy("Unverified rate"), percent),
)


@dataclass(frozen=True)
class Cell:
    text: str
    url: str


def _url(name: str, filters: ReportFilters, **extra: Any) -> str:
    return f"{reverse(name)}?{filter_query(filters, **extra)}"


def _reject_reason_label(reason: str) -> str:
    return str(Review.RejectReason(reason).label) if reason else _("no reason given")


def csv_links(name: str, filters: ReportFilters, **extra: Any) -> dict[str, str]:
    """The table's CSV, with `;` and decimal commas (Spanish Excel) or `,` and points."""
    return {sep: _url(name, filters, format="csv", sep=sep, **extra) for sep in (";", ",")}


def _file_stem(report: str, filters: ReportFilters) -> str:
    return f"{report}-{filters.rubric.slug}-v{filters.rubric.version}"


class DeviationView(ReportView):
    template_name = "reports/deviation.html"

    def context(self, form: ReportFilterForm) -> dict[str, Any]:
        filters = form.filters()
        report = deviation_report(filters)
        titles = [row.criterion.title for row in report.groups[Group.ALL].criteria]

        def chart(field: str, title: str) -> str:
            # A figure from too few pairs is not drawn: a bar looks as sure as any other.
            series = [
                Series(
                    str(GROUP_LABELS[group]),
                    [getattr(row.agreement, field) if row.agreement.n >= MIN_N else None for row in data.criteria],
                )
                for group, data in report.groups.items()
            ]
            return bar_chart(titles, series, title=f"{title} (n ≥ {MIN_N})", fmt=number)

        previous = previous_reviewed_version(filters.rubric) if not report.groups[Group.ALL].recordings else None
        return {
            "report": report,
            "as_of": rollups_as_of(rubric=filters.rubric),
            "columns": DEVIATION_COLUMNS,
            "min_n": MIN_N,
            "previous": previous and _url("reports:deviation", replace(filters, rubric=previous)),
            "previous_version": previous and previous.version,
            "groups": [
                {
                    "key": group,
                    "label": GROUP_LABELS[group],
                    "data": data,
                    "reject_reasons": [
                        (_reject_reason_label(reason), count) for reason, count in data.reject_reasons.items()
                    ],
                    "rows": [self._row(filters, group, row) for row in data.criteria],
                    "recordings_url": _url("reports:deviation-recordings", filters, group=group.value),
                }
                for group, data in report.groups.items()
            ],
            "disputes": [
                {
                    "criterion": row.criterion,
                    "tally": (tally := report.disputes.get(row.criterion.pk, DisputeTally())),
                    "upheld_share": percent(tally.upheld_share),
                }
                for row in report.groups[Group.ALL].criteria
            ],
            "ceiling": [
                {
                    "row": row,
                    "judge_human": number(row.judge_human_qwk),
                    "human_human": number(row.human_human_qwk),
                    "degradation": number(row.degradation),
                }
                for row in report.ceiling
            ],
            "bias_chart": chart("bias", _("Bias (model − human) per criterion")),
            "mae_chart": chart("mae", _("Mean absolute error per criterion")),
            "csv_urls": csv_links("reports:deviation", filters),
        }

    @staticmethod
    def _row(filters: ReportFilters, group: Group, row: CriterionDeviation) -> dict[str, Any]:
        """The criterion's figures on every reviewed score, then split: the judge's verified quotes and
        its unverified ones (a value the judge could not back is still the judge's mistake to measure)."""
        url = _url("reports:deviation-scores", filters, group=group.value, criterion=row.criterion.key)

        def cells(figures: Agreement, link: str) -> list[Cell]:
            return [Cell(column.fmt(getattr(figures, column.field)), link) for column in DEVIATION_COLUMNS]

        return {
            "criterion": row.criterion,
            "url": url,
            "too_few": row.agreement.n < MIN_N,
            "cells": cells(row.agreement, url),
            "split": [
                (label, cells(figures, f"{url}&evidence={key}"), figures.n < MIN_N)
                for key, label, figures in (
                    ("verified", _("verified quotes"), row.verified),
                    ("unverified", _("unverified quotes"), row.unverified),
                )
                if figures.reviewed
            ],
        }

    def csv(self, form: ReportFilterForm) -> HttpResponse:
        filters = form.filters()
        report = deviation_report(filters)
        names = [field.name for field in fields(Agreement)]
        rows = (
            [group.value, row.criterion.key, row.criterion.title, quotes, *(getattr(figures, name) for name in names)]
            for group, data in report.groups.items()
            for row in data.criteria
            for quotes, figures in (("all", row.agreement), ("verified", row.verified), ("unverified", row.unverified))
        )
        header = ["group", "criterion_key", "criterion_title", "quotes", *names]
        return csv_download(self.request, f"{_file_stem('deviation', filters)}.csv", header, rows)


def _tally_cells(tally: Tally, url: str) -> list[Cell]:
    """Totals lead to all the scores of the cell, unverified counts and rates to the failed ones."""
    return [
        Cell(str(tally.total), url),
        Cell(str(tally.unverified), f"{url}&unverified=on"),
        Cell(percent(tally.rate), f"{url}&unverified=on"),
    ]


def _tally_values(tally: Tally) -> list[Any]:
    return [getattr(tally, column.field) for column in TALLY_COLUMNS]


EVIDENCE_TABLES = ("criteria", "models", "weeks")


def evidence_table(report: EvidenceReport, table: str) -> tuple[list[str], Iterable[list[Any]]]:
    """One of the evidence page's tables, as CSV header and rows (each built only when asked for)."""
    tally = [column.field for column in TALLY_COLUMNS]
    tables = {
        "criteria": (
            ["criterion_key", "criterion_title", "description", "evidence_guidance", *tally, "unverified_by_status"],
            (
                [
                    row.criterion.key,
                    row.criterion.title,
                    row.criterion.description,
                    row.criterion.evidence_guidance,
                    *_tally_values(row.tally),
                    " ".join(f"{status}={count}" for status, count in row.unverified_by_status.items()),
                ]
                for row in report.criteria
            ),
        ),
        "models": (
            ["model", "prompt_version", *tally],
            ([row.model, row.prompt_version, *_tally_values(row.tally)] for row in report.models),
        ),
        "weeks": (
            ["week", "model", "prompt_version", *tally],
            chain(
                ([row.week.isoformat(), "", "", *_tally_values(row.tally)] for row in report.weeks),
                (
                    [week.week.isoformat(), row.model, row.prompt_version, *_tally_values(week.tally)]
                    for row in report.models
                    for week in row.weeks
                ),
            ),
        ),
    }
    return tables[table]


class EvidenceView(ReportView):
    template_name = "reports/evidence.html"

    def context(self, form: ReportFilterForm) -> dict[str, Any]:
        filters = form.filters()
        report = evidence_report(filters)
        scores = "reports:evidence-scores"
        return {
            "report": report,
            "as_of": rollups_as_of(rubric=filters.rubric),
            "costs": judge_costs(filters),
            "columns": TALLY_COLUMNS,
            "overall": _tally_cells(report.tally, _url(scores, filters)),
            "min_n": MIN_N,
            "criteria": [
                {
                    "row": row,
                    "too_few": row.tally.total < MIN_N,
                    "cells": _tally_cells(row.tally, _url(scores, filters, criterion=row.criterion.key)),
                }
                for row in report.criteria
            ],
            "models": [
                {
                    "row": row,
                    "too_few": row.tally.total < MIN_N,
                    "cells": _tally_cells(
                        row.tally, _url(scores, filters, model=row.model, prompt_version=row.prompt_version)
                    ),
                }
                for row in report.models
            ],
            "weeks": [
                {
                    "row": row,
                    "too_few": row.tally.total < MIN_N,
                    "cells": _tally_cells(row.tally, _url(scores, filters, week=row.week.isoformat())),
                }
                for row in report.weeks
            ],
            "criteria_chart": bar_chart(
                [row.criterion.title for row in report.criteria],
                [
                    Series(
                        _("Unverified rate"),
                        [row.tally.rate if row.tally.total >= MIN_N else None for row in report.criteria],
                    )
                ],
                title="{} (n ≥ {})".format(_("Unverified quotes per criterion"), MIN_N),
                fmt=percent,
            ),
            "trend_chart": self._trend(report),
            "csv_urls": {table: csv_links("reports:evidence", filters, table=table) for table in EVIDENCE_TABLES},
        }

    @staticmethod
    def _trend(report: EvidenceReport) -> str:
        # Every calendar week from the first to the last, so a week without runs is a gap, not a shortcut.
        first, last = (report.weeks[0].week, report.weeks[-1].week) if report.weeks else (None, None)
        weeks = [first + timedelta(weeks=n) for n in range((last - first).days // 7 + 1)] if first and last else []

        def aligned(rows: list[WeekTally]) -> list[float | None]:
            rates = {row.week: row.tally.rate for row in rows}
            return [rates.get(week) for week in weeks]

        series = [Series(_("All"), aligned(report.weeks))]
        series += [Series(f"{model_label(row.model)} · {row.prompt_version}", aligned(row.weeks)) for row in report.models]
        return line_chart([week.isoformat() for week in weeks], series, title=_("Unverified rate per week"), fmt=percent)

    def csv(self, form: ReportFilterForm) -> HttpResponse:
        table = self.request.GET.get("table", "criteria")
        if table not in EVIDENCE_TABLES:
            return HttpResponse(
                _("Unknown table '%(table)s'; use one of: %(tables)s.")
                % {"table": table, "tables": ", ".join(EVIDENCE_TABLES)},
                status=400,
                content_type="text/plain; charset=utf-8",
            )
        filters = form.filters()
        header, rows = evidence_table(evidence_report(filters), table)
        return csv_download(self.request, f"{_file_stem('evidence', filters)}-{table}.csv", header, rows)


def _paginate(request: HttpRequest, rows: QuerySet) -> tuple[Page, str]:
    """A page of rows and the query string without the page number, for the page links."""
    query = request.GET.copy()
    query.pop("page", None)
    return Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page")), query.urlencode()


def _scope(form: ReportFilterForm) -> str:
    """What a drill-down shows, from the filters that were given, as the page names them: "Rubric: Customer
    care, Group: All calls, Criterion: Greeting" (a choice's label and a criterion's title, never their codes)."""
    data = form.cleaned_data
    parts = []
    for name, field in form.fields.items():
        value = data.get(name)
        if not value:
            continue
        if value is True:
            parts.append(str(field.label))
            continue
        if name == "criterion" and data.get("rubric"):
            value = criterion_title(slug=data["rubric"], key=value) or value
        elif isinstance(field, forms.ChoiceField):
            value = dict(field.choices).get(value, value)
        parts.append(f"{field.label}: {value}")
    return ", ".join(parts)


SCORE_CSV_HEADER = (
    "recording_id", "external_id", "occurred_at", "team", "agent_id", "criterion_key", "model_value", "human_value",
    "human_not_applicable", "evidence", "evidence_verified", "verification_status", "rationale", "rejected", "criterion_comment",
    "review_comment", "review_url",
)  # fmt: skip


class ScoreListView(ReportView):
    """The scores behind one report cell, with the supervisor's value and comments."""

    template_name = "reports/scores.html"
    title: str
    back: str

    def rows(self, form: ReportFilterForm) -> QuerySet[Score]:
        raise NotImplementedError

    def visible_rows(self, form: ReportFilterForm) -> QuerySet[Score]:
        """The rows less the calls this user must see blind: a judgment hidden on the review page is
        hidden in every list and CSV too (reviews.selectors.blind_recordings_for)."""
        return self.rows(form).exclude(run__recording__in=blind_recordings_for(self.request.user))

    def context(self, form: ReportFilterForm) -> dict[str, Any]:
        page, query = _paginate(self.request, self.visible_rows(form))
        return {
            "title": self.title,
            "scope": _scope(form),
            "page": page,
            "rows": [(score, review_url(score.run.recording_id)) for score in page],
            "query": query,
            "back_url": _url(self.back, form.filters()),
        }

    def csv(self, form: ReportFilterForm) -> HttpResponse:
        def lines() -> Iterator[list[Any]]:
            for score in self.visible_rows(form).iterator(chunk_size=2000):
                recording = score.run.recording
                evidence = score.evidence if score.evidence_verified else f"[{UNVERIFIED_MARK}] {score.evidence}"
                yield [
                    recording.pk, recording.external_id, recording.occurred_at and recording.occurred_at.isoformat(),
                    recording.team, recording.agent_id, score.criterion.key, score.value, score.human_value,
                    bool(score.cr_not_applicable), evidence, score.evidence_verified, score.verification_status,
                    score.rationale, score.is_rejected, score.cr_comment, score.review_comment,
                    self.request.build_absolute_uri(review_url(recording.pk)),
                ]  # fmt: skip

        filters = form.filters()
        return csv_download(self.request, f"{_file_stem('scores', filters)}.csv", SCORE_CSV_HEADER, lines())


class DeviationScoresView(ScoreListView):
    form_class = DeviationScoresForm
    title = gettext_lazy("Reviewed scores")
    back = "reports:deviation"

    def rows(self, form: ReportFilterForm) -> QuerySet[Score]:
        return deviation_scores(
            form.filters(), form.cleaned_data["group"], form.cleaned_data["criterion_object"], verified=form.verified()
        )


class EvidenceScoresView(ScoreListView):
    form_class = EvidenceScoresForm
    title = gettext_lazy("Judged scores")
    back = "reports:evidence"

    def rows(self, form: ReportFilterForm) -> QuerySet[Score]:
        return evidence_scores(form.filters(), form.cell())


class DeviationRecordingsView(ReportView):
    """Per reviewed recording: the model's mean against the supervisor's adjusted mean."""

    form_class = GroupFilterForm
    template_name = "reports/recordings.html"

    def context(self, form: ReportFilterForm) -> dict[str, Any]:
        filters = form.filters()
        page, query = _paginate(self.request, deviation_recordings(filters, form.cleaned_data["group"]))
        return {
            "group_label": GROUP_LABELS[form.cleaned_data["group"]],
            "page": page,
            "rows": [(review, review_url(review.recording_id)) for review in page],
            "query": query,
            "back_url": _url("reports:deviation", filters),
        }

    def csv(self, form: ReportFilterForm) -> HttpResponse:
        filters = form.filters()
        reviews = deviation_recordings(filters, form.cleaned_data["group"])

        def rows() -> Iterator[list]:
            # The reviews' quality scores a chunk at a time: one query per 2,000 rows.
            found = reviews.iterator(chunk_size=2000)
            while chunk := list(islice(found, 2000)):
                qualities = review_qualities(reviews=chunk, rubric=filters.rubric)
                for review in chunk:
                    quality = qualities[review.pk]
                    yield [
                        review.recording_id, review.recording.external_id, " ".join(review.recording.review_reasons),
                        review.decision, review.reviewer, review.model_mean, review.adjusted_mean, review.difference,
                        review.recording.quality_score, quality.score, quality.auto_failed,
                        " ".join(quality.auto_fail_criteria),
                        self.request.build_absolute_uri(review_url(review.recording_id)),
                    ]  # fmt: skip

        header = ["recording_id", "external_id", "review_reasons", "decision", "reviewer", "model_mean",
                  "adjusted_mean", "difference", "judge_quality_score", "quality_score", "auto_failed",
                  "auto_fail_criteria", "review_url"]  # fmt: skip
        return csv_download(self.request, f"{_file_stem('recordings', filters)}.csv", header, rows())


class VersionsView(ReportView):
    """Each criterion across the rubric's versions, and the weekly rejection rate with the publish dates."""

    form_class = VersionsFilterForm
    template_name = "reports/versions.html"

    def context(self, form: VersionsFilterForm) -> dict[str, Any]:
        report = versions_report(slug=form.cleaned_data["rubric"], scope=form.scope)
        return {
            "report": report,
            "lines": [
                {
                    "line": line,
                    "cells": [self._cell(line, index, version) for index, version in enumerate(report.versions)],
                }
                for line in report.lines
            ],
            "chart": self._chart(report),
            "csv_url": f"{reverse('reports:versions')}?{urlencode({'rubric': report.slug, 'format': 'csv'})}",
        }

    @staticmethod
    def _cell(line: CriterionLine, index: int, version: Rubric) -> dict[str, Any]:
        figures = line.cells[index]
        if figures is None:
            return {"figures": None, "removed": index > line.last_version}
        query = filter_query(ReportFilters(rubric=version), criterion=figures.criterion.key)
        return {
            "figures": figures,
            "added": index == line.first_version and index > 0,
            "replaces": figures.criterion.replaces,
            "rejection": percent(figures.agreement.rejection_rate),
            "unverified": percent(figures.evidence.rate),
            "mae": number(figures.agreement.mae),
            "qwk": number(figures.agreement.qwk),
            "deviation_url": f"{reverse('reports:deviation-scores')}?{query}&group=all",
            "evidence_url": f"{reverse('reports:evidence-scores')}?{query}&unverified=on",
        }

    @staticmethod
    def _chart(report: VersionsReport) -> str:
        # Every calendar week from the first to the last, so a week without reviews is a gap.
        published = [version for version in report.versions if version.published_at]
        starts = [row.week for row in report.weeks] + [week_of(version.published_at) for version in published]
        if not starts:
            return ""
        first, last = min(starts), max(starts)
        weeks = [first + timedelta(weeks=n) for n in range((last - first).days // 7 + 1)]
        rates = {row.week: row.rate for row in report.weeks}
        marks = [(weeks.index(week_of(version.published_at)), f"v{version.version}") for version in published]
        return line_chart(
            [week.isoformat() for week in weeks],
            [Series(_("Rejection rate"), [rates.get(week) for week in weeks])],
            title=_("Rejection rate per week, with the versions' publish dates"),
            fmt=percent,
            marks=marks,
        )

    def csv(self, form: VersionsFilterForm) -> HttpResponse:
        report = versions_report(slug=form.cleaned_data["rubric"], scope=form.scope)
        header = ["line", "version", "criterion_key", "replaces", "reviewed", "rejected", "rejection_rate",
                  "scores", "unverified", "unverified_rate", "n", "mae", "qwk", "not_applicable_disputed"]  # fmt: skip
        rows = (
            [
                line.key, cell.criterion.rubric.version, cell.criterion.key, cell.criterion.replaces,
                cell.agreement.reviewed, cell.agreement.rejected, cell.agreement.rejection_rate,
                cell.evidence.total, cell.evidence.unverified, cell.evidence.rate,
                cell.agreement.n, cell.agreement.mae, cell.agreement.qwk, cell.agreement.not_applicable_disputed,
            ]  # fmt: skip
            for line in report.lines
            for cell in line.cells
            if cell is not None
        )
        return csv_download(self.request, f"versions-{report.slug}.csv", header, rows)


@page_requires(Capability.READ_REPORTS)
def reports_index(request: HttpRequest) -> HttpResponse:
    """/reports/: what each report answers, linked (issue 41: the address answered 404 while the top bar's
    Reports opened one of them). Read only: another method is not allowed."""
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    return render(request, "reports/index.html")
