"""Assigning calls: a QA lead gives ticked calls, or a reproducible random sample of a search, to a
supervisor; they come first in that supervisor's queue until reviewed."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction

from core.errors import InvalidInputError
from qa.models import Recording
from calls.selectors import CallFilters, call_sample, call_search, calls_visible
from calls.services import assignments_create
from reviews.models import Assignment, Review
from reviews.selectors import QueueFilters, queue_assigned, queue_next
from reviews.services import review_create
from tests.calls.conftest import SPANISH, call, queued_call
from tests.factories import published_rubric
from tests.review.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue(db) -> list[Recording]:
    rubric = published_rubric(slug="care")
    return [queued_call(rubric, f"q-{index}", confidence=0.2 + index / 100) for index in range(6)]


def open_assignments() -> dict[str, str]:
    return dict(
        Assignment.objects.filter(closed_at__isnull=True).values_list("recording__external_id", "assignee__username")
    )


def test_a_lead_assigns_the_ticked_calls(queue, lead, supervisor):
    reviewed = call(queue[0].rubric, "done", SPANISH, "es", status=Recording.Status.REVIEWED)
    client = client_for(lead)
    response = client.post(
        "/calls/assign/?team=north",
        {"assignee": supervisor.pk, "pick": "selected", "call": [queue[1].pk, queue[2].pk, reviewed.pk]},
    )
    assert response.status_code == 302 and response["Location"] == "/calls/?team=north"
    assert open_assignments() == {"q-1": "supervisor", "q-2": "supervisor"}
    assert Assignment.objects.get(recording=queue[1]).assigned_by == lead
    page = client.get(response["Location"]).content.decode()
    assert "2 calls assigned to supervisor. 1 was not waiting for review and was left out." in page


def test_only_the_calls_the_search_found_are_assigned(queue, lead, supervisor):
    other = queued_call(queue[0].rubric, "south-1", team="south")
    client_for(lead).post("/calls/assign/?team=north", {"assignee": supervisor.pk, "pick": "selected", "call": [other.pk]})
    assert open_assignments() == {}


def test_a_random_sample_of_a_search_is_reproducible(queue, lead, supervisor):
    found = call_search(recordings=calls_visible(lead), filters=CallFilters(), user=lead)
    first = call_sample(recordings=found, size=3, seed=7)
    assert len(first) == 3 and call_sample(recordings=found, size=3, seed=7) == first
    assert {tuple(call_sample(recordings=found, size=3, seed=seed)) for seed in range(20)} != {tuple(first)}
    client = client_for(lead)
    response = client.post("/calls/assign/", {"assignee": supervisor.pk, "pick": "sample", "size": 3, "seed": 7})
    assert response.status_code == 302
    assert set(Assignment.objects.values_list("recording_id", flat=True)) == set(first)
    message = client.get("/calls/").content.decode()
    assert "3 calls assigned to supervisor. A random sample of the calls found waiting for review, seed 7." in message


def test_the_sample_draws_only_calls_waiting_for_review(queue, lead):
    reviewed = call(queue[0].rubric, "done", SPANISH, "es", status=Recording.Status.REVIEWED)
    found = call_search(recordings=calls_visible(lead), filters=CallFilters(), user=lead)
    assert reviewed.pk not in call_sample(recordings=found, size=100, seed=1)
    assert len(call_sample(recordings=found, size=100, seed=1)) == 6


def test_assigning_again_moves_the_call(queue, lead, supervisor, other_supervisor):
    assignments_create(recording_ids=[queue[0].pk], assignee=supervisor, assigned_by=lead)
    assignments_create(recording_ids=[queue[0].pk], assignee=other_supervisor, assigned_by=lead)
    assert open_assignments() == {"q-0": "supervisor2"}
    assert Assignment.objects.filter(recording=queue[0]).count() == 2  # the first is kept, closed


def test_one_open_assignment_per_call_in_the_database(queue, lead, supervisor):
    Assignment.objects.create(recording=queue[0], assignee=supervisor, assigned_by=lead)
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(recording=queue[0], assignee=supervisor, assigned_by=lead)


def test_who_may_assign_and_be_assigned(queue, lead, supervisor, rubric_owner):
    with pytest.raises(PermissionDenied):
        assignments_create(recording_ids=[queue[0].pk], assignee=supervisor, assigned_by=supervisor)
    with pytest.raises(InvalidInputError) as refused:
        assignments_create(recording_ids=[queue[0].pk], assignee=rubric_owner, assigned_by=lead)
    assert "assignee" in refused.value.errors
    assert client_for(supervisor).post("/calls/assign/", {"assignee": supervisor.pk, "call": [queue[0].pk]}).status_code == 403
    assert 'id="assign-form"' in client_for(lead).get("/calls/").content.decode()
    # The page offers only people who review in the lead's workspace: supervisors and QA leads (a lead
    # reviews too: access.models.ROLE_GROUPS), not rubric owners.
    options = re.findall(r'<option value="(\d+)"', client_for(lead).get("/calls/").content.decode())
    assert str(supervisor.pk) in options and str(rubric_owner.pk) not in options and str(lead.pk) in options


def test_bad_assignments_are_400s_naming_the_field(queue, lead, supervisor):
    client = client_for(lead)
    response = client.post("/calls/assign/", {"assignee": supervisor.pk, "pick": "selected"})
    assert response.status_code == 400 and "Tick the calls to assign" in response.content.decode()
    response = client.post("/calls/assign/", {"assignee": supervisor.pk, "pick": "sample", "size": 0, "seed": 1})
    assert response.status_code == 400 and "greater than or equal to 1" in response.content.decode()
    response = client.post("/calls/assign/", {"assignee": supervisor.pk, "pick": "sample", "size": 501, "seed": 1})
    assert response.status_code == 400 and "less than or equal to 500" in response.content.decode()
    response = client.post("/calls/assign/", {"assignee": 999999, "pick": "selected", "call": [queue[0].pk]})
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    response = client.post("/calls/assign/?status=bogus", {"assignee": supervisor.pk, "pick": "selected", "call": [queue[0].pk]})
    assert response.status_code == 400
    assert not Assignment.objects.exists()


def test_assigned_calls_come_first_in_the_queue(queue, lead, supervisor, other_supervisor):
    # Assigned in this order: the highest confidence first, so assignment order differs from queue order.
    assignments_create(recording_ids=[queue[5].pk], assignee=supervisor, assigned_by=lead)
    assignments_create(recording_ids=[queue[3].pk], assignee=supervisor, assigned_by=lead)
    assignments_create(recording_ids=[queue[4].pk], assignee=other_supervisor, assigned_by=lead)
    mine = list(queue_assigned(filters=QueueFilters(), user=supervisor).values_list("external_id", flat=True))
    assert mine == ["q-5", "q-3"]
    page = client_for(supervisor).get("/review/").content.decode()
    section = page.split('id="assigned-to-me"')[1].split("</section>")[0]
    assert re.findall(r'data-recording="(\d+)"', section) == [str(queue[5].pk), str(queue[3].pk)]
    assert "Assigned to you: 2 calls" in section
    # "Review the next call": the assigned ones in the order assigned, then the queue from its start.
    assert queue_next(after=None, filters=QueueFilters(), user=supervisor) == queue[5]
    assert queue_next(after=queue[5], filters=QueueFilters(), user=supervisor) == queue[3]
    review_create(recording=queue[5], decision=Review.Decision.APPROVE, reviewer="supervisor", user=supervisor)
    review_create(recording=queue[3], decision=Review.Decision.APPROVE, reviewer="supervisor", user=supervisor)
    assert queue_next(after=queue[3], filters=QueueFilters(), user=supervisor) == queue[0]
    # The other supervisor's own assignment comes first for them.
    assert queue_next(after=None, filters=QueueFilters(), user=other_supervisor) == queue[4]


def test_a_review_closes_the_assignment(queue, lead, supervisor, other_supervisor):
    assignments_create(recording_ids=[queue[0].pk, queue[1].pk, queue[2].pk], assignee=supervisor, assigned_by=lead)
    # Its assignee passing it on closes it: they did their part.
    review_create(recording=queue[0], decision=Review.Decision.NEEDS_REVIEW, reviewer="supervisor", user=supervisor)
    # Someone else passing it on leaves it with its assignee; a final review by anyone closes it.
    review_create(recording=queue[1], decision=Review.Decision.NEEDS_REVIEW, reviewer="s2", user=other_supervisor)
    review_create(recording=queue[2], decision=Review.Decision.APPROVE, reviewer="s2", user=other_supervisor)
    assert open_assignments() == {"q-1": "supervisor"}


def test_the_list_says_who_a_call_is_assigned_to(queue, lead, supervisor):
    assignments_create(recording_ids=[queue[0].pk], assignee=supervisor, assigned_by=lead)
    page = client_for(supervisor).get("/calls/", {"assigned": "me"}).content.decode()
    assert re.findall(r'<tr data-recording="(\d+)">', page) == [str(queue[0].pk)]
    assert client_for(lead).get("/calls/", {"assigned": "none"}).content.decode().count("<tr data-recording=") == 5
    assert "supervisor" in client_for(lead).get("/calls/", {"assigned": "any"}).content.decode()


def test_past_the_queues_end_the_next_call_is_one_still_waiting_above(queue, supervisor):
    from reviews.claims import claim_take

    claim_take(recording=queue[0], user=supervisor)  # opened and left: still in the queue, held by them
    for recording in queue[1:5]:
        review_create(recording=recording, decision=Review.Decision.APPROVE, reviewer="supervisor", user=supervisor)
    assert queue_next(after=queue[5], filters=QueueFilters(), user=supervisor) == queue[0]
    page = client_for(supervisor)
    answer = page.post("/review/next/", {"after": str(queue[5].pk)}, follow=True)
    assert answer.redirect_chain[-1][0].startswith(f"/review/{queue[0].pk}/")
    assert "No more calls are waiting for review" not in answer.content.decode()
    # With nothing else left, "no more calls" is true, and said.
    review_create(recording=queue[0], decision=Review.Decision.APPROVE, reviewer="supervisor", user=supervisor)
    assert queue_next(after=queue[5], filters=QueueFilters(), user=supervisor) is None
