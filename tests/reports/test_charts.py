"""The charts' category names stay in their column: a long criterion title is cut, and whole on hover."""

from __future__ import annotations

import re

from reviews.figures.charts import LABEL_CHARS, Series, bar_chart, interval_chart
from reviews.figures.formatting import number

LONG = "El agente confirma el importe exacto de la factura y la fecha de cobro"


def test_a_long_category_name_is_cut_to_its_column_and_shown_whole_on_hover():
    charts = [
        bar_chart([LONG, "Saludo"], [Series("QWK", [0.5, 0.7])], title="t", fmt=number),
        interval_chart([LONG, "Saludo"], [Series("MAE", [0.5, 0.7])], [[(0.2, 0.8), None]], title="t", fmt=number),
    ]
    for svg in charts:
        shown = re.findall(r'<text x="0" y="\d+" font-size="12"><title>([^<]*)</title>([^<]*)</text>', str(svg))
        assert [whole for whole, _ in shown] == [LONG, "Saludo"]
        assert len(shown[0][1]) <= LABEL_CHARS and shown[0][1].endswith("…") and shown[1][1] == "Saludo"
