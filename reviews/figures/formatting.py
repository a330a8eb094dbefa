"""Figures as a page shows them: the language's decimal mark, a dash for no figure."""

from __future__ import annotations

from django.utils.formats import get_format


def number(value: float | None, places: int = 2, decimal_mark: str | None = None) -> str:
    """`value` with the language's decimal mark (`decimal_mark`, when the caller looked it up once for many
    figures) and no thousands separator. Not number_format: a scorecard formats thousands of figures, and it
    costs ten times this."""
    if value is None:
        return "—"
    return f"{value:.{places}f}".replace(".", decimal_mark or get_format("DECIMAL_SEPARATOR"))


def percent(value: float | None) -> str:
    return "—" if value is None else f"{number(value * 100, 1)} %"
