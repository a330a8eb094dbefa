"""One meaning of "the agent" and of a period's bounds in every filter of calls (docs/dev/design.md, "Call
filters"): the agent id, exactly, never part of a name; a page's days whole and both included, the API's
instants half-open. Each page and API that filters calls is asked the same question about the same calls."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

import pytest
from django.utils import timezone

from access.scope import scope_for
from calibration.selectors import CallSelection as CalibrationSelection
from calibration.selectors import calibration_pool
from insights.reports.selectors import report_run_q
from insights.scorecards.moments import judged_calls
from qa.models import JudgeRun, Recording
from reviews.filters import ReportFilters
from tests.api.conftest import key_client, new_key
from tests.factories import judged_recording
from tests.review.conftest import client_for

pytestmark = pytest.mark.django_db

FIRST, LAST = date(2026, 11, 2), date(2026, 11, 3)


def moment(day: date, *clock: int) -> datetime:
    return timezone.make_aware(datetime(day.year, day.month, day.day, *clock))


@pytest.fixture
def calls(rubric) -> dict[str, Recording]:
    """Around the two days FIRST and LAST: agent a-7 (Ana) and a-70 (Mariana, whose name holds "Ana")."""

    def call(name: str, agent_id: str, agent_name: str, at: datetime) -> Recording:
        return judged_recording(
            rubric=rubric, external_id=name, agent_id=agent_id, agent_name=agent_name, occurred_at=at,
            status=Recording.Status.IN_REVIEW, needs_review=True, review_reasons=[Recording.ReviewReason.LOW_CONFIDENCE],
        )  # fmt: skip

    return {
        "before": call("before", "a-7", "Ana", moment(FIRST) - timedelta(seconds=1)),  # the last second of the day before
        "start": call("start", "a-7", "Ana", moment(FIRST)),  # the first moment of the first day
        "end": call("end", "a-70", "Mariana", moment(LAST, 23, 59, 59)),  # the last second of the last day
        "after": call("after", "a-7", "Ana", moment(LAST + timedelta(days=1))),  # the first moment of the day after
    }


# What every filter must answer: (agent, from, to) -> the calls.
EXPECTED = [
    ({"agent": "a-7"}, {"before", "start", "after"}),
    ({"agent": "Ana"}, set()),  # a name, or part of one, is no agent
    ({"agent": "a-"}, set()),  # nor is part of an id
    ({"date_from": FIRST, "date_to": LAST}, {"start", "end"}),  # whole days, both included
    ({"date_from": FIRST, "date_to": FIRST}, {"start"}),
    ({"agent": "a-70", "date_from": FIRST, "date_to": LAST}, {"end"}),
]


def names(recordings) -> set[str]:
    return set(Recording.objects.filter(pk__in=[r.pk for r in recordings]).values_list("external_id", flat=True))


def page_query(filters: dict) -> str:
    return "&".join(f"{key}={value.isoformat() if isinstance(value, date) else value}" for key, value in filters.items())


def listed(response, calls) -> set[str]:
    assert response.status_code == 200
    ids = {int(pk) for pk in re.findall(r'<tr data-recording="(\d+)">', response.content.decode())}
    return {name for name, call in calls.items() if call.pk in ids}


@pytest.mark.parametrize(("filters", "expected"), EXPECTED)
def test_the_review_queue_page(calls, supervisor, filters, expected):
    assert listed(client_for(supervisor).get(f"/review/?{page_query(filters)}"), calls) == expected


@pytest.mark.parametrize(("filters", "expected"), EXPECTED)
def test_the_find_calls_page(calls, supervisor, filters, expected):
    assert listed(client_for(supervisor).get(f"/calls/?{page_query(filters)}"), calls) == expected


@pytest.mark.parametrize(("filters", "expected"), EXPECTED)
def test_the_calls_api(calls, supervisor, filters, expected):
    response = client_for(supervisor).get(f"/api/calls/?{page_query(filters)}")
    assert response.status_code == 200
    found = {row["id"] for row in response.json()["results"]}
    assert {name for name, call in calls.items() if call.pk in found} == expected


@pytest.mark.parametrize(("filters", "expected"), EXPECTED)
def test_the_recordings_api_with_the_same_period_as_instants(calls, filters, expected):
    """The API's bounds are instants, [occurred_after, occurred_before): a page's days are that interval."""
    query = {"agent": filters["agent"]} if "agent" in filters else {}
    if "date_from" in filters:
        query["occurred_after"] = moment(filters["date_from"]).isoformat()
        query["occurred_before"] = moment(filters["date_to"] + timedelta(days=1)).isoformat()
    client = key_client(new_key("crm", all_sources=True)[1])
    response = client.get("/api/recordings/", query)
    assert response.status_code == 200
    found = {row["id"] for row in response.json()["results"]}
    assert {name for name, call in calls.items() if call.pk in found} == expected


@pytest.mark.parametrize(("filters", "expected"), EXPECTED)
def test_the_reports_and_the_dashboard(calls, rubric, supervisor, filters, expected):
    """Every figure of the reports (and the dashboard, which reads them) selects its runs by report_run_q."""
    report = ReportFilters(rubric=rubric, scope=scope_for(supervisor), **filters)
    runs = JudgeRun.objects.filter(report_run_q(report, ""))
    assert names(Recording.objects.filter(pk__in=runs.values("recording_id"))) == expected


@pytest.mark.parametrize(("filters", "expected"), [(f, e) for f, e in EXPECTED if "agent" not in f])
def test_the_scorecards_period(calls, rubric, filters, expected):
    """A scorecard covers every agent; its period (since, until) is whole days, both included."""
    assert names(Recording.objects.filter(judged_calls(rubric, filters["date_from"], filters["date_to"])(""))) == expected


@pytest.mark.parametrize(("filters", "expected"), EXPECTED)
def test_a_calibration_sessions_pool(calls, rubric, filters, expected):
    assert names(calibration_pool(rubric, CalibrationSelection(**filters))) == expected
