"""The scorecard pages: access, cells as shown, the agent's page with its coaching list, CSV, Spanish."""

from __future__ import annotations

import csv
import io
from dataclasses import replace

import pytest
from django.urls import reverse
from django.utils import translation

from qa.models import Recording
from reviews.figures.stats import CorrectionLevel, Estimate
from insights.scorecards.selectors import Column
from insights.scorecards.cells import CellWords, cell_view
from tests.factories import UserFactory
from tests.reports.conftest import UNVERIFIED
from tests.scorecards.conftest import call

pytestmark = pytest.mark.django_db


def rows_of(response) -> list[dict[str, str]]:
    # The byte order mark is there for Excel; the English default separates with commas.
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode().removeprefix("\ufeff"))))


@pytest.mark.parametrize("page", ["scorecards:scorecard", "scorecards:agent"])
def test_pages_need_a_login_and_the_reports_permission(client, teams_data, page):
    url = reverse(page) + "?rubric=care&agent=a1"
    assert client.get(url).status_code == 302
    for user in (UserFactory(), UserFactory(is_staff=True)):  # staff status alone opens nothing (#11)
        client.force_login(user)
        assert client.get(url).status_code == 403
    readers = (UserFactory(groups=["Supervisors"]), UserFactory(groups=["Rubric owners"]))
    for user in readers:
        client.force_login(user)
        assert client.get(url).status_code == 200, user


def test_the_scorecard_shows_each_team_then_its_agents_with_estimates_and_notes(client, supervisor, teams_data):
    client.force_login(supervisor)
    response = client.get(reverse("scorecards:scorecard"), HTTP_ACCEPT_LANGUAGE="en")  # the first rubric
    # Each cell is (its view, its link to coach the agent on the criterion, or None).
    rows = [(item["row"].team, item["row"].agent_id, item["cells"][1][0]) for item in response.context["rows"]]
    assert [(team, agent) for team, agent, _ in rows] == [
        ("north", None), ("north", "a1"), ("north", "a2"), ("south", None), ("south", "a3"),
    ]  # fmt: skip  (a1's lower bound is higher since a2's four reviewed calls count with the supervisor's 1)
    a1 = next(cell for _, agent, cell in rows if agent == "a1")
    assert (a1.estimate, a1.counts, a1.note) == ("2.50", "20 judged · 10 audited · 10 reviewed", "")
    a2 = next(cell for _, agent, cell in rows if agent == "a2")
    assert a2.note == "correction pooled from the team's 14 audited calls"
    a3 = next(cell for _, agent, cell in rows if agent == "a3")
    assert a3.note == "correction pooled from the rubric's 14 audited calls"
    html = response.content.decode()
    assert "What the correction does" in html and "?rubric=care&amp;version=1&amp;agent=a1" in html
    # Each cell as markup in the page (CellView renders itself), the note of a pooled one included.
    a2_cells = html.split('agent=a2">')[1].split("</tr>")[0]
    assert '<span class="estimate">' in a2_cells and '<span class="cell-counts muted">' in a2_cells
    assert '<span class="cell-note">correction pooled from the team&#x27;s 14 audited calls</span>' in a2_cells
    assert "CellView(" not in html


def test_a_cell_without_a_correction_says_uncorrected_and_shows_no_interval(client, supervisor, db):
    from tests.factories import published_rubric

    rubric = published_rubric(criteria=1, slug="small")
    for value in (2, 4):
        call(rubric, "a", "t", {"c1": value})
    client.force_login(supervisor)
    response = client.get(reverse("scorecards:scorecard"), {"rubric": "small"}, HTTP_ACCEPT_LANGUAGE="en")
    cell = response.context["rows"][1]["cells"][1][0]  # [0]: the overall, shown first; then (view, coach link)
    assert (cell.estimate, cell.interval, cell.corrected) == ("3.00", "", False)
    assert cell.note == "uncorrected"  # once a word: the page says above the table what it means
    assert '<span class="estimate uncorrected">3.00</span>\n<span class="cell-counts muted">' in str(cell)
    assert '<span class="cell-note uncorrected">' in response.content.decode()


def test_sorting_by_a_criterion_and_refusing_an_unknown_one(client, supervisor, teams_data):
    client.force_login(supervisor)
    sorted_page = client.get(reverse("scorecards:scorecard"), {"rubric": "care", "sort": "c1"})
    assert sorted_page.status_code == 200
    # The headings sort; the filters keep the sort when applied, without a box to type a key into.
    assert '<input type="hidden" name="sort" value="c1"' in sorted_page.content.decode()
    response = client.get(reverse("scorecards:scorecard"), {"rubric": "care", "sort": "nope"})
    assert response.status_code == 400
    assert "No criterion &#x27;nope&#x27; in this rubric version." in response.content.decode()


def test_the_scorecard_csv(client, supervisor, teams_data):
    client.force_login(supervisor)
    response = client.get(reverse("scorecards:scorecard"), {"rubric": "care", "format": "csv"})
    assert response["Content-Disposition"] == 'attachment; filename="scorecard-care-v1.csv"'
    rows = {(row["team"], row["agent_id"], row["criterion_key"]): row for row in rows_of(response)}
    assert len(rows) == 5 * 2  # two teams and three agents, c1 and the overall
    a2 = rows[("north", "a2", "c1")]
    assert (a2["team"], a2["judged_n"], a2["audited_n"], a2["correction_level"], a2["correction_n"]) == (
        "north", "6", "4", "team", "14",
    )  # fmt: skip
    assert (a2["known_n"], a2["estimated_n"], a2["waiting_n"], a2["unverified_n"]) == ("4", "2", "0", "0")
    assert float(a2["estimate"]) == pytest.approx(11 / 6) and float(a2["ci_low"]) < 11 / 6 < float(a2["ci_high"])


def test_the_agent_page_compares_with_the_team_and_keeps_unverified_scores_apart(client, supervisor, teams_data):
    recording = call(teams_data, "a3", "south", {"c1": 1})
    recording.current_run.scores.update(evidence="no lo sé", evidence_verified=False, verification_status="not_found")
    client.force_login(supervisor)
    response = client.get(reverse("scorecards:agent"), {"rubric": "care", "agent": "a3"}, HTTP_ACCEPT_LANGUAGE="en")
    html = response.content.decode()
    assert "A3" in html and "Team south" in html
    c1 = response.context["criteria"][0]
    # The unverified 1 is no value: a3's reviewed 5 counts as the supervisor's 1, the three 3s are corrected.
    assert c1["agent"].estimate == "1.38" and c1["team"].estimate == "1.38"
    assert c1["agent"].note == (
        "correction pooled from the rubric's 14 audited calls · 1 unverified score, not counted as the judge's"
        " · 1 call waiting for a review, left out of the estimate"
    )
    assert "1 call is waiting for a supervisor&#x27;s review" in html
    assert '<td class="num"><span class="estimate' in html and "CellView(" not in html
    assert "<svg" in str(c1["chart"])
    coaching, unverified = html.split("Unverified scores (not evidence)")
    assert "no lo sé" not in coaching and "no lo sé" in unverified
    assert f'href="/review/{recording.pk}/"' in unverified and "NOT VERIFIED" in unverified


def test_an_agent_whose_quotes_are_all_unverified_shows_no_judge_mean_and_says_why(client, supervisor, teams_data):
    for value in (5, 5, 4):
        recording = call(teams_data, "u1", "east", {"c1": value}, reasons=(UNVERIFIED,))
        recording.current_run.scores.update(evidence_verified=False, verification_status="not_found", confidence=0)
    Recording.objects.filter(agent_id="u1").update(rollup_stale=True)  # as reverify marks what it changes
    client.force_login(supervisor)
    response = client.get(reverse("scorecards:agent"), {"rubric": "care", "agent": "u1"}, HTTP_ACCEPT_LANGUAGE="en")
    html = response.content.decode()
    c1 = response.context["criteria"][0]
    assert (c1["agent"].estimate, c1["agent_judge_mean"]) == ("—", "—")  # not 5.00, nor 4.67
    assert "1.00" not in str(c1["agent"]) and "4.67" not in html
    assert c1["why"] == [
        "No judge's mean: all 3 of the agent's scores here have an unverified quote, and an unverified score is no value.",
        "3 calls are waiting for a supervisor's review: with no judge's value and no human one, the estimate leaves "
        "them out.",
    ]
    assert "No judge&#x27;s mean: all 3 of the agent&#x27;s scores here have an unverified quote" in html
    overall = response.context["criteria"][-1]
    assert overall["agent"].estimate == "—" and overall["why"][0].startswith("No judge's mean: all 3")

    page = client.get(reverse("scorecards:scorecard"), {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE="en")
    cell = next(item["cells"][1][0] for item in page.context["rows"] if item["row"].agent_id == "u1")
    assert (cell.estimate, cell.interval) == ("—", "")
    assert cell.note == (
        "3 unverified scores, not counted as the judge's · 3 calls waiting for a review, left out of the estimate"
    )
    rows = rows_of(client.get(reverse("scorecards:agent"), {"rubric": "care", "agent": "u1", "format": "csv"}))
    assert (rows[0]["judge_mean"], rows[0]["estimate"], rows[0]["unverified_n"], rows[0]["waiting_n"]) == ("", "", "3", "3")


def test_a_cell_says_when_its_correction_was_power_tuned():
    """A hundred audited calls and more: the cell says PPI++ was used (the page's legend says what it is)."""
    estimate = Estimate(
        judged_n=400, unverified_n=0, known_n=120, estimated_n=300, waiting_n=0, audited_n=120, judge_mean=3.4,
        human_audit_mean=3.1, estimate=3.12, ci=(3.0, 3.24), corrected=True, correction_level=CorrectionLevel.CELL,
        correction_n=120, power_tuned=True,
    )  # fmt: skip
    column = Column("c1", "C1", 1, 5)
    with translation.override("en"):
        assert cell_view(estimate, column, CellWords.current()).note == "power-tuned (PPI++)"
        plain = cell_view(replace(estimate, power_tuned=False), column, CellWords.current())
    assert plain.note == "" and plain.interval == "[3.00, 3.24]"


def test_an_unknown_agent_is_404(client, supervisor, teams_data):
    client.force_login(supervisor)
    assert client.get(reverse("scorecards:agent"), {"rubric": "care", "agent": "nobody"}).status_code == 404
    assert client.get(reverse("scorecards:agent"), {"rubric": "care"}).status_code == 400


def test_the_agent_csv(client, supervisor, teams_data):
    client.force_login(supervisor)
    response = client.get(reverse("scorecards:agent"), {"rubric": "care", "agent": "a1", "format": "csv"})
    rows = rows_of(response)
    assert [(row["criterion_key"], row["scope"], row["week"]) for row in rows[:4]] == [
        ("c1", "agent", ""), ("c1", "team", ""), ("c1", "agent", "2026-03-02"), ("c1", "team", "2026-03-02"),
    ]  # fmt: skip
    assert float(rows[0]["estimate"]) == pytest.approx(2.5)


def test_spanish(client, supervisor, teams_data):
    client.force_login(supervisor)
    html = client.get(reverse("scorecards:scorecard"), {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Qué hace la corrección" in html and "corrección tomada de las 14 llamadas auditadas del equipo" in html
    html = client.get(reverse("scorecards:agent"), {"rubric": "care", "agent": "a1"}, HTTP_ACCEPT_LANGUAGE="es")
    assert "Para entrenar" in html.content.decode()


@pytest.mark.parametrize("page", ["scorecards:scorecard", "scorecards:agent"])
def test_scorecard_csvs_run_no_formula_and_follow_the_language(client, supervisor, teams_data, page):
    hostile = call(teams_data, "=cmd|' /C calc'!A0", "+north", {"c1": 4})
    hostile.agent_name = "@SUM(1)"
    hostile.save(update_fields=["agent_name"])
    client.force_login(supervisor)
    query = {"rubric": "care", "agent": hostile.agent_id, "format": "csv"}
    response = client.get(reverse(page), query, HTTP_ACCEPT_LANGUAGE="es")
    text = b"".join(response.streaming_content).decode()
    assert text.startswith("\ufeff") and text.removeprefix("\ufeff").split("\r\n")[0].count(";") > 3
    cells = [cell for row in csv.reader(io.StringIO(text.removeprefix("\ufeff")), delimiter=";") for cell in row]
    formulas = [cell for cell in cells if cell.startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert [cell for cell in formulas if not cell[1:].replace(",", "").isdigit()] == []  # only negative numbers
    if page == "scorecards:scorecard":
        assert "'+north" in cells and "'=cmd|' /C calc'!A0" in cells


def test_the_coaching_list_leaves_out_a_call_the_reader_must_see_blind(client, supervisor, teams_data):
    """A random audit the supervisor has not reviewed yet: its judge's quote is not shown to them here
    either (blind means blind on every page), while a supervisor who reviewed it sees it."""
    recording = call(teams_data, "a3", "south", {"c1": 1})
    Recording.objects.filter(pk=recording.pk).update(
        status=Recording.Status.IN_REVIEW, review_reasons=[Recording.ReviewReason.RANDOM_AUDIT]
    )
    recording.current_run.scores.update(evidence="BLIND-AUDIT-QUOTE")
    url, query = reverse("scorecards:agent"), {"rubric": "care", "agent": "a3"}
    client.force_login(supervisor)
    assert "BLIND-AUDIT-QUOTE" not in client.get(url, query, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    owner = UserFactory(username="olga", groups=["Rubric owners"])  # not in review: nothing is blind for them
    client.force_login(owner)
    assert "BLIND-AUDIT-QUOTE" in client.get(url, query, HTTP_ACCEPT_LANGUAGE="en").content.decode()


@pytest.mark.parametrize("language,plain", [
    ("en", "Each cell: the mean score a supervisor would give, with its 95% interval."),
    ("es", "Cada celda: la puntuación media que daría un supervisor, con su intervalo del 95 %."),
])  # fmt: skip
def test_the_scorecard_opens_on_its_numbers_with_the_statistics_folded_below(client, supervisor, teams_data, language, plain):
    """A QA manager opened on two paragraphs of statistics before any number; now one plain line, the table,
    and the statistics in a "How to read this" below it, closed."""
    client.force_login(supervisor)
    html = client.get("/scorecards/", {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE=language).content.decode()
    heading, rest = html.split("</h1>", 1)
    table = rest.index('<table class="figures scorecard">')
    assert plain in rest[:table]
    folded = rest.index('<details class="how-to-read" id="scorecard-statistics">')
    assert table < folded and "PPI++" in rest[folded:] and "PPI++" not in rest[:folded]
