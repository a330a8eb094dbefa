"""The coaching API and its isolation: an agent never receives another agent's session, a team-limited supervisor
only their teams'; the agent's answer carries no team figure; the webhook's data is the session as the API gives it."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from coaching.models import CoachingSession
from coaching.services import coaching_session_create
from outbox.models import Event
from tests.factories import judged_recording
from webhooks.payloads import event_data

pytestmark = pytest.mark.django_db


def client(user):
    c = Client(HTTP_ACCEPT_LANGUAGE="en")
    c.force_login(user)
    return c


def follow_up():
    return (timezone.localdate() + timedelta(days=14)).isoformat()


@pytest.fixture
def sessions(sup, care, ana_calls):
    judged_recording(rubric=care, agent_id="agent-sol", agent_name="Sol", team="sales", values={"c1": 2})
    judged_recording(rubric=care, agent_id="agent-bruno", agent_name="Bruno", team="support", values={"c1": 3})
    make = lambda agent: coaching_session_create(  # noqa: E731
        user=sup, rubric=care, agent_id=agent, criterion_keys=["c1"], goal=f"goal of {agent}",
        follow_up_on=timezone.localdate() + timedelta(days=14),
    )  # fmt: skip
    return {agent: make(agent) for agent in ("agent-ana", "agent-bruno", "agent-sol")}


def goals(answer):
    return sorted(item["goal"] for item in answer.json())


def test_a_supervisor_opens_one_over_the_api(sup, care, ana_calls):
    answer = client(sup).post(
        "/api/coaching/",
        {"rubric": care.slug, "agent_id": "agent-ana", "criteria": ["c1"], "goal": "Confirm", "follow_up_on": follow_up()},
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["agent_id"] == "agent-ana" and body["criteria"] == ["c1"] and body["team"] == "support"
    assert [call["value"] for call in body["calls"]] == [2, 3, 4] and all(call["proposed"] for call in body["calls"])


def test_bad_input_is_a_400_naming_the_field(sup, care, ana_calls):
    answer = client(sup).post(
        "/api/coaching/",
        {"rubric": care.slug, "agent_id": "agent-ana", "criteria": ["zz"], "goal": "Confirm", "follow_up_on": follow_up()},
        content_type="application/json",
    )
    assert answer.status_code == 400 and "criteria" in answer.json()


def test_an_agent_never_sees_another_agents_session(ana, bruno, sessions):
    assert goals(client(ana).get("/api/coaching/")) == ["goal of agent-ana"]
    assert goals(client(bruno).get("/api/coaching/")) == ["goal of agent-bruno"]
    other = sessions["agent-bruno"].pk
    assert client(ana).get(f"/api/coaching/{other}/").status_code == 404
    assert client(ana).post(f"/api/coaching/{other}/acknowledge/").status_code == 404
    assert client(ana).post(f"/api/coaching/{other}/comments/", {"body": "x"}, content_type="application/json").status_code == 404
    assert not CoachingSession.objects.filter(pk=other, acknowledged_at__isnull=False).exists()


def test_a_team_limited_supervisor_sees_only_their_teams(sales_sup, sup, sessions):
    assert goals(client(sales_sup).get("/api/coaching/")) == ["goal of agent-sol"]
    assert client(sales_sup).get(f"/api/coaching/{sessions['agent-ana'].pk}/").status_code == 404
    assert len(client(sup).get("/api/coaching/").json()) == 3


def test_the_agents_answer_has_no_team_figures_the_coachs_has(ana, sup, sessions):
    pk = sessions["agent-ana"].pk
    mine = client(ana).get(f"/api/coaching/{pk}/").json()["effect"]["criteria"][0]
    theirs = client(sup).get(f"/api/coaching/{pk}/").json()["effect"]["criteria"][0]
    assert "team_change" not in mine and "effect" not in mine and "change" in mine
    assert {"team_change", "effect", "too_thin", "more_audited", "audited_share"} <= theirs.keys()
    assert client(ana).post(f"/api/coaching/{pk}/acknowledge/").json()["acknowledged_by"] == "ana"


def test_the_webhooks_data_is_the_session(sessions):
    session = sessions["agent-ana"]
    event = Event(name="coaching.created", subject_type=Event.Subject.COACHING, subject_id=session.pk)
    data = event_data(event=event)
    assert data["id"] == session.pk and data["goal"] == "goal of agent-ana" and data["criteria"] == ["c1"]
    gone = Event(name="coaching.created", subject_type=Event.Subject.COACHING, subject_id=10**9)
    assert event_data(event=gone) is None
