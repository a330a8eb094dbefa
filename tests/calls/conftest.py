"""Calls in two languages for the calls list, a QA lead who assigns them."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.utils import timezone

from qa.models import Recording
from rubrics.models import Rubric
from tests.factories import UserFactory, judged_recording, published_rubric

SPANISH = "AGENTE: Buenas tardes, ¿en qué puedo ayudarle?\nCLIENTE: Me cobraron dos veces la factura de octubre.\n"
ENGLISH = "AGENT: Good afternoon, how can I help?\nCUSTOMER: I was charged twice, I want a refund of both charges.\n"
OTHER = "AGENT: Bom dia.\nCUSTOMER: Quero 5 < 6 & 7 reembolso <script>alert(1)</script> agora.\n"


def at(day: int) -> datetime:
    return timezone.make_aware(datetime(2026, 11, day, 10, 0))


def call(rubric: Rubric, external_id: str, transcript: str, language: str, **fields) -> Recording:
    fields = {"agent_id": "a1", "agent_name": "Marta", "team": "north", "occurred_at": at(2), **fields}
    return judged_recording(
        rubric=rubric, external_id=external_id, transcript=transcript, language=language, **fields
    )


def queued_call(rubric: Rubric, external_id: str, transcript: str = SPANISH, language: str = "es", **fields) -> Recording:
    reasons = fields.pop("reasons", [Recording.ReviewReason.LOW_CONFIDENCE])
    return call(
        rubric, external_id, transcript, language,
        status=Recording.Status.IN_REVIEW, needs_review=True, review_reasons=reasons, **fields,
    )  # fmt: skip


@pytest.fixture
def calls(db) -> dict[str, Recording]:
    rubric = published_rubric(slug="care", name="Care")
    return {
        "es": call(rubric, "es-1", SPANISH, "es-AR", occurred_at=at(3)),
        "en": call(rubric, "en-1", ENGLISH, "en", team="south", agent_id="a2", agent_name="John", occurred_at=at(4)),
        "pt": call(rubric, "pt-1", OTHER, "pt", occurred_at=at(5)),
    }


@pytest.fixture
def lead(db):
    return UserFactory(username="lead", groups=["QA leads"])


@pytest.fixture
def other_supervisor(db):
    return UserFactory(username="supervisor2", groups=["Supervisors"])
