"""/reports/versions/: each criterion followed across a rubric's versions (by key, or by
the key it replaces), the weekly rejection rate with publish dates, CSV and API."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from access.scope import EVERYTHING
from qa.models import JudgeRun
from insights.reports.selectors import versions_report
from rubrics.models import Rubric
from rubrics.services import rubric_new_version, rubric_publish
from tests.factories import CriterionFactory, judged_recording
from tests.reports.conftest import APPROVE, REJECT, add_review, at
from tests.reports.test_pages import rows_of


@pytest.fixture
def two_versions(care_rubric, deviation_data) -> tuple[Rubric, Rubric]:
    """v2 renames c1 to c1-name (replacing c1), drops c2 and adds c3; two of its calls are reviewed."""
    Rubric.objects.filter(pk=care_rubric.pk).update(published_at=datetime(2026, 3, 2, 9, tzinfo=UTC))
    draft = rubric_new_version(rubric=care_rubric)
    draft.criteria.filter(key="c1").update(key="c1-name", replaces="c1")
    draft.criteria.filter(key="c2").delete()
    CriterionFactory(rubric=draft, key="c3", title="Closes", description="The agent asks for anything else.", order=3)
    second = rubric_publish(rubric=draft)
    Rubric.objects.filter(pk=second.pk).update(published_at=datetime(2026, 3, 16, 9, tzinfo=UTC))
    for values, decision, entries in (
        ({"c1-name": 4, "c3": 4}, APPROVE, {}),
        ({"c1-name": 2, "c3": 5}, REJECT, {"c3": {"rejected": True, "comment": "No closing."}}),
    ):
        recording = judged_recording(rubric=second, values=values, occurred_at=at(17))
        JudgeRun.objects.filter(pk=recording.current_run_id).update(created_at=at(17))
        add_review(recording, decision, when=at(18), entries=entries)
    return care_rubric, Rubric.objects.get(pk=second.pk)


def test_lines_follow_keys_and_replaces(two_versions):
    first, second = two_versions

    report = versions_report(slug="care", scope=EVERYTHING)

    assert report.versions == [first, second]
    lines = {line.key: line for line in report.lines}
    assert set(lines) == {"c1-name", "c2", "c3"}
    c1 = lines["c1-name"]
    assert [cell.criterion.key for cell in c1.cells] == ["c1", "c1-name"]
    # v1's c1 as the deviation report counts it: 7 reviewed, 1 rejected; v2: 2 reviewed, none rejected (the
    # reject marked only c3 wrong).
    assert (c1.cells[0].agreement.reviewed, c1.cells[0].agreement.rejected) == (7, 1)
    assert (c1.cells[1].agreement.reviewed, c1.cells[1].agreement.rejected) == (2, 0)
    assert lines["c2"].cells[1] is None and lines["c2"].last_version == 0  # removed in v2
    assert lines["c3"].cells[0] is None and lines["c3"].first_version == 1  # added in v2
    assert lines["c3"].cells[1].agreement.rejection_rate == 1 / 2


def test_weekly_rejection_rate_across_versions(two_versions):
    weeks = {row.week.isoformat(): (row.reviewed, row.rejected) for row in versions_report(slug="care", scope=EVERYTHING).weeks}

    # v2's two reviewed calls, judged in the week of 16 March: 4 scores, 1 rejected (the one the reject marked).
    assert weeks["2026-03-16"] == (4, 1)
    # v1's reviewed scores all count in the weeks their runs were made: 7 + 7 reviewed, 1 + 1 rejected.
    assert sum(reviewed for week, (reviewed, _) in weeks.items() if week != "2026-03-16") == 14
    assert sum(rejected for week, (_, rejected) in weeks.items() if week != "2026-03-16") == 2


def test_the_page_marks_added_removed_and_publish_dates(client, supervisor, two_versions):
    client.force_login(supervisor)

    response = client.get(reverse("reports:versions"), {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE="es")

    text = response.content.decode()
    assert response.status_code == 200
    assert "agregado" in text and "eliminado" in text and "reemplaza a c1" in text
    assert '<text x="' in text and ">v2</text>" in text  # the publish date marked on the chart
    assert f"{reverse('reports:deviation-scores')}?rubric=care&amp;version=2&amp;criterion=c3&amp;group=all" in text


def test_csv_and_api(client, supervisor, two_versions):
    client.force_login(supervisor)

    rows = rows_of(client.get(reverse("reports:versions"), {"rubric": "care", "format": "csv"}))
    assert [(row["line"], row["version"], row["criterion_key"]) for row in rows] == [
        ("c1-name", "1", "c1"), ("c1-name", "2", "c1-name"), ("c2", "1", "c2"), ("c3", "2", "c3"),
    ]
    assert rows[3]["rejection_rate"] == "0.5"

    body = client.get("/api/reports/versions/", {"rubric": "care"}).json()
    assert [v["version"] for v in body["versions"]] == [1, 2]
    c1 = next(line for line in body["criteria"] if line["key"] == "c1-name")
    assert [(v["version"], v["criterion_key"], v["reviewed"]) for v in c1["versions"]] == [(1, "c1", 7), (2, "c1-name", 2)]
    assert {"week": "2026-03-16", "reviewed": 4, "rejected": 1, "rejection_rate": 0.25} in body["weeks"]
    assert client.get("/api/reports/versions/", {"rubric": "nope"}).status_code == 400
