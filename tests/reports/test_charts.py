"""The charts' category names stay in their column: a long criterion title is cut, and whole on hover."""

from __future__ import annotations

import re

import pytest

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


def test_a_chart_with_nothing_to_draw_says_so_in_words():
    """Every figure below the reports' n ≥ 10 is left out of a chart; with all of them left out, the chart
    was drawn with its labels only, which reads as a failure. It says, in the page's language, that there
    are not enough data yet."""
    from django.utils import translation

    for language, words in (("en", "Not enough data yet"), ("es", "Todavía no hay datos suficientes")):
        with translation.override(language):
            empty = str(bar_chart(["Saludo", "Cierre"], [Series("QWK", [None, None])], title="QWK (n ≥ 10)", fmt=number))
        assert "<svg" not in empty and "QWK (n ≥ 10)" in empty and words in empty, empty
    drawn = str(bar_chart(["Saludo", "Cierre"], [Series("QWK", [None, 0.5])], title="QWK (n ≥ 10)", fmt=number))
    assert "<svg" in drawn and "Not enough data" not in drawn


@pytest.mark.django_db
def test_the_evidence_reports_empty_chart_is_a_sentence(client):
    from tests.factories import UserFactory, judged_recording, published_rubric

    rubric = published_rubric(criteria=2, slug="few", name="Few")
    judged_recording(rubric=rubric)  # 2 scores: under 10, every bar left out
    client.force_login(UserFactory(groups=["Supervisors"]))
    page = client.get("/reports/evidence/", {"rubric": "few"}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    charts = [part.split("</div>", 1)[0] for part in page.split('<div class="charts"')[1:]]
    per_criterion = next(chart for chart in charts if "per criterion" in chart)
    assert "<svg" not in per_criterion and "Not enough data yet" in per_criterion
