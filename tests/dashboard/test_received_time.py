"""A call posted without its own time is filed under the time it was received, shown as such, and so counts
in the dashboard, the reports and the dated lists like any other call."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from qa.models import Recording
from reviews.filters import ReportFilters
from insights.reports.selectors import evidence_report
from tests.api.conftest import key_client, new_key
from tests.api.test_ingest import payload
from tests.factories import UserFactory
from tests.judge.conftest import eager_celery, fake_llm, judge_rubric  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


def test_a_call_posted_without_its_time_is_counted_where_dates_filter(fake_llm, django_capture_on_commit_callbacks):  # noqa: F811
    rubric = judge_rubric(audit_rate=1.0, slug="care")  # every judged call goes to review: the backlog counts it
    api = key_client(new_key("ccaas", all_sources=True)[1])
    body = payload(rubric, agent={"id": "a-7", "name": "Marta"})
    del body["occurred_at"]
    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post("/api/recordings/", body, format="json")
    assert answer.status_code == 201, answer.json()
    recording = Recording.objects.get()
    assert recording.status == Recording.Status.IN_REVIEW and fake_llm.requests
    assert recording.occurred_at_received and abs(recording.occurred_at - recording.created_at).total_seconds() < 5
    assert answer.json()["occurred_at_received"] is True
    # The same post again is the same call, not a conflict: the time received is not part of its content.
    assert api.post("/api/recordings/", body, format="json").status_code == 200

    supervisor = UserFactory(groups=["Supervisors"])
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(supervisor)
    board = client.get("/dashboard/", {"rubric": "care"}).content.decode()
    assert "0 of 1 judged calls" in board and "0 of 2 scores" in board
    backlog = board.split('id="tile-backlog"', 1)[1].split("</section>", 1)[0]
    assert '<p class="figure">1</p>' in backlog
    today = timezone.localdate()
    tally = evidence_report(ReportFilters(rubric=rubric, date_from=today, date_to=today)).tally
    assert tally.total == 2  # its two criteria's scores
    listed = client.get("/calls/", {"date_from": today.isoformat(), "date_to": today.isoformat()}).content.decode()
    assert recording.external_id in listed and "received" in listed
    page = client.get(f"/review/{recording.pk}/").content.decode()
    assert 'class="occurred received">received ' in page
    spanish = Client(HTTP_ACCEPT_LANGUAGE="es")
    spanish.force_login(supervisor)
    assert 'class="occurred received">recibida ' in spanish.get(f"/review/{recording.pk}/").content.decode()


def test_a_call_posted_with_its_time_keeps_it(fake_llm, django_capture_on_commit_callbacks):  # noqa: F811
    rubric = judge_rubric(slug="care")
    api = key_client(new_key("ccaas", all_sources=True)[1])
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/recordings/", payload(rubric), format="json").status_code == 201
    recording = Recording.objects.get()
    assert recording.occurred_at.isoformat() == "2026-01-05T10:00:00+00:00" and not recording.occurred_at_received
