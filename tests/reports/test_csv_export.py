"""Every CSV export: a BOM, `;` and decimal commas in Spanish (or `?sep=` chosen), and no formula a spreadsheet runs."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from qa.models import JudgeRun
from reviews.models import Review
from reviews.figures.export import BOM, FORMULA_STARTS
from rubrics.services import rubric_publish
from tests.factories import CriterionFactory, RubricFactory, judged_recording
from tests.reports.conftest import AUDIT, LOW, REJECT, add_review, at

pytestmark = pytest.mark.django_db

# What an attacker (or an unlucky transcript) could put in a text field: each starts a formula in Excel.
PAYLOADS = {
    "title": "=HYPERLINK(\"http://evil.example\",\"Greets\")",
    "model": "@SUM(1+1)*cmd|' /C calc'!A0",
    "external_id": "+1+cmd|' /C calc'!A0",
    "team": "-2+3",
    "agent_id": "\tagent",
    "evidence": "=1+1",
    "criterion_comment": "\r=2+2",
    "review_comment": "@comment",
    "reviewer": "=reviewer",
}


@pytest.fixture
def hostile(db):
    """One reviewed recording whose every free-text field starts a formula."""
    rubric = RubricFactory(slug="hostile", name="Hostile")
    CriterionFactory(rubric=rubric, key="c1", title=PAYLOADS["title"], description="-5 points", order=1)
    rubric = rubric_publish(rubric=rubric)
    recording = judged_recording(
        rubric=rubric,
        values={"c1": 2},
        review_reasons=[AUDIT, LOW],
        external_id=PAYLOADS["external_id"],
        team=PAYLOADS["team"],
        agent_id=PAYLOADS["agent_id"],
        occurred_at=at(1, 9),
    )
    JudgeRun.objects.filter(pk=recording.current_run_id).update(model=PAYLOADS["model"], prompt_version="+p")
    recording.current_run.scores.update(evidence=PAYLOADS["evidence"], rationale="-")
    review = add_review(
        recording,
        REJECT,
        when=at(10),
        entries={"c1": {"adjusted_value": 4, "comment": PAYLOADS["criterion_comment"]}},
        comment=PAYLOADS["review_comment"],
        adjusted_mean=3.0,
    )
    Review.objects.filter(pk=review.pk).update(reviewer=PAYLOADS["reviewer"])
    return recording


EXPORTS = [
    ("reports:deviation", {}),
    ("reports:evidence", {"table": "criteria"}),
    ("reports:evidence", {"table": "models"}),
    ("reports:evidence", {"table": "weeks"}),
    ("reports:deviation-scores", {"group": "all", "criterion": "c1"}),
    ("reports:evidence-scores", {}),
    ("reports:deviation-recordings", {}),
]


def download(client, name: str, query: dict, **headers) -> str:
    response = client.get(reverse(name), {"rubric": "hostile", "format": "csv", **query}, **headers)
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content).decode("utf-8")


@pytest.mark.parametrize(("name", "query"), EXPORTS, ids=[f"{n}-{q.get('table', '')}" for n, q in EXPORTS])
def test_no_cell_of_any_export_starts_a_formula(client, supervisor, hostile, name, query):
    client.force_login(supervisor)
    text = download(client, name, {**query, "sep": ","})
    rows = list(csv.reader(io.StringIO(text.removeprefix(BOM))))
    cells = [cell for row in rows[1:] for cell in row]
    assert cells, "the export has rows"
    dangerous = [cell for cell in cells if cell.startswith(FORMULA_STARTS) and not _is_number(cell)]
    assert dangerous == []
    # The payload is still there, readable, behind the apostrophe.
    assert any(cell.startswith("'") and cell[1:] in PAYLOADS.values() for cell in cells)


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_spanish_exports_open_in_excel_with_semicolons_and_decimal_commas(client, supervisor, hostile):
    client.force_login(supervisor)
    text = download(client, "reports:deviation-recordings", {}, HTTP_ACCEPT_LANGUAGE="es")
    assert text.startswith(BOM)
    rows = list(csv.DictReader(io.StringIO(text.removeprefix(BOM)), delimiter=";"))
    assert (rows[0]["model_mean"], rows[0]["adjusted_mean"], rows[0]["difference"]) == ("2,0", "3,0", "-1,0")

    english = download(client, "reports:deviation-recordings", {}, HTTP_ACCEPT_LANGUAGE="en")
    rows = list(csv.DictReader(io.StringIO(english.removeprefix(BOM))))
    assert english.startswith(BOM) and (rows[0]["model_mean"], rows[0]["difference"]) == ("2.0", "-1.0")


def test_the_separator_can_be_chosen_and_a_bad_choice_is_named(client, supervisor, hostile):
    client.force_login(supervisor)
    text = download(client, "reports:deviation", {"sep": ","}, HTTP_ACCEPT_LANGUAGE="es")
    assert text.removeprefix(BOM).startswith("group,criterion_key,")
    text = download(client, "reports:deviation", {"sep": ";"}, HTTP_ACCEPT_LANGUAGE="en")
    assert text.removeprefix(BOM).startswith("group;criterion_key;")
    response = client.get(
        reverse("reports:deviation"), {"rubric": "hostile", "format": "csv", "sep": "|"}, HTTP_ACCEPT_LANGUAGE="en"
    )
    assert response.status_code == 400 and "Unknown separator '|'" in response.content.decode()


def test_the_pages_link_both_separators(client, supervisor, hostile):
    client.force_login(supervisor)
    page = client.get(reverse("reports:deviation"), {"rubric": "hostile"}, HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "format=csv&amp;sep=%3B" in page and "format=csv&amp;sep=%2C" in page
