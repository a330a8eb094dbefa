"""Claims: opening a queued call takes it for a while, so two supervisors never review it at once."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from reviews.claims import claim_release, claim_take
from reviews.models import Review, ReviewClaim
from tests.review.conftest import client_for, queued

pytestmark = pytest.mark.django_db


def test_a_claim_is_taken_once_and_extended_by_its_holder(supervisor, other_supervisor, settings):
    settings.QA_REVIEW_CLAIM_MINUTES = 30
    recording = queued()

    claim = claim_take(recording=recording, user=supervisor)
    assert claim.user == supervisor
    assert timedelta(minutes=29) < claim.expires_at - timezone.now() <= timedelta(minutes=30)
    assert claim_take(recording=recording, user=other_supervisor) is None

    ReviewClaim.objects.filter(pk=claim.pk).update(expires_at=timezone.now() + timedelta(minutes=1))
    assert claim_take(recording=recording, user=supervisor).expires_at > timezone.now() + timedelta(minutes=29)
    assert ReviewClaim.objects.get().user == supervisor


def test_an_expired_claim_is_taken_over(supervisor, other_supervisor):
    recording = queued()
    claim_take(recording=recording, user=supervisor)
    ReviewClaim.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert claim_take(recording=recording, user=other_supervisor).user == other_supervisor
    assert ReviewClaim.objects.count() == 1


def test_only_the_holder_releases_a_claim(supervisor, other_supervisor):
    recording = queued()
    claim_take(recording=recording, user=supervisor)
    assert not claim_release(recording=recording, user=other_supervisor)
    assert claim_release(recording=recording, user=supervisor)
    assert claim_take(recording=recording, user=other_supervisor).user == other_supervisor


def test_opening_a_queued_call_claims_it_and_a_second_supervisor_cannot_review_it(sup_client, other_supervisor):
    recording = queued()
    page = sup_client.get(f"/review/{recording.pk}/").content.decode()
    assert "You are reviewing this call until" in page
    assert ReviewClaim.objects.get(recording=recording).user.username == "supervisor"

    other = client_for(other_supervisor)
    page = other.get(f"/review/{recording.pk}/").content.decode()
    assert "supervisor is reviewing this call until" in page
    assert "<fieldset disabled>" in page
    response = other.post(f"/review/{recording.pk}/", {"decision": "approve"} | values(recording))
    assert response.status_code == 200
    assert "supervisor is reviewing this call; your review was not saved." in response.content.decode()
    assert not Review.objects.exists()
    assert ReviewClaim.objects.get(recording=recording).user.username == "supervisor"


def test_once_the_claim_expires_another_supervisor_takes_the_call(sup_client, other_supervisor):
    recording = queued()
    sup_client.get(f"/review/{recording.pk}/")
    ReviewClaim.objects.update(expires_at=timezone.now() - timedelta(minutes=1))

    other = client_for(other_supervisor)
    page = other.get(f"/review/{recording.pk}/").content.decode()

    assert "You are reviewing this call until" in page
    assert ReviewClaim.objects.get(recording=recording).user == other_supervisor
    # The first supervisor, back from a break, now finds it taken.
    response = sup_client.post(f"/review/{recording.pk}/", {"decision": "approve"} | values(recording))
    assert "your review was not saved" in response.content.decode()


def test_releasing_frees_the_call(sup_client, other_supervisor):
    recording = queued()
    sup_client.get(f"/review/{recording.pk}/")
    response = sup_client.post(f"/review/{recording.pk}/release/?team=support")
    assert response["Location"] == "/review/?team=support"
    assert not ReviewClaim.objects.exists()
    client_for(other_supervisor).get(f"/review/{recording.pk}/")
    assert ReviewClaim.objects.get().user == other_supervisor


def test_submitting_a_review_ends_the_claim(sup_client):
    recording = queued()
    sup_client.get(f"/review/{recording.pk}/")
    sup_client.post(f"/review/{recording.pk}/", {"decision": "approve"} | values(recording))
    assert Review.objects.count() == 1
    assert not ReviewClaim.objects.exists()


def test_next_skips_calls_held_by_others_and_leaves_the_current_one(sup_client, other_supervisor):
    first = queued(confidence=0.1)
    held = queued(confidence=0.2)
    third = queued(confidence=0.3)
    claim_take(recording=held, user=other_supervisor)

    response = sup_client.post("/review/next/")
    assert response["Location"] == f"/review/{first.pk}/"
    sup_client.get(response["Location"])

    response = sup_client.post("/review/next/", {"after": first.pk})
    assert response["Location"] == f"/review/{third.pk}/"
    assert not ReviewClaim.objects.filter(recording=first).exists()  # moving on gives the call back

    response = sup_client.post("/review/next/?reason=random_audit", {"after": third.pk})
    assert response["Location"] == "/review/?reason=random_audit"


def test_the_queue_offers_claimed_calls_as_taken(sup_client, other_supervisor):
    recording = queued()
    client_for(other_supervisor).get(f"/review/{recording.pk}/")
    row = re.search(rf'<tr data-recording="{recording.pk}">.*?</tr>', sup_client.get("/review/").content.decode(), re.S)
    assert "supervisor2" in row.group()


def values(recording) -> dict[str, str]:
    return {f"criterion-{s.criterion.key}-value": str(s.value) for s in recording.current_run.scores.all()}
