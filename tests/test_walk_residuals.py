"""What the second walk of issue 41 still met on landed code: a superuser's empty agent menu, the experiment
form offering other rubrics' versions, and /reports/ answering 404."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from access.scope import scope_for
from experiments.forms import ExperimentForm
from tests.factories import RubricFactory, UserFactory, published_rubric
from tests.review.conftest import client_for

pytestmark = pytest.mark.django_db

AGENT_MENU = ('href="/me/"', 'href="/me/scorecard/"', 'href="/coaching/mine/"')


def test_the_agents_menu_is_for_agents_only():
    """A superuser holds every capability, the agents' too, but is no agent: "My calls", "My scorecard" and
    "My coaching" opened empty pages for them. An agent still has all three."""
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pass-word-123")
    page = client_for(admin).get("/dashboard/").content.decode()
    nav = page.split('<nav aria-label="Main">', 1)[1].split("</nav>", 1)[0]
    assert not [link for link in AGENT_MENU if link in nav]
    assert 'href="/reports/"' in nav  # the rest of the menu is there
    agent = UserFactory(username="agent-ana", groups=["Agents"])
    nav = client_for(agent).get("/me/").content.decode().split('<nav aria-label="Main">', 1)[1].split("</nav>", 1)[0]
    assert all(link in nav for link in AGENT_MENU)


def test_the_reports_address_is_an_index_of_the_reports():
    lead = UserFactory(username="qlead", groups=["QA leads"])
    for language, words in (("en", ("Reports", "Deviation from supervisors", "Versions compared")),
                            ("es", ("Informes", "Desviación respecto de los supervisores", "Versiones comparadas"))):  # fmt: skip
        response = client_for(lead, language).get("/reports/")
        assert response.status_code == 200
        index = response.content.decode().split('id="reports-index"', 1)[1]
        assert all(word in index for word in words)
        assert 'href="/reports/deviation/"' in index and 'href="/reports/evidence/"' in index


def test_the_candidate_versions_are_the_chosen_rubrics():
    owner = UserFactory(username="owner", groups=["Rubric owners"])
    published_rubric(slug="care", name="Care")
    published_rubric(slug="collect", name="Collect")
    RubricFactory(slug="collect", name="Collect", version=2, status="draft")
    form = ExperimentForm(scope=scope_for(owner))
    groups = dict(form.fields["candidate_version"].choices)
    assert [value for value, _label in groups["Care"]] == [1] and [value for value, _label in groups["Collect"]] == [1, 2]
    data = {"rubric": "care", "candidate_version": 2, "baseline": "stored", "group": "all", "seed": 0}
    form = ExperimentForm(data, scope=scope_for(owner))
    assert not form.is_valid() and form.errors["candidate_version"] == ["This rubric has no version 2."]
    assert ExperimentForm({**data, "rubric": "collect"}, scope=scope_for(owner)).is_valid()
