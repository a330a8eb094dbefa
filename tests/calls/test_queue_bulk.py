"""Bulk actions in the review queue: a QA lead ticks calls and assigns them to a supervisor (the calls list's
assignment service and rule), or sends them to a new calibration session (its form opens with them chosen
by id). Only who may assign sees and uses them."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.messages import get_messages

from reviews.models import Assignment, CalibrationSession
from tests.calls.conftest import call, queued_call, SPANISH
from tests.factories import published_rubric
from tests.review.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(db):
    rubric = published_rubric(slug="care")
    return [queued_call(rubric, f"q-{index}", confidence=0.2 + index / 100) for index in range(4)]


def said(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def test_a_lead_assigns_the_ticked_calls_from_the_queue(queue, lead, supervisor):
    client = client_for(lead)
    page = client.get("/review/?team=north").content.decode()
    assert 'id="bulk-form"' in page and f'name="call" value="{queue[1].pk}" form="bulk-form"' in page
    done = call(queue[0].rubric, "done-1", SPANISH, "es")  # judged, not waiting: left out, and said so
    response = client.post(
        "/calls/queue/?team=north", {"action": "assign", "assignee": supervisor.pk, "call": [queue[1].pk, queue[2].pk, done.pk]}
    )
    assert response.status_code == 302 and response["Location"] == "/review/?team=north"  # back to the queue as it was
    assert said(response) == ["2 calls assigned to supervisor. 1 was not waiting for review and was left out."]
    assert set(Assignment.objects.filter(closed_at__isnull=True).values_list("recording_id", "assignee__username")) == {
        (queue[1].pk, "supervisor"), (queue[2].pk, "supervisor"),
    }  # fmt: skip


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"action": "assign", "assignee": "SUPERVISOR"}, "Tick the calls first."),
        ({"action": "assign", "call": "FIRST"}, "Choose the supervisor to assign the calls to."),
        ({"action": "assign", "call": "FIRST", "assignee": "999999"}, "Select a valid choice. 999999 is not one of the available choices."),
    ],
)
def test_a_bulk_action_that_cannot_be_done_says_why(queue, lead, supervisor, data, message):
    data = {key: {"SUPERVISOR": supervisor.pk, "FIRST": queue[0].pk}.get(value, value) for key, value in data.items()}
    response = client_for(lead).post("/calls/queue/", data)
    assert response["Location"] == "/review/" and said(response) == [message]
    assert not Assignment.objects.exists()


def test_only_who_may_assign_sees_and_uses_the_bulk_actions(queue, supervisor, rubric_owner):
    page = client_for(supervisor).get("/review/").content.decode()
    assert 'id="bulk-form"' not in page and 'form="bulk-form"' not in page
    response = client_for(supervisor).post("/calls/queue/", {"action": "assign", "assignee": supervisor.pk, "call": [queue[0].pk]})
    assert response.status_code == 403 and not Assignment.objects.exists()


def test_a_lead_sends_the_ticked_calls_to_a_new_calibration_session(queue, lead, supervisor, other_supervisor):
    client = client_for(lead)
    response = client.post("/calls/queue/", {"action": "calibrate", "call": [queue[3].pk, queue[1].pk]})
    assert said(response) == ["2 calls from the queue are chosen: name the session and choose their participants."]
    target = urlsplit(response["Location"])
    assert target.path == "/calibrations/new/"
    assert parse_qs(target.query) == {"choose": ["ids"], "rubric": ["care"], "recording_ids": [f"{queue[1].pk} {queue[3].pk}"]}
    form = client.get(response["Location"]).context["form"]
    assert (form["choose"].value(), form["rubric"].value(), form["recording_ids"].value()) == ("ids", "care", f"{queue[1].pk} {queue[3].pk}")
    # Submitted as it opened, with a name and participants: the session holds exactly the calls ticked.
    created = client.post(
        "/calibrations/new/",
        {"name": "Semana 12", "rubric": "care", "participants": [supervisor.pk, other_supervisor.pk], "choose": "ids",
         "recording_ids": form["recording_ids"].value(), "sample": 10, "seed": 0},
    )  # fmt: skip
    assert created.status_code == 302, created.context["form"].errors
    session = CalibrationSession.objects.get()
    assert sorted(session.calls.values_list("recording_id", flat=True)) == [queue[1].pk, queue[3].pk]


def test_calls_of_two_rubrics_are_not_sent_to_one_session(queue, lead):
    other = queued_call(published_rubric(slug="sales"), "s-1")
    response = client_for(lead).post("/calls/queue/", {"action": "calibrate", "call": [queue[0].pk, other.pk]})
    assert response["Location"] == "/review/"
    assert said(response) == [
        "A calibration session takes the calls of one rubric; the calls ticked are of care, sales: tick calls of one."
    ]
