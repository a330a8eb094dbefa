"""Fixtures for the review UI: queued recordings with scores whose evidence is really verified."""

from __future__ import annotations

import pytest
from django.test import Client

from qa.evidence import verify_evidence
from qa.models import Recording, Score
from tests.factories import UserFactory, judged_recording


def queued(*, reasons: list[str] | None = None, **fields) -> Recording:
    """A judged recording routed to review (low confidence unless other reasons are given)."""
    fields = {"status": Recording.Status.IN_REVIEW, "needs_review": True, **fields}
    return judged_recording(review_reasons=reasons or [Recording.ReviewReason.LOW_CONFIDENCE], **fields)


def set_evidence(recording: Recording, key: str, evidence: str, **fields) -> Score:
    """Give criterion `key` this quote, verified against the transcript as the judge pipeline would."""
    check = verify_evidence(evidence, recording.transcript)
    score = recording.current_run.scores.get(criterion__key=key)
    score.evidence = evidence
    score.evidence_verified = check.verified
    score.verification_status = check.status.value
    score.verification_spans = [list(span) for span in check.spans]
    score.verification_closest = check.closest.to_dict() if check.closest else None
    for name, value in fields.items():
        setattr(score, name, value)
    score.save()
    return score


@pytest.fixture
def other_supervisor(db):
    return UserFactory(username="supervisor2", groups=["Supervisors"])


def client_for(user, language: str = "en") -> Client:
    """A logged-in client; English unless asked, so assertions read like the source strings."""
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    return client


@pytest.fixture
def sup_client(supervisor) -> Client:
    return client_for(supervisor)
