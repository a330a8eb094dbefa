"""The effect as the session page shows it: each figure in the request's language, intervals in brackets."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.formats import get_format

from coaching.effect import Difference
from coaching.selectors import EffectRow, SummaryRow
from reviews.figures.formatting import number, percent
from reviews.figures.stats import Estimate


@dataclass(frozen=True)
class Figure:
    value: str
    interval: str  # "" where there is none


@dataclass(frozen=True)
class EffectView:
    title: str
    key: str
    before: Figure
    after: Figure
    change: Figure
    team_change: Figure | None  # None for the agent: no team figure is theirs to read
    effect: Figure | None
    audited_share: str
    too_thin: bool
    more_audited: int
    calls_before: int
    calls_after: int


def _figure(item: Estimate | Difference, mark: str, signed: bool = False) -> Figure:
    if item.estimate is None:
        return Figure("—", "")
    fmt = (lambda v: ("+" if v > 0 else "") + number(v, 2, mark)) if signed else (lambda v: number(v, 2, mark))
    interval = f"[{fmt(item.ci[0])}, {fmt(item.ci[1])}]" if item.ci is not None else ""
    return Figure(fmt(item.estimate), interval)


def effect_rows(rows: list[EffectRow], *, show_team: bool) -> list[EffectView]:
    mark = get_format("DECIMAL_SEPARATOR")
    views = []
    for row in rows:
        e = row.effect
        views.append(
            EffectView(
                title=row.criterion.title,
                key=row.criterion.key,
                before=_figure(e.before, mark),
                after=_figure(e.after, mark),
                change=_figure(e.change, mark, signed=True),
                team_change=_figure(e.team_change, mark, signed=True) if show_team else None,
                effect=_figure(e.effect, mark, signed=True) if show_team else None,
                audited_share=percent(e.audited_share),
                too_thin=e.too_thin,
                more_audited=e.more_audited,
                calls_before=e.before.known_n + e.before.estimated_n,
                calls_after=e.after.known_n + e.after.estimated_n,
            )
        )
    return views


@dataclass(frozen=True)
class SummaryView:
    criterion: str
    coach: str
    sessions: int
    effect: Figure


def summary_rows(rows: list[SummaryRow]) -> list[SummaryView]:
    mark = get_format("DECIMAL_SEPARATOR")
    return [SummaryView(r.criterion, r.coach, r.sessions, _figure(r.effect, mark, signed=True)) for r in rows]
