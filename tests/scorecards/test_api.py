"""GET /api/scorecards/: the issue's shape, teams or agents, 400 naming a bad parameter, the schema."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from insights.scorecards.api import ScorecardSerializer
from tests.api.conftest import new_key
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(supervisor) -> APIClient:
    client = APIClient()
    client.force_authenticate(supervisor)
    return client


def test_agent_rows_carry_the_three_numbers_per_criterion_and_overall(api, teams_data):
    body = api.get("/api/scorecards/", {"rubric": "care", "group": "agent"}).json()
    assert body["rubric"] == {"slug": "care", "version": 1, "name": "Care"}
    assert body["period"] == {"since": None, "until": None}
    rows = {row["agent_id"]: row for row in body["rows"]}
    assert set(rows) == {"a1", "a2", "a3"}
    a1 = rows["a1"]
    assert (a1["team"], a1["agent_name"]) == ("north", "A1")
    c1, overall = a1["criteria"]
    assert set(c1) == {
        "criterion_key", "judged_n", "unverified_n", "known_n", "estimated_n", "waiting_n", "audited_n", "judge_mean",
        "human_audit_mean", "estimate", "ci", "corrected", "correction_level", "power_tuned",
    }  # fmt: skip
    assert (c1["known_n"], c1["estimated_n"], c1["waiting_n"], c1["power_tuned"]) == (10, 10, 0, False)
    assert (c1["criterion_key"], c1["judged_n"], c1["audited_n"]) == ("c1", 20, 10)
    assert (c1["judge_mean"], c1["human_audit_mean"], c1["corrected"], c1["correction_level"]) == (3, 3.5, True, "cell")
    assert c1["estimate"] == pytest.approx(2.5)
    assert c1["ci"][0] < 2.5 < c1["ci"][1]
    assert overall["criterion_key"] == "overall"
    assert overall["estimate"] == pytest.approx(2.5 / 4 * 100 - 25)  # c1 alone: (2.5 − 1) / 4 of the scale, in %
    assert rows["a2"]["criteria"][0]["correction_level"] == "team"
    assert rows["a3"]["criteria"][0]["correction_level"] == "rubric"
    # The cells are written without their serializer (for speed): what they say is what it would.
    assert ScorecardSerializer(body).data == body


def test_team_rows_have_no_agent(api, teams_data):
    body = api.get("/api/scorecards/", {"rubric": "care", "group": "team"}).json()
    assert sorted((row["team"], row["agent_id"], row["agent_name"]) for row in body["rows"]) == [
        ("north", None, None),
        ("south", None, None),
    ]
    lower_bounds = [row["criteria"][-1]["ci"][0] for row in body["rows"]]
    assert lower_bounds == sorted(lower_bounds, reverse=True)  # by the overall's lower bound, highest first


def test_uncorrected_cells_have_no_interval(api, teams_data):
    body = api.get("/api/scorecards/", {"rubric": "care", "since": "2026-03-03"}).json()
    assert body == {
        "rubric": {"slug": "care", "version": 1, "name": "Care"},
        "period": {"since": "2026-03-03", "until": None},
        "as_of": None,  # nothing changed since the figures were written
        "rows": [],
    }


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "rubric"),
        ({"rubric": "nope"}, "rubric"),
        ({"rubric": "care", "group": "floor"}, "group"),
        ({"rubric": "care", "since": "yesterday"}, "since"),
        ({"rubric": "care", "since": "2026-03-05", "until": "2026-03-01"}, "until"),
    ],
)
def test_a_bad_parameter_answers_400_naming_it(api, teams_data, params, field):
    response = api.get("/api/scorecards/", params)
    assert response.status_code == 400
    assert field in response.json()


def test_access_supervisors_rubric_owners_and_keys(teams_data):
    client = APIClient()
    assert client.get("/api/scorecards/", {"rubric": "care"}).status_code == 401
    for user in (UserFactory(), UserFactory(is_staff=True)):  # staff status alone opens nothing (#11)
        client.force_authenticate(user)
        assert client.get("/api/scorecards/", {"rubric": "care"}).status_code == 403
    for user in (UserFactory(groups=["Rubric owners"]), UserFactory(groups=["Supervisors"])):
        client.force_authenticate(user)
        assert client.get("/api/scorecards/", {"rubric": "care"}).status_code == 200
    keyed = APIClient(HTTP_AUTHORIZATION=f"Api-Key {new_key('crm')[1]}")
    assert keyed.get("/api/scorecards/", {"rubric": "care"}).status_code == 200


def test_the_schema_describes_the_endpoint(db):
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    operation = schema["paths"]["/api/scorecards/"]["get"]
    assert {parameter["name"] for parameter in operation["parameters"]} >= {"rubric", "group", "since", "until"}
    reference = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    body = schema["components"]["schemas"][reference.rsplit("/", 1)[1]]
    assert set(body["properties"]) == {"rubric", "period", "as_of", "rows"}
    assert body["properties"]["as_of"]["nullable"] is True
    assert set(schema["components"]["schemas"]["AsOf"]["properties"]) == {"at", "behind"}
    row = schema["components"]["schemas"]["Row"]["properties"]
    assert set(row) == {"team", "agent_id", "agent_name", "criteria"}
    cell = schema["components"]["schemas"]["Cell"]["properties"]
    assert cell["ci"]["nullable"] is True and cell["ci"]["minItems"] == cell["ci"]["maxItems"] == 2
