"""In headless Chromium, in both languages and at both widths: a supervisor opens a coaching session from the
agent's scorecard criterion, the session shows the effect with its intervals, and the agent acknowledges it by
keyboard; axe-core finds nothing wrong on the pages."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.utils import timezone

from access.models import DEFAULT_WORKSPACE, Workspace
from access.services import member_add
from coaching.models import CoachingSession
from tests.disputes.conftest import reviewed_call
from tests.disputes.test_browser import log_in, tab_to
from tests.factories import UserFactory, published_rubric
from tests.review.test_browser import SCREENSHOTS, accessibility_violations, browser  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GRANTS = {
    "Supervisors": [("reviews", "add_review"), ("qa", "view_score"), ("coaching", "add_coachingsession")],
    "Agents": [("disputes", "add_dispute")],
}


@pytest.fixture
def coached(db):
    # A transactional test may run after another one flushed the groups the migrations made.
    for name, grants in GRANTS.items():
        group, _ = Group.objects.get_or_create(name=name)
        for app, codename in grants:
            group.permissions.add(*Permission.objects.filter(content_type__app_label=app, codename=codename))
    workspace, _ = Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE, defaults={"name": "Default"})
    call_command("create_agent_user", "agent-ana", "ana", "--password", "pass-word-123")
    sup = UserFactory(username="sup")
    member_add(user=sup, workspace=workspace, role="supervisor")
    rubric = published_rubric()
    now = timezone.now()
    for day, value in ((3, 2), (2, 2), (1, 3)):
        reviewed_call(rubric, "agent-ana", sup, values={"c1": value}, team="support", occurred_at=now - timedelta(days=day))
        reviewed_call(rubric, "agent-bruno", sup, values={"c1": 3}, team="support", occurred_at=now - timedelta(days=day))
    return rubric


@pytest.mark.parametrize(("locale", "width"), [("es-ES", 1280), ("en-GB", 390)])
def test_a_supervisor_coaches_from_the_scorecard_and_the_agent_acknowledges(live_server, browser, coached, locale, width):  # noqa: F811
    rubric = coached
    coach = browser.new_context(locale=locale, viewport={"width": width, "height": 900}).new_page()
    log_in(coach, f"{live_server.url}/scorecards/agent/?rubric={rubric.slug}&agent=agent-ana", "sup")
    coach.wait_for_url(f"{live_server.url}/scorecards/agent/**")
    coach.locator("#criterion-c1 a.coach-link").click()
    coach.wait_for_url(f"{live_server.url}/coaching/new/**")
    assert coach.locator("input[name=criteria][value=c1]").is_checked()
    assert accessibility_violations(coach) == []
    coach.fill("#id_goal", "Confirm the amount before closing")
    coach.click("#coaching-form button[type=submit]")
    coach.wait_for_url(f"{live_server.url}/coaching/*/")
    session = CoachingSession.objects.get()
    assert coach.locator("#goal").inner_text() == "Confirm the amount before closing"
    before = coach.locator("#effect-table tr[data-criterion=c1] td").first.inner_text()
    assert "[" in before  # the before estimate with its interval (every call reviewed: exact)
    assert coach.locator("#effect-table td.effect").count() == 1
    coach.screenshot(path=SCREENSHOTS / f"coaching-session-{locale}-{width}.png", full_page=True)
    assert accessibility_violations(coach) == []

    agent = browser.new_context(locale=locale, viewport={"width": width, "height": 900}).new_page()
    log_in(agent, f"{live_server.url}/coaching/mine/", "ana")
    agent.wait_for_url(f"{live_server.url}/coaching/mine/")
    agent.click(f"#my-sessions a[href='/coaching/mine/{session.pk}/']")
    agent.wait_for_url(f"{live_server.url}/coaching/mine/{session.pk}/")
    assert agent.locator("#effect-table td.effect").count() == 0  # no team figure is the agent's
    assert accessibility_violations(agent) == []
    tab_to(agent, "acknowledge", limit=60)
    agent.keyboard.press("Enter")
    agent.wait_for_url(f"{live_server.url}/coaching/mine/{session.pk}/")
    agent.wait_for_selector("#acknowledge", state="detached")
    session.refresh_from_db()
    assert session.acknowledged_at is not None
