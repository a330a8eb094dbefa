"""A key bound to one source reads, in every report, scorecard and webhook, its source's calls alone
(issue 46: the probe's `other-a` key received `crm-a`'s calls through its webhook, and a key that saw
one recording read the whole rubric's figures). The binding is the scope's (access.scope.scope_for_key),
so each read below goes through the same rule as GET /api/recordings/{id}/."""

from __future__ import annotations

import json

import pytest

from access.models import default_workspace_id
from outbox.services import recording_judged_emit
from tests.api.conftest import key_client, new_key
from reviews.services import review_create
from tests.factories import judged_recording, published_rubric
from tests.webhooks.conftest import receiver  # noqa: F401  (the suite's receiver on loopback)
from webhooks.models import Delivery

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


@pytest.fixture
def calls(db):
    """The CRM's one call (agent a1, team north) and the dialer's three (agent b1, team south), all judged."""
    rubric = published_rubric(slug="care", name="Care")
    crm = [judged_recording(rubric=rubric, source="crm-a", team="north", agent_id="a1", agent_name="A1")]
    dialer = [
        judged_recording(rubric=rubric, source="dialer", team="south", agent_id="b1", agent_name="B1")
        for _ in range(3)
    ]
    return rubric, crm, dialer


def test_the_scope_of_a_source_bound_key_holds_its_source_alone(calls):
    from access.scope import scope_for_key

    _rubric, crm, dialer = calls
    bound = scope_for_key(new_key("crm-key", source="crm-a")[0])
    hub = scope_for_key(new_key("hub-key", all_sources=True)[0])
    assert bound.contains_recording(crm[0]) and not bound.contains_recording(dialer[0])
    assert hub.contains_recording(crm[0]) and hub.contains_recording(dialer[0])
    assert bound.by_source and not hub.by_source
    # A team's figures as a whole are every source's: not a source-bound key's.
    assert not bound.sees_team(default_workspace_id(), "north") and hub.sees_team(default_workspace_id(), "north")
    # Rows without a source (the reports' rollups): none of them is its.
    assert not bound.contains_calls(default_workspace_id(), "north", "a1")


def test_the_evidence_report_counts_the_keys_source_alone(calls):
    rubric, crm, _dialer = calls
    criteria = rubric.criteria.count()
    bound = key_client(new_key("crm-key", source="crm-a")[1])
    hub = key_client(new_key("hub-key", all_sources=True)[1])
    assert bound.get(f"/api/recordings/{crm[0].pk}/").status_code == 200

    own = bound.get("/api/reports/evidence/", {"rubric": "care"})
    every = hub.get("/api/reports/evidence/", {"rubric": "care"})
    assert own.status_code == every.status_code == 200
    assert own.json()["overall"]["total"] == criteria
    assert every.json()["overall"]["total"] == 4 * criteria


def test_the_versions_and_deviation_reports_count_the_keys_source_alone(calls):
    rubric, _crm, _dialer = calls
    bound = key_client(new_key("crm-key", source="crm-a")[1])
    other = key_client(new_key("other-key", source="other-a")[1])

    versions = bound.get("/api/reports/versions/", {"rubric": "care"}).json()
    assert {line["versions"][0]["scores"] for line in versions["criteria"]} == {1}
    nothing = other.get("/api/reports/versions/", {"rubric": "care"}).json()
    assert {line["versions"][0]["scores"] for line in nothing["criteria"]} == {0}


def test_the_deviation_report_counts_the_keys_reviewed_calls_alone(calls):
    _rubric, crm, dialer = calls
    for recording in (*crm, *dialer):
        review_create(recording=recording, decision="approve", reviewer="sup")
    bound = key_client(new_key("crm-key", source="crm-a")[1])
    hub = key_client(new_key("hub-key", all_sources=True)[1])
    other = key_client(new_key("other-key", source="other-a")[1])

    def reviewed(client) -> int:
        response = client.get("/api/reports/deviation/", {"rubric": "care"})
        assert response.status_code == 200, response.content
        return sum(group["recordings"] for group in response.json()["groups"].values())

    assert (reviewed(bound), reviewed(hub), reviewed(other)) == (1, 4, 0)


@pytest.mark.parametrize("group", ["agent", "team"])
def test_the_scorecard_holds_the_keys_agents_and_teams_alone(calls, group):
    bound = key_client(new_key("crm-key", source="crm-a")[1])
    hub = key_client(new_key("hub-key", all_sources=True)[1])
    other = key_client(new_key("other-key", source="other-a")[1])

    own = bound.get("/api/scorecards/", {"rubric": "care", "group": group}).json()["rows"]
    every = hub.get("/api/scorecards/", {"rubric": "care", "group": group}).json()["rows"]
    assert {row["team"] for row in own} == {"north"}
    assert {row["team"] for row in every} == {"north", "south"}
    if group == "agent":
        assert [row["agent_id"] for row in own] == ["a1"]
    # Its figures are of its call alone: one judged call per criterion.
    assert {cell["judged_n"] for row in own for cell in row["criteria"]} == {1}
    assert other.get("/api/scorecards/", {"rubric": "care", "group": group}).json()["rows"] == []


def test_a_webhook_of_a_source_bound_key_receives_its_sources_calls_alone(
    calls, receiver, django_capture_on_commit_callbacks
):
    """The probe: a key made with --source other-a subscribes to recording.judged; a call of crm-a
    reached its receiver with the full transcript. Now only the crm-a key's subscription and the
    all-sources key's get it."""
    _rubric, crm, _dialer = calls
    subscribers = {
        name: key_client(new_key(f"{name}-key", **fields)[1])
        for name, fields in {"other": {"source": "other-a"}, "crm": {"source": "crm-a"}, "hub": {"all_sources": True}}.items()
    }
    for name, client in subscribers.items():
        created = client.post("/api/webhooks/", {"url": f"{receiver.url}/{name}", "events": ["recording.judged"]}, format="json")
        assert created.status_code == 201, created.content
    assert subscribers["other"].get(f"/api/recordings/{crm[0].pk}/").status_code == 404

    with django_capture_on_commit_callbacks(execute=True):
        recording_judged_emit(recording_id=crm[0].pk, routed=False, workspace_id=crm[0].workspace_id)

    assert sorted(request.path for request in receiver.requests) == ["/hooks/veredicto/crm", "/hooks/veredicto/hub"]
    assert all(json.loads(request.body)["recording"] == crm[0].pk for request in receiver.requests)
    assert not Delivery.objects.filter(subscription__api_key__source="other-a").exists()
