"""A self-review is counted apart: an agent scoring every one of their calls the opposite of the supervisors changes
no human reference, no review, no report, no scorecard and no routing certificate. And no module that computes a
figure reads self-reviews at all: only their own package and the pages that show them import it."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
from django.forms.models import model_to_dict

from insights.reports.selectors import deviation_report
from insights.scorecards.selectors import OVERALL, scorecard
from insights.selfreview.models import SelfReview
from insights.selfreview.services import self_review_submit
from qa.models import CertifiedThreshold, Recording
from reviews.filters import ReportFilters
from reviews.models import CriterionReview, Review
from reviews.reference import human_references
from routing.services import thresholds_certify
from tests.disputes.conftest import agent_user
from tests.factories import published_rubric
from tests.routing.test_thresholds import audited

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def certificates(rubric, day):
    return sorted(
        (row.criterion.key, {k: v for k, v in model_to_dict(row).items() if k not in ("id", "day")})
        for row in CertifiedThreshold.objects.filter(rubric=rubric, day=day).select_related("criterion")
    )


def figures(rubric):
    ids = list(Recording.objects.filter(rubric=rubric).values_list("pk", flat=True))
    filters = ReportFilters(rubric=rubric)
    return {
        "references": human_references(recording_ids=ids),
        "reviews": (Review.objects.count(), CriterionReview.objects.count()),
        "scorecard": scorecard(filters, sort=OVERALL),
        "deviation": deviation_report(filters),
    }


def test_an_agent_self_reviewing_every_call_changes_no_figure(workspace):
    rubric = published_rubric(criteria=2)
    # 30 audited calls of agent-1 (the factories' agent): c2 disagrees on three, so the certificates differ by criterion.
    audited(rubric, 30, c2_disagree={3, 10, 20})
    agent = agent_user("marta", "agent-1")
    day_before, day_after = datetime.date(2026, 12, 1), datetime.date(2026, 12, 2)
    thresholds_certify(day=day_before)
    before = figures(rubric)
    assert before["references"] and before["scorecard"].rows and certificates(rubric, day_before)

    for recording in Recording.objects.filter(rubric=rubric):
        self_review_submit(recording=recording, user=agent, values={"c1": 1, "c2": 5})
    assert SelfReview.objects.filter(skipped=False).count() == 30

    thresholds_certify(day=day_after)
    assert figures(rubric) == before
    assert certificates(rubric, day_after) == certificates(rubric, day_before)


ALLOWED = {
    "insights/models.py",  # registers the models
    "insights/admin.py",
    "insights/agents/views.py",  # the agent's call page and scorecard
    "insights/scorecards/views.py",  # the agent's figure on their supervisors' page
}


def test_only_the_pages_that_show_self_reviews_import_them():
    readers = set()
    for path in ROOT.glob("*/**/*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(("tests/", ".venv/", "insights/selfreview/", "insights/migrations/")):
            continue
        if re.search(r"\bselfreview\b|\bSelfReview", path.read_text(encoding="utf-8")):
            readers.add(relative)
    assert readers == ALLOWED
    assert "selfreview" not in (ROOT / "reviews" / "reference.py").read_text()
