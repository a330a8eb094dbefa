"""Report pages: access, figures as links to their scores, CSV exports."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from tests.factories import UserFactory, judged_recording
from tests.reports.conftest import APPROVE, AUDIT, add_review, at

pytestmark = pytest.mark.django_db

PAGES = [
    "reports:deviation",
    "reports:evidence",
    "reports:deviation-scores",
    "reports:evidence-scores",
    "reports:deviation-recordings",
]


def rows_of(response) -> list[dict[str, str]]:
    # The byte order mark is there for Excel; the English default separates with commas.
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode().removeprefix("\ufeff"))))


@pytest.mark.parametrize("page", PAGES)
def test_pages_need_a_login_and_the_view_score_permission(client, care_rubric, page):
    url = reverse(page)
    assert client.get(url).status_code == 302  # to the login page
    for user in (UserFactory(), UserFactory(is_staff=True)):  # staff status alone opens nothing
        client.force_login(user)
        assert client.get(url).status_code == 403
    for user in (UserFactory(groups=["Supervisors"]), UserFactory(groups=["Rubric owners"])):
        client.force_login(user)
        assert client.get(url).status_code == 200, user


def test_the_permission_not_the_group_name_is_checked(client, care_rubric):
    user = UserFactory()
    user.user_permissions.add(Permission.objects.get(codename="view_score", content_type__app_label="qa"))
    client.force_login(user)
    assert client.get(reverse("reports:deviation")).status_code == 200


def test_deviation_page_shows_each_group_with_linked_figures(client, supervisor, care_rubric, deviation_data):
    client.force_login(supervisor)
    response = client.get(reverse("reports:deviation"), {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE="en")
    groups = {group["key"]: group for group in response.context["groups"]}
    c1_audit = groups["random_audit"]["rows"][0]
    assert [cell.text for cell in c1_audit["cells"]] == [
        "4",
        "3.75",
        "3.00",
        "0.75",
        "0.75",
        "50.0 %",
        "75.0 %",
        "0.29",
        "25.0 %",
        "0",
    ]
    assert all(cell.url == c1_audit["url"] for cell in c1_audit["cells"])
    assert c1_audit["url"] == "/reports/deviation/scores/?rubric=care&version=1&group=random_audit&criterion=c1"
    html = response.content.decode()
    # Every figure here comes from fewer than 10 pairs: shown greyed in the tables, never drawn as a bar.
    assert (
        html.count("<svg") == 0
        and html.count("Not enough data yet") == 2  # the bias and MAE charts, each a sentence
        and 'href="/reports/deviation/scores/?rubric=care&amp;version=1&amp;group=flagged&amp;criterion=c2"' in html
    )


def test_deviation_csv_has_every_group_and_figure(client, supervisor, care_rubric, deviation_data):
    client.force_login(supervisor)
    every = rows_of(client.get(reverse("reports:deviation"), {"rubric": "care", "format": "csv"}))
    assert [row["quotes"] for row in every[:3]] == ["all", "verified", "unverified"]
    rows = [row for row in every if row["quotes"] == "all"]
    assert [(row["group"], row["criterion_key"]) for row in rows] == [
        ("random_audit", "c1"),
        ("random_audit", "c2"),
        ("warm_up", "c1"),
        ("warm_up", "c2"),
        ("flagged", "c1"),
        ("flagged", "c2"),
        ("all", "c1"),
        ("all", "c2"),
    ]
    flagged_c2 = rows[5]
    assert (flagged_c2["n"], flagged_c2["qwk"], flagged_c2["rejected"], flagged_c2["reviewed"]) == ("1", "", "1", "3")
    assert float(rows[6]["qwk"]) == 24 / 73


def test_drilldown_lists_scores_links_to_review_and_marks_unverified(client, supervisor, care_rubric, evidence_data):
    client.force_login(supervisor)
    url = reverse("reports:evidence-scores")
    response = client.get(url, {"rubric": "care", "criterion": "c2", "unverified": "on"}, HTTP_ACCEPT_LANGUAGE="en")
    assert len(response.context["rows"]) == 3
    # Named as the page names them: the rubric and the criterion by their titles, never by their codes.
    assert response.context["scope"] == "Rubric: Care, Criterion: Confirms, Unverified quotes only"
    html = response.content.decode()
    assert html.count("NOT VERIFIED") == 3 and "NO VERIFICADA" not in html  # the page's language
    recording_id = evidence_data["a"].recording_id
    assert f'href="/review/{recording_id}/"' in html

    rows = rows_of(client.get(url, {"rubric": "care", "model": "m1", "prompt_version": "p2", "format": "csv"}))
    assert [(row["criterion_key"], row["evidence"], row["evidence_verified"]) for row in rows] == [
        ("c1", "quote c c1", "True"),
        ("c2", "quote c c2", "True"),
    ]
    rows = rows_of(client.get(url, {"rubric": "care", "week": "2026-03-09", "unverified": "on", "format": "csv"}))
    assert [row["evidence"] for row in rows] == ["[NO VERIFICADA / NOT VERIFIED] quote d c2"]
    assert rows[0]["review_url"].endswith(f"/review/{evidence_data['d'].recording_id}/")


def test_deviation_drilldown_csv_has_human_value_and_comments(client, supervisor, care_rubric, deviation_data):
    client.force_login(supervisor)
    response = client.get(
        reverse("reports:deviation-scores"), {"rubric": "care", "group": "flagged", "criterion": "c1", "format": "csv"}
    )
    got = {
        row["external_id"]: (
            row["model_value"],
            row["human_value"],
            row["rejected"],
            row["criterion_comment"],
            row["review_comment"],
        )
        for row in rows_of(response)
    }
    assert got == {
        "r3": ("5", "3", "True", "Half.", "Wrong call."),
        "r4": ("2", "2", "False", "", ""),
        "r5": ("1", "4", "False", "Greeted after all.", ""),
    }


def test_deviation_drilldown_says_when_the_supervisor_found_a_criterion_not_applicable(client, supervisor, care_rubric):
    na = judged_recording(rubric=care_rubric, values={"c1": 2, "c2": 1}, review_reasons=[AUDIT], external_id="na")
    add_review(na, APPROVE, when=at(10), entries={"c1": {"not_applicable": True, "comment": "Transferred at once."}})
    valued = judged_recording(rubric=care_rubric, values={"c1": 4, "c2": 1}, review_reasons=[AUDIT], external_id="v")
    add_review(valued, APPROVE, when=at(10))
    client.force_login(supervisor)
    url = reverse("reports:deviation-scores")
    query = {"rubric": "care", "group": "random_audit", "criterion": "c1"}

    page = client.get(url, query, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert page.count(">N/A<") == 1
    rows = rows_of(client.get(url, {**query, "format": "csv"}))
    got = {row["external_id"]: (row["model_value"], row["human_value"], row["human_not_applicable"]) for row in rows}
    assert got == {"na": ("2", "", "True"), "v": ("4", "4", "False")}


def test_evidence_page_shows_wording_beside_rate_and_exports_each_table(
    client, rubric_owner, care_rubric, evidence_data
):
    client.force_login(rubric_owner)
    response = client.get(reverse("reports:evidence"), {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE="en")
    c2 = response.context["criteria"][1]
    assert [cell.text for cell in c2["cells"]] == ["4", "3", "75.0 %"]
    assert c2["too_few"]  # 4 scores: greyed and marked, not drawn
    assert c2["cells"][2].url.endswith("criterion=c2&unverified=on")
    html = response.content.decode()
    # The per-criterion chart has no bar (each criterion under 10 scores): a sentence says so.
    assert "The agent confirms the issue." in html and html.count("<svg") == 1 and "Not enough data yet" in html
    assert html.count('<tr class="too-few">') == 2 + 3 + 2  # criteria, model and prompt versions, weeks

    def export(table: str) -> list[dict[str, str]]:
        return rows_of(client.get(reverse("reports:evidence"), {"rubric": "care", "format": "csv", "table": table}))

    assert [(row["criterion_key"], row["total"], row["unverified"], row["rate"]) for row in export("criteria")] == [
        ("c1", "4", "1", "0.25"),
        ("c2", "4", "3", "0.75"),
    ]
    assert [(row["model"], row["prompt_version"], row["rate"]) for row in export("models")] == [
        ("m1", "p1", "0.75"),
        ("m1", "p2", "0.0"),
        ("m2", "p2", "0.5"),
    ]
    assert [(row["week"], row["model"], row["unverified"]) for row in export("weeks")] == [
        ("2026-03-02", "", "3"),
        ("2026-03-09", "", "1"),
        ("2026-03-02", "m1", "3"),
        ("2026-03-09", "m1", "0"),
        ("2026-03-09", "m2", "1"),
    ]
    assert (
        client.get(reverse("reports:evidence"), {"rubric": "care", "format": "csv", "table": "nope"}).status_code == 400
    )


def test_recordings_page_lists_model_against_adjusted_mean(client, supervisor, care_rubric, deviation_data):
    client.force_login(supervisor)
    rows = rows_of(client.get(reverse("reports:deviation-recordings"), {"rubric": "care", "format": "csv"}))
    assert [(row["external_id"], row["model_mean"], row["adjusted_mean"], row["difference"]) for row in rows[:2]] == [
        ("r2", "2.0", "3.0", "-1.0"),
        ("r7", "4.0", "3.5", "0.5"),
    ]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"rubric": "nope"}, "rubric"),
        ({"rubric": "care", "version": "7"}, "version"),
        ({"rubric": "care", "date_from": "2026-03-10", "date_to": "2026-03-01"}, "date_to"),
        ({"rubric": "care", "date_from": "yesterday"}, "date_from"),
        ({"rubric": "care", "date_to": "9999-12-31"}, "date_to"),
        ({"rubric": "care", "date_from": "0001-01-01"}, "date_from"),
        ({"rubric": "care", "criterion": "c9"}, "criterion"),
        ({"rubric": "care", "group": "vip"}, "group"),
    ],
)
def test_bad_filters_show_form_errors(client, supervisor, care_rubric, query, field):
    client.force_login(supervisor)
    response = client.get(reverse("reports:deviation-scores"), query)
    assert response.status_code == 400
    assert list(response.context["form"].errors) == [field]


@pytest.mark.parametrize("page", ["reports:deviation", "reports:evidence"])
@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"date_to": "9999-12-31"}, "date_to", "between 1900-01-01 and 2999-12-31"),
        ({"date_from": "xx"}, "date_from", "valid date"),
        ({"date_from": "2026-03-10", "date_to": "2026-03-01"}, "date_to", "before the start date"),
    ],
)
def test_each_report_says_what_is_wrong_with_its_dates(client, supervisor, care_rubric, page, query, field, message):
    client.force_login(supervisor)
    response = client.get(reverse(page), {"rubric": "care", **query}, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 400
    assert message in " ".join(response.context["form"].errors[field])
    assert message in response.content.decode()


@pytest.mark.parametrize("url", ["/reports/deviation/", "/reports/evidence/", "/reports/versions/", "/scorecards/"])
def test_a_first_install_says_a_rubric_comes_first_instead_of_refusing_an_empty_field(
    client, supervisor, rubric_owner, url
):
    client.force_login(rubric_owner)
    page = client.get(url, HTTP_ACCEPT_LANGUAGE="es")
    client.force_login(supervisor)
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert page.status_code == 200 and "No se ha publicado ninguna rúbrica" in page.content.decode()
    assert 'href="/admin/rubrics/rubric/"' in page.content.decode()  # the owner is shown where to write one
    assert "No rubric has been published" in english and "/admin/rubrics/" not in english
    assert "This field is required" not in english
