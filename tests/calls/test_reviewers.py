"""The reviewers' throughput: reviews, days with reviews, the median time per review within a sitting,
the share rejected; for QA leads."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from access.scope import EVERYTHING
from calls.selectors import reviewer_throughput
from reviews.models import Review
from tests.api.conftest import new_key
from tests.calls.conftest import queued_call
from tests.factories import published_rubric
from tests.review.conftest import client_for

pytestmark = pytest.mark.django_db


def moment(day: int, hour: int, minute: int, second: int = 0) -> datetime:
    return timezone.make_aware(datetime(2026, 11, day, hour, minute, second))


def reviewed(user, when: datetime, decision: str = Review.Decision.APPROVE) -> Review:
    recording = queued_call(published_rubric(), f"r-{user.username}-{when:%d%H%M%S}")
    review = Review.objects.create(
        recording=recording, run=recording.current_run, reviewer=user.username, user=user, decision=decision
    )
    Review.objects.filter(pk=review.pk).update(created_at=when)  # auto_now_add: the test sets the moment
    return review


@pytest.fixture
def worked(supervisor, other_supervisor):
    """supervisor: day 2 at 10:00, 10:04, 10:10 (gaps 4 and 6 min), 14:00 (a new sitting); day 3 at 09:00 and
    09:02:30 (2.5 min), one a reject. Median of 4, 6, 2.5 minutes: 4 min. 6 reviews on 2 days: 3 a day.
    supervisor2: one reject on day 2: no time (no sitting of two), 100% rejected."""
    for when in (moment(2, 10, 0), moment(2, 10, 4), moment(2, 10, 10), moment(2, 14, 0), moment(3, 9, 0)):
        reviewed(supervisor, when)
    reviewed(supervisor, moment(3, 9, 2, 30), Review.Decision.REJECT)
    reviewed(other_supervisor, moment(2, 11, 0), Review.Decision.REJECT)
    reviewed(supervisor, moment(20, 9, 0))  # outside the period
    by_key = reviewed(supervisor, moment(2, 10, 5))
    Review.objects.filter(pk=by_key.pk).update(user=None, api_key=new_key("ccaas")[0])  # a system's: not counted


def test_the_figures(worked):
    rows = reviewer_throughput(scope=EVERYTHING, date_from=moment(1, 0, 0).date(), date_to=moment(10, 0, 0).date())
    first, second = rows
    assert (first.username, first.reviews, first.days, first.per_day, first.rejected) == ("supervisor", 6, 2, 3.0, 1)
    assert first.median_seconds == 240 and first.rejected_share == pytest.approx(1 / 6)
    assert (second.username, second.reviews, second.median_seconds, second.rejected_share) == ("supervisor2", 1, None, 1.0)


def test_the_page_for_leads(worked, lead, supervisor):
    response = client_for(lead).get("/calls/reviewers/", {"date_from": "2026-11-01", "date_to": "2026-11-10"})
    page = response.content.decode()
    row = page.split('data-reviewer="supervisor"')[1].split("</tr>")[0]
    assert [cell.split(">")[-1] for cell in row.split("</td>")[:-1]] == ["supervisor", "6", "2", "3.0", "4:00", "17%"]
    assert client_for(supervisor).get("/calls/reviewers/").status_code == 403
    assert client_for(lead).get("/calls/reviewers/", {"date_from": "2026-11-10", "date_to": "2026-11-01"}).status_code == 400


def test_the_page_in_spanish(worked, lead):
    page = client_for(lead, "es").get("/calls/reviewers/", {"date_from": "2026-11-01", "date_to": "2026-11-10"})
    assert "Rendimiento de los revisores" in page.content.decode()
    assert "3,0" in page.content.decode()


def test_the_default_period_is_the_last_30_days(lead, supervisor):
    reviewed(supervisor, timezone.now() - timedelta(days=29))
    reviewed(supervisor, timezone.now() - timedelta(days=31))
    assert 'data-reviewer="supervisor"' in client_for(lead).get("/calls/reviewers/").content.decode()
    [row] = reviewer_throughput(scope=EVERYTHING, date_from=timezone.localdate() - timedelta(days=29), date_to=timezone.localdate())
    assert row.reviews == 1


def test_a_disputes_resolution_is_not_the_leads_review(worked, lead):
    """A lead's resolution of a dispute is stored as a final review (`from_dispute`) so the figures read it,
    but it is no review the lead did from the queue: it counted as their reject, at 100 % rejected."""
    resolution = reviewed(lead, moment(2, 15, 0), Review.Decision.REJECT)
    Review.objects.filter(pk=resolution.pk).update(from_dispute=True)
    rows = reviewer_throughput(scope=EVERYTHING, date_from=moment(1, 0, 0).date(), date_to=moment(10, 0, 0).date())
    assert [row.username for row in rows] == ["supervisor", "supervisor2"]
