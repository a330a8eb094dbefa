"""The dashboard's share of calls that needed no review, and the guarantee beside it."""

from __future__ import annotations

import pytest
from django.test import Client

from insights.dashboard.selectors import dashboard
from qa.models import Recording
from reviews.filters import ReportFilters
from routing.services import thresholds_certify
from tests.factories import UserFactory, judged_recording, published_rubric
from tests.routing.test_thresholds import reviewed_call

pytestmark = pytest.mark.django_db


def test_the_share_of_calls_that_went_to_no_one_and_the_guarantee():
    rubric = published_rubric(slug="care", criteria=2)
    # 25 audited (and reviewed) calls: c1 certified at 0.9; c2's values disagree, so it is not.
    for _ in range(25):
        reviewed_call(rubric, confidence={"c1": 0.9, "c2": 0.9}, human={"c1": 4, "c2": 2}, reasons=["random_audit"])
    # 15 calls that went to no one, 10 routed for low confidence.
    for _ in range(15):
        judged_recording(rubric=rubric, status=Recording.Status.JUDGED, review_reasons=[])
    for _ in range(10):
        judged_recording(rubric=rubric, status=Recording.Status.IN_REVIEW, review_reasons=["low_confidence"], needs_review=True)
    thresholds_certify()

    board = dashboard(ReportFilters(rubric=rubric))
    figures = board.no_review
    assert (figures.judged, figures.unreviewed, figures.share) == (50, 15, 0.3)
    assert (figures.target, figures.risk, figures.certified, figures.criteria) == (0.9, 0.1, 1, 2)

    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(UserFactory(groups=["Supervisors"]))
    page = client.get("/dashboard/?rubric=care").content.decode()
    assert 'id="tile-no-review"' in page and "30%" in page and "15 of 50 judged calls went to no one" in page
    text = " ".join(page.split())
    assert (
        "Criteria certified: 1 of 2. Their values that skip review agree with a supervisor at least 90% of the time,"
        " with probability 90%; the others keep the fixed threshold." in text
    )
    spanish = Client(HTTP_ACCEPT_LANGUAGE="es")
    spanish.force_login(UserFactory(groups=["Supervisors"]))
    text = " ".join(spanish.get("/dashboard/?rubric=care").content.decode().split())
    assert "Sin revisión" in text and "15 de 50 llamadas evaluadas no fueron a nadie" in text
    assert "Criterios certificados: 1 de 2." in text
