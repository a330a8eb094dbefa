"""A scorecard's cell as the pages show it (an estimate, its interval or why there is none, and what is behind
it), and why an agent's figures are missing: shared by the scorecard pages and the agent's own page."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from django.utils.formats import get_format
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from insights.scorecards.selectors import OVERALL, Column
from reviews.figures.formatting import number
from reviews.figures.stats import CorrectionLevel, Estimate


@dataclass(frozen=True)
class CellView:
    """A cell as shown: the estimate, its interval or why there is none, and what is behind it."""

    estimate: str
    interval: str
    counts: str
    note: str
    corrected: bool

    def __str__(self) -> str:
        # Its markup here rather than in an included template: a scorecard has thousands of cells, and
        # rendering one through the template engine cost more than computing it. One string, its parts escaped
        # as format_html escapes them (html.escape, quotes included), marked safe once: a format_html per
        # part was a fifth of the page's CPU (bench/scorecards/README.md). Safe HTML, as a form field's: the
        # template engine takes str() of what it shows, then keeps it as it is.
        uncorrected = "" if self.corrected else " uncorrected"
        html = f'<span class="estimate{uncorrected}">{escape(self.estimate)}</span>'
        if self.interval:
            html += f' <span class="interval">{escape(self.interval)}</span>'
        html += f'\n<span class="cell-counts muted">{escape(self.counts)}</span>'
        if self.note:
            html += f'\n<span class="cell-note{uncorrected}">{escape(self.note)}</span>'
        return mark_safe(html)  # every part above is escaped

    __html__ = __str__


@dataclass(frozen=True)
class CellWords:
    """A cell's words and decimal mark in the request's language: looked up once a page, not once a cell
    (a scorecard has thousands of cells, and each lookup costs about as much as the rest of the cell)."""

    counts: str
    unverified: tuple[str, ...]  # for one, for more: the two forms English and Spanish have
    waiting: tuple[str, ...]
    uncorrected: str
    all_known: str
    power_tuned: str
    pooled: dict[CorrectionLevel, str]
    decimal_mark: str

    @classmethod
    def current(cls) -> CellWords:
        return cls(
            counts=_("%(judged)s judged · %(audited)s audited · %(known)s reviewed"),
            unverified=tuple(
                ngettext(
                    "%(n)s unverified score, not counted as the judge's",
                    "%(n)s unverified scores, not counted as the judge's",
                    n,
                )
                for n in (1, 2)
            ),
            waiting=tuple(
                ngettext(
                    "%(n)s call waiting for a review, left out of the estimate",
                    "%(n)s calls waiting for a review, left out of the estimate",
                    n,
                )
                for n in (1, 2)
            ),
            # One word per cell: the page says once, above the table, what it means (fewer than MIN_AUDITED
            # audited calls); the whole sentence in every cell made a scorecard thousands of pixels wide.
            uncorrected=_("uncorrected"),
            all_known=_("every call reviewed: the supervisors' values"),
            power_tuned=_("power-tuned (PPI++)"),
            pooled={
                CorrectionLevel.TEAM: _("correction pooled from the team's %(n)s audited calls"),
                CorrectionLevel.RUBRIC: _("correction pooled from the rubric's %(n)s audited calls"),
            },
            decimal_mark=get_format("DECIMAL_SEPARATOR"),
        )


def _counted(forms: tuple[str, ...], n: int) -> str:
    return forms[n != 1] % {"n": n}


def cell_format(column: Column, decimal_mark: str | None = None) -> Callable[[float | None], str]:
    """How a column's figures are written: the overall quality with one decimal, a criterion's with two."""
    places = 1 if column.key == OVERALL else 2
    return lambda value: number(value, places, decimal_mark)


def cell_view(estimate: Estimate, column: Column, words: CellWords) -> CellView:
    fmt = cell_format(column, words.decimal_mark)
    counts = words.counts % {"judged": estimate.judged_n, "audited": estimate.audited_n, "known": estimate.known_n}
    notes = []
    if estimate.unverified_n:
        notes.append(_counted(words.unverified, estimate.unverified_n))
    if estimate.waiting_n:
        notes.append(_counted(words.waiting, estimate.waiting_n))
    if estimate.estimate is None:
        return CellView("—", "", counts, " · ".join(notes), False)
    if not estimate.corrected:
        return CellView(fmt(estimate.estimate), "", counts, " · ".join([words.uncorrected, *notes]), False)
    if estimate.estimated_n == 0:
        return CellView(fmt(estimate.estimate), "", counts, " · ".join([words.all_known, *notes]), True)
    low, high = estimate.ci
    pooled = words.pooled.get(estimate.correction_level)
    if pooled:
        notes.insert(0, pooled % {"n": estimate.correction_n})
    if estimate.power_tuned:
        notes.insert(0, words.power_tuned)
    return CellView(fmt(estimate.estimate), f"[{fmt(low)}, {fmt(high)}]", counts, " · ".join(notes), True)


def why_figures_are_missing(estimate: Estimate) -> list[str]:
    """What the agent's page says where the judge's values do not exist, or calls wait for a review."""
    reasons = []
    if estimate.judged_n == 0 and estimate.unverified_n:
        reasons.append(
            ngettext(
                "No judge's mean: the agent's only score here has an unverified quote, and an unverified score is "
                "no value.",
                "No judge's mean: all %(n)s of the agent's scores here have an unverified quote, and an unverified "
                "score is no value.",
                estimate.unverified_n,
            )
            % {"n": estimate.unverified_n}
        )
    if estimate.waiting_n:
        reasons.append(
            ngettext(
                "%(n)s call is waiting for a supervisor's review: with no judge's value and no human one, the "
                "estimate leaves it out.",
                "%(n)s calls are waiting for a supervisor's review: with no judge's value and no human one, the "
                "estimate leaves them out.",
                estimate.waiting_n,
            )
            % {"n": estimate.waiting_n}
        )
    return reasons
