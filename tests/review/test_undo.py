"""Undo after an immediate submit: review_void appends a ReviewVoid, and the review counts for nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from qa.models import Recording
from reviews.models import Review, ReviewVoid
from reviews.reference import human_references, latest_reviews
from reviews.services import CriterionAdjustment, UndoExpiredError, review_create, review_void
from tests.review.conftest import client_for, queued

pytestmark = pytest.mark.django_db


def approve(recording, user, value=None):
    criteria = [CriterionAdjustment("c1", adjusted_value=value, comment="why")] if value else []
    return review_create(
        recording=recording, decision="approve", reviewer=user.username, user=user, criteria=criteria, replace_final=True
    )


def test_an_undone_review_stays_stored_and_counts_for_nothing(supervisor):
    recording = queued(values={"c1": 4, "c2": 4, "c3": 4})
    first = approve(recording, supervisor, value=2)
    second = approve(recording, supervisor, value=3)
    review_void(review=second, user=supervisor)

    assert Review.log.count() == 2 and ReviewVoid.objects.get().review == second  # appended, nothing edited
    assert list(Review.objects.all()) == [first] and list(latest_reviews()) == [first]
    assert human_references(recording_ids=[recording.pk])[(recording.pk, "c1")].value == 2  # the earlier one again
    recording.refresh_from_db()
    assert recording.status == Recording.Status.REVIEWED and recording.rollup_stale

    review_void(review=first, user=supervisor)
    recording.refresh_from_db()
    assert recording.status == Recording.Status.IN_REVIEW  # as it was before any review: in the queue
    assert not Review.objects.exists()


def test_only_the_reviewer_undoes_only_the_latest_only_in_time_and_never_a_blind_audit(supervisor, other_supervisor):
    recording = queued(values={"c1": 4, "c2": 4, "c3": 4})
    first = approve(recording, supervisor)
    with pytest.raises(PermissionDenied):
        review_void(review=first, user=other_supervisor)
    second = approve(recording, other_supervisor)
    with pytest.raises(UndoExpiredError, match="reviewed again since"):
        review_void(review=first, user=supervisor)
    Review.objects.filter(pk=second.pk).update(created_at=timezone.now() - timedelta(seconds=16))
    with pytest.raises(UndoExpiredError, match="Too late"):
        review_void(review=second, user=other_supervisor)
    Review.objects.filter(pk=second.pk).update(blind=True, created_at=timezone.now())
    with pytest.raises(UndoExpiredError, match="blind audit"):
        review_void(review=second, user=other_supervisor)
    assert not ReviewVoid.objects.exists()


def test_the_page_offers_undo_after_a_submit_and_the_undo_url_voids_it(supervisor):
    recording = queued(values={"c1": 4, "c2": 4, "c3": 4})
    client = client_for(supervisor)
    saved = client.post(f"/review/{recording.pk}/", {"decision": "approve"}, follow=True)
    review = Review.objects.get()
    assert f'action="/review/undo/{review.pk}/"' in saved.content.decode()
    assert client.get("/review/undo/1/").status_code == 405  # a POST only
    undone = client.post(f"/review/undo/{review.pk}/", follow=True)
    assert undone.redirect_chain[-1][0] == f"/review/{recording.pk}/"
    assert "Review undone" in undone.content.decode() and "undo-toast" not in undone.content.decode()
    assert not Review.objects.exists() and ReviewVoid.objects.count() == 1
