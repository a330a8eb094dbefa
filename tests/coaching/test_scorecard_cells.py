"""The scorecards' table opens a coaching session from an agent's criterion cell, for those the coaching service
lets coach that agent (access.may_coach) and no one else: a rubric owner reads the same table with plain cells."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from access.services import member_add
from tests.disputes.conftest import reviewed_call
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def page(user, language="en"):
    c = Client(HTTP_ACCEPT_LANGUAGE=language)
    c.force_login(user)
    response = c.get("/scorecards/?rubric=care")
    assert response.status_code == 200
    return c, response.content.decode()


def cell_links(html):
    return re.findall(r'<a class="coach-cell" href="([^"]+)"', html)


@pytest.fixture
def calls(care, sup):
    for agent, team in (("agent-ana", "support"), ("agent-ana", "support"), ("agent-bruno", "sales")):
        reviewed_call(care, agent, sup, values={"c1": 2, "c2": 4}, team=team)


@pytest.mark.parametrize("language", ["en", "es"])
def test_a_supervisor_opens_the_form_from_an_agents_criterion_cell(sup, care, calls, language):
    c, html = page(sup, language)
    links = cell_links(html)
    # Two agents, one link per criterion each (three criteria; not the overall column, not the team rows).
    assert len(links) == 2 * care.criteria.count()
    ana_c2 = next(link for link in links if "agent-ana" in link and "criterion=c2" in link)
    query = parse_qs(urlsplit(ana_c2.replace("&amp;", "&")).query)
    assert query == {"rubric": [str(care.pk)], "agent": ["agent-ana"], "criterion": ["c2"]}
    form = c.get(ana_c2.replace("&amp;", "&")).content.decode()
    assert re.search(r'<input[^>]*name="criteria"[^>]*value="c2"[^>]*checked', form)
    assert not re.search(r'<input[^>]*name="criteria"[^>]*value="c1"[^>]*checked', form)
    assert "agent-ana" in form


def test_a_team_limited_supervisor_gets_links_for_their_teams_agents_only(workspace, care, calls):
    sales = UserFactory(username="sales-sup", groups=["Supervisors"])
    member_add(user=sales, workspace=workspace, role="supervisor", teams=["sales"])
    links = cell_links(page(sales)[1])
    assert links and all("agent=agent-bruno" in link for link in links)


def test_cells_stay_plain_for_who_may_not_coach(workspace, care, calls):
    owner = UserFactory(username="owner")
    member_add(user=owner, workspace=workspace, role="rubric_owner")
    _, html = page(owner)
    assert "agent-ana" in html  # the owner reads the table ...
    assert cell_links(html) == []  # ... with no link to coach
    assert "/coaching/new/" not in html


def test_a_lead_gets_the_links_too(lead, care, calls):
    assert len(cell_links(page(lead)[1])) == 2 * care.criteria.count()
