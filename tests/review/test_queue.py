"""The queue page: who may see it, what is in it, in which order, with which filters and counts."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from qa.models import Recording, Score
from qa.routing import recording_route
from reviews.models import ReviewClaim
from tests.factories import JudgeRunFactory, ScoreFactory, UserFactory, judged_recording, published_rubric
from tests.review.conftest import client_for, queued

pytestmark = pytest.mark.django_db


def listed(response) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr data-recording="(\d+)">', response.content.decode())]


def test_anonymous_users_are_sent_to_login(client, rubric):
    recording = queued()
    for url in ("/review/", f"/review/{recording.pk}/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"] == f"/accounts/login/?next={url}"


def test_rubric_owners_may_not_review(rubric_owner):
    recording = queued()
    client = client_for(rubric_owner)
    assert client.get("/review/").status_code == 403
    assert client.get(f"/review/{recording.pk}/").status_code == 403
    assert client.post(f"/review/{recording.pk}/", {"decision": "approve"}).status_code == 403
    assert not ReviewClaim.objects.exists()


def test_supervisors_and_owners_who_also_supervise_may_review(supervisor):
    recording = queued()
    both = UserFactory(groups=["Supervisors", "Rubric owners"])
    for user in (supervisor, both):
        client = client_for(user)
        assert client.get("/review/").status_code == 200
        ReviewClaim.objects.all().delete()
        assert client.get(f"/review/{recording.pk}/").status_code == 200


def test_queue_lists_recordings_in_review_lowest_confidence_first(sup_client):
    middle = queued(confidence=0.6)
    lowest = queued(confidence=0.2)
    highest = queued(confidence=0.9)
    judged_recording(confidence=0.1)  # judged, not routed to review
    queued(confidence=0.05, status=Recording.Status.REVIEWED)  # already reviewed

    response = sup_client.get("/review/")

    assert listed(response) == [lowest.pk, middle.pk, highest.pk]
    assert "3 calls waiting for review" in response.content.decode()


def test_lowest_confidence_is_taken_from_the_current_run_only(sup_client):
    rejudged = queued(confidence=0.9)
    # An older run with a very low score must not count once a newer run is current...
    old_run = JudgeRunFactory(recording=rejudged)
    ScoreFactory(run=old_run, criterion=rejudged.rubric.criteria.first(), confidence=0.01)
    steady = queued(confidence=0.5)
    # ...while one low score among high ones in the current run does, once routing has seen it.
    Score.objects.filter(run=rejudged.current_run, criterion__key="c2").update(confidence=0.3)
    recording_route(recording=rejudged, run=rejudged.current_run, scores=list(rejudged.current_run.scores.all()))

    assert listed(sup_client.get("/review/")) == [rejudged.pk, steady.pk]


def test_reason_badges_count_and_filter(sup_client):
    audit = queued(reasons=["random_audit"])
    unverified = queued(reasons=["unverified_evidence", "low_confidence"])
    queued(reasons=["low_confidence"])

    page = sup_client.get("/review/").content.decode()
    assert re.search(r"Random audit · 1<", page)
    assert re.search(r"Low confidence · 2<", page)
    assert re.search(r"Unverified evidence · 1<", page)

    assert listed(sup_client.get("/review/?reason=random_audit")) == [audit.pk]
    assert listed(sup_client.get("/review/?reason=unverified_evidence")) == [unverified.pk]


def test_filters_by_rubric_team_agent_and_date(sup_client):
    other_rubric = published_rubric(slug="sales")
    now = timezone.now()
    target = queued(team="billing", agent_id="a-7", agent_name="Lucía Pérez", rubric=other_rubric, occurred_at=now)
    same_team = queued(team="billing", agent_id="a-8", occurred_at=now)
    queued(team="support", agent_id="a-7", occurred_at=now - timedelta(days=10))

    assert listed(sup_client.get("/review/?rubric=sales")) == [target.pk]
    assert set(listed(sup_client.get("/review/?team=billing"))) == {target.pk, same_team.pk}
    assert listed(sup_client.get("/review/?team=billing&agent=a-7")) == [target.pk]
    assert listed(sup_client.get("/review/?agent=lucía")) == []  # the agent id, exactly: a name is no agent (docs/dev/design.md)
    today = timezone.localdate(now).isoformat()
    assert len(listed(sup_client.get(f"/review/?date_from={today}&date_to={today}"))) == 2
    # A filter that doesn't parse is dropped and reported, not a server error.
    response = sup_client.get("/review/?date_from=yesterday")
    assert response.status_code == 200
    assert len(listed(response)) == 3


def test_a_blind_audit_shows_no_confidence_in_the_queue(sup_client):
    queued(reasons=["random_audit"], confidence=0.37)
    queued(reasons=["random_audit", "low_confidence"], confidence=0.42)
    page = sup_client.get("/review/").content.decode()
    assert "37%" not in page
    assert "42%" in page


def test_queue_shows_who_holds_a_claim(sup_client, other_supervisor):
    recording = queued()
    ReviewClaim.objects.create(
        recording=recording, user=other_supervisor, expires_at=timezone.now() + timedelta(minutes=5)
    )
    row = re.search(r'<tr data-recording="\d+">.*?</tr>', sup_client.get("/review/").content.decode(), re.S).group()
    assert "supervisor2" in row


def test_queue_runs_a_constant_number_of_queries(sup_client, django_assert_max_num_queries, django_assert_num_queries):
    queued()
    queued(reasons=["random_audit"])
    with django_assert_max_num_queries(20) as few:
        sup_client.get("/review/")
    expected = len(few.captured_queries)  # read now: the next request resets the connection's query log
    for _ in range(8):
        recording = queued(reasons=["unverified_evidence"])
        ReviewClaim.objects.create(recording=recording, user=UserFactory(), expires_at=timezone.now())
    with django_assert_num_queries(expected):
        sup_client.get("/review/")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("date_to=9999-12-31", "Choose a day between 1900-01-01 and 2999-12-31."),
        ("date_from=xx", "Enter a valid date."),
        ("date_from=2026-03-10&date_to=2026-03-01", "The end date is before the start date."),
    ],
)
def test_a_bad_date_filter_says_so_and_filters_nothing(sup_client, query, message):
    queued(occurred_at=timezone.now())
    response = sup_client.get(f"/review/?{query}", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200
    assert message in response.content.decode()
    assert len(listed(response)) == 1


def test_the_queue_says_how_many_calls_of_the_readers_teams_are_still_being_judged():
    """An empty queue while calls are judged in the background (the demo's --live) says more is coming, and
    counts only calls the reader may see; received calls that nobody asked to judge are not counted."""
    from django.contrib.auth.models import User
    from django.test import Client

    from access.models import Role
    from access.services import member_add, workspace_create
    from tests.factories import RecordingFactory

    workspace = workspace_create(slug="acme", name="Acme")
    rubric = published_rubric(slug="care", criteria=1, workspace=workspace)
    for status, team in [(Recording.Status.QUEUED, "north"), (Recording.Status.JUDGING, "north"),
                         (Recording.Status.TRANSCRIBING, "north"), (Recording.Status.QUEUED, "south"),
                         (Recording.Status.RECEIVED, "north")]:  # fmt: skip
        RecordingFactory(rubric=rubric, team=team, status=status)
    user = User.objects.create_user("ana", password="pass-word-123", is_staff=True)
    member_add(user=user, workspace=workspace, role=Role.SUPERVISOR, teams=["north"])
    english, spanish = Client(HTTP_ACCEPT_LANGUAGE="en"), Client(HTTP_ACCEPT_LANGUAGE="es")
    for client in (english, spanish):
        client.force_login(User.objects.get(pk=user.pk))

    assert "3 calls are still being judged: each joins this queue" in english.get("/review/").content.decode()
    assert "3 llamadas se están evaluando todavía" in spanish.get("/review/").content.decode()

    Recording.objects.filter(status__in=[Recording.Status.QUEUED, Recording.Status.JUDGING,
                                         Recording.Status.TRANSCRIBING]).update(status=Recording.Status.JUDGED)  # fmt: skip
    assert 'id="being-judged"' not in english.get("/review/").content.decode()
