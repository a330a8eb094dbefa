"""Charts drawn on the server as inline SVG: no JavaScript, nothing fetched from
a CDN (the machines have no internet), and they print as they look."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

PALETTE = ("#1f5fbf", "#b54708", "#067647", "#7a2e9e", "#b42318", "#5b6475")
LABEL_WIDTH, PLOT_WIDTH, VALUE_WIDTH = 190, 380, 70
BAR, BAR_GAP, ROW_GAP, TITLE = 11, 2, 10, 24
LEGEND_PER_ROW, LEGEND_ROW, LEGEND_ITEM = 4, 18, 160


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]  # one per category (bars) or per point (lines); None: nothing to draw


def _svg(width: int, height: int, title: str, parts: list[SafeString]) -> SafeString:
    """The drawing below its title, shown and also given to screen readers."""
    return format_html(
        '<svg class="chart" role="img" viewBox="0 0 {} {}" width="100%" style="max-width:{}px">'
        '<title>{}</title><text x="0" y="14" font-size="13" font-weight="600">{}</text>'
        '<g transform="translate(0 {})">{}</g></svg>',
        width,
        height + TITLE,
        width,
        title,
        title,
        TITLE,
        mark_safe("".join(parts)),
    )


# A category's name is cut to what its column holds (12 px text, about 6.6 px a character) and shown
# whole on hover: a long criterion title ran over the axis and the bars.
LABEL_CHARS = int((LABEL_WIDTH - 10) / 6.6)


def _category(text: str, y: int) -> SafeString:
    shown = text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1].rstrip() + "…"
    return format_html('<text x="0" y="{}" font-size="12"><title>{}</title>{}</text>', y, text, shown)


def _legend(series: Sequence[Series]) -> tuple[list[SafeString], int]:
    """The legend's parts and its height: rows of LEGEND_PER_ROW names."""
    parts = [
        format_html(
            '<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}" font-size="11">{}</text>',
            (index % LEGEND_PER_ROW) * LEGEND_ITEM,
            (index // LEGEND_PER_ROW) * LEGEND_ROW + 4,
            PALETTE[index % len(PALETTE)],
            (index % LEGEND_PER_ROW) * LEGEND_ITEM + 14,
            (index // LEGEND_PER_ROW) * LEGEND_ROW + 13,
            item.name,
        )
        for index, item in enumerate(series)
    ]
    return parts, (len(series) + LEGEND_PER_ROW - 1) // LEGEND_PER_ROW * LEGEND_ROW + 6


def not_enough_data(title: str) -> SafeString:
    return format_html('<p class="no-data"><strong>{}</strong>: {}</p>', title, gettext("Not enough data yet to draw it."))


def bar_chart(
    categories: Sequence[str], series: Sequence[Series], *, title: str, fmt: Callable[[float], str]
) -> SafeString:
    """Horizontal bars, one cluster per category; negative values extend left of zero. With no value to draw
    (every figure left out as too few), a sentence instead: a chart of labels only reads as a failure."""
    values = [value for item in series for value in item.values if value is not None]
    if not values:
        return not_enough_data(title)
    low, high = min([0.0, *values]), max([0.0, *values])
    span = (high - low) or 1.0

    def x(value: float) -> float:
        return LABEL_WIDTH + (value - low) / span * PLOT_WIDTH

    row_height = len(series) * (BAR + BAR_GAP) + ROW_GAP
    parts, legend = _legend(series)
    for row, category in enumerate(categories):
        top = legend + row * row_height
        parts.append(_category(category, top + BAR))
        for index, item in enumerate(series):
            value = item.values[row]
            if value is None:
                continue
            y = top + index * (BAR + BAR_GAP)
            left, right = sorted((x(0.0), x(value)))
            parts.append(
                format_html(
                    '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{} · {}: {}</title></rect>'
                    '<text x="{}" y="{}" font-size="10">{}</text>',
                    round(left, 1),
                    y,
                    round(max(right - left, 1.0), 1),
                    BAR,
                    PALETTE[index % len(PALETTE)],
                    category,
                    item.name,
                    fmt(value),
                    LABEL_WIDTH + PLOT_WIDTH + 4,
                    y + BAR - 1,
                    fmt(value),
                )
            )
    height = legend + len(categories) * row_height
    parts.append(
        format_html('<line x1="{0}" x2="{0}" y1="{1}" y2="{2}" stroke="#5b6475"/>', round(x(0.0), 1), legend, height)
    )
    return _svg(LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH, height, title, parts)


def line_chart(
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    title: str,
    fmt: Callable[[float], str],
    marks: Sequence[tuple[int, str]] = (),
) -> SafeString:
    """Lines over evenly spaced points (weeks) from zero up; a None breaks the line.
    `marks` draws a labelled vertical line at a point (a new version published that week)."""
    parts, legend = _legend(series)
    width, height, left, top, bottom = LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH, 220 + legend, 56, legend + 6, 28
    values = [value for item in series for value in item.values if value is not None]
    high = max([*values, 0.0]) or 1.0
    step = (width - left - 10) / max(len(labels) - 1, 1)

    def point(index: int, value: float) -> tuple[float, float]:
        # Rounded here: format_html escapes its arguments to strings, so no format specs there.
        return round(left + index * step, 1), round(height - bottom - value / high * (height - top - bottom), 1)

    for fraction in (0.0, 0.5, 1.0):
        _, y = point(0, high * fraction)
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#d9dde5"/><text x="0" y="{}" font-size="10">{}</text>',
                left,
                width - 10,
                y,
                y,
                y + 3,
                fmt(high * fraction),
            )
        )
    # First, middle and last labels, anchored so that none runs off the drawing.
    # With one or two points the first is also the middle or the last: "start" wins, or a one-week chart
    # drew its only date ending at the axis, its first character cut.
    shown = {len(labels) - 1: "end", len(labels) // 2: "middle", 0: "start"} if labels else {}
    if len(labels) == 2:
        shown[1] = "end"
    parts.extend(
        format_html(
            '<text x="{}" y="{}" font-size="10" text-anchor="{}">{}</text>',
            point(i, 0)[0],
            height - 8,
            anchor,
            labels[i],
        )
        for i, anchor in sorted(shown.items())
    )
    for index, label in marks:
        x, _ = point(index, 0)
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#5b6475" stroke-dasharray="4 3"/>'
                '<text x="{}" y="{}" font-size="10" text-anchor="middle">{}</text>',
                x,
                x,
                top,
                height - bottom,
                x,
                top - 1,
                label,
            )
        )
    for index, item in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        segment: list[tuple[float, float]] = []
        for i, value in enumerate([*item.values, None]):
            if value is not None:
                segment.append(point(i, value))
                parts.append(
                    format_html(
                        '<circle cx="{}" cy="{}" r="3" fill="{}"><title>{} · {}: {}</title></circle>',
                        *segment[-1],
                        color,
                        item.name,
                        labels[i],
                        fmt(value),
                    )
                )
            elif segment:
                coords = format_html_join(" ", "{},{}", segment)
                parts.append(
                    format_html('<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>', color, coords)
                )
                segment = []
    return _svg(width, height, title, parts)


def interval_chart(
    categories: Sequence[str],
    series: Sequence[Series],
    intervals: Sequence[Sequence[tuple[float, float] | None]],
    *,
    title: str,
    fmt: Callable[[float], str],
) -> SafeString:
    """A dot per category and series with its interval as a whisker, from zero up (e.g. MAE with its 95 % interval)."""
    values = [value for item in series for value in item.values if value is not None]
    values += [end for per_series in intervals for interval in per_series if interval for end in interval]
    high = max([*values, 0.0]) or 1.0

    def x(value: float) -> float:
        return round(LABEL_WIDTH + value / high * PLOT_WIDTH, 1)

    row_height = len(series) * (BAR + BAR_GAP) + ROW_GAP
    parts, legend = _legend(series)
    for row, category in enumerate(categories):
        top = legend + row * row_height
        parts.append(_category(category, top + BAR))
        for index, item in enumerate(series):
            value, interval = item.values[row], intervals[index][row]
            if value is None:
                continue
            y = top + index * (BAR + BAR_GAP) + BAR // 2
            color = PALETTE[index % len(PALETTE)]
            if interval:
                parts.append(
                    format_html(
                        '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="{}" stroke-width="2"/>',
                        x(interval[0]), x(interval[1]), y, y, color,
                    )
                )
            label = f"{fmt(value)} [{fmt(interval[0])}, {fmt(interval[1])}]" if interval else fmt(value)
            parts.append(
                format_html(
                    '<circle cx="{}" cy="{}" r="4" fill="{}"><title>{} · {}: {}</title></circle>'
                    '<text x="{}" y="{}" font-size="10">{}</text>',
                    x(value), y, color, category, item.name, label, LABEL_WIDTH + PLOT_WIDTH + 12, y + 3, label,
                )
            )
    height = legend + len(categories) * row_height
    parts.append(format_html('<line x1="{0}" x2="{0}" y1="{1}" y2="{2}" stroke="#5b6475"/>', x(0.0), legend, height))
    return _svg(LABEL_WIDTH + PLOT_WIDTH + VALUE_WIDTH + 80, height, title, parts)
