"""The scorecard pages: access, cells, the agent's page with its coaching list, CSV, Spanish."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def rows_of(response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


@pytest.mark.parametrize("page", ["scorecards:scorecard", "scorecards:agent"])
def test_pages_need_a_login_and_the_reports_permission(client, teams_data, page):
    url = reverse(page) + "?rubric=care&agent=a1"
    assert client.get(url).status_code == 302
    client.force_login(UserFactory())
    assert client.get(url).status_code == 403
    for user in (UserFactory(groups=["Supervisors"]), UserFactory(groups=["Rubric owners"]), UserFactory(is_staff=True)):
        client.force_login(user)
        assert client.get(url).status_code == 200, user


def test_the_scorecard_page(client, supervisor, teams_data):
    client.force_login(supervisor)
    response = client.get(reverse("scorecards:scorecard"), {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200
    html = response.content.decode()
    print([ (r["row"].team, r["row"].agent_id, [c.estimate for c in r["cells"]]) for r in response.context["rows"]])


def test_the_agent_page(client, supervisor, teams_data):
    client.force_login(supervisor)
    response = client.get(reverse("scorecards:agent"), {"rubric": "care", "agent": "a1"}, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200
