"""In headless Chromium, the issue's "done when": a supervisor opens a coaching session from a cell of the
scorecards' table (by mouse at one width, by keyboard at the other), the agent acknowledges it by keyboard (and,
on the way, self-reviews one of their calls blind), and at the follow-up the session shows the effect with its
intervals. Each run alternates language and width between the coach and the agent, so both languages are seen at
both widths; axe-core finds nothing wrong on the pages."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.utils import timezone

from access.models import DEFAULT_WORKSPACE, Workspace
from access.services import member_add
from coaching.models import CoachingSession
from insights.selfreview.models import SelfReview
from tests.disputes.conftest import reviewed_call
from tests.disputes.test_browser import log_in, tab_to
from tests.factories import UserFactory, published_rubric
from tests.review.test_browser import SCREENSHOTS, accessibility_violations, browser  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GRANTS = {
    "Supervisors": [("reviews", "add_review"), ("qa", "view_score"), ("coaching", "add_coachingsession")],
    "Agents": [("disputes", "add_dispute")],
}


def days_ago(n):
    return timezone.now() - timedelta(days=n)


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
    # Before the session (10–8 days ago): Ana's c1 is 2, Bruno's 3; every call reviewed, so every estimate is exact.
    for day in (10, 9, 8):
        reviewed_call(rubric, "agent-ana", sup, values={"c1": 2}, team="support", occurred_at=days_ago(day))
        reviewed_call(rubric, "agent-bruno", sup, values={"c1": 3}, team="support", occurred_at=days_ago(day))
    return rubric, sup


def after_the_session(rubric, sup, session):
    """The session as if held 5 days ago with its follow-up today, and the calls since: Ana's c1 4, Bruno's still
    3 (days 3–1 ago)."""
    CoachingSession.objects.filter(pk=session.pk).update(created_at=days_ago(5), follow_up_on=timezone.localdate())
    calls = [
        reviewed_call(rubric, agent, sup, values={"c1": value}, team="support", occurred_at=days_ago(day))
        for day in (3, 2, 1)
        for agent, value in (("agent-ana", 4), ("agent-bruno", 3))
    ]
    return calls[0]  # one of Ana's, not yet seen by her


def fits(page, width: int) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth") <= width


def reach_by_keyboard(page, selector: str, limit: int = 120) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


@pytest.mark.parametrize(
    ("coach_locale", "coach_width", "agent_locale", "agent_width"),
    [("es-ES", 1280, "en-GB", 390), ("en-GB", 390, "es-ES", 1280)],
)
def test_a_supervisor_coaches_from_a_scorecard_cell_and_the_follow_up_shows_the_effect(
    live_server, browser, coached, coach_locale, coach_width, agent_locale, agent_width  # noqa: F811
):
    rubric, sup = coached
    coach = browser.new_context(locale=coach_locale, viewport={"width": coach_width, "height": 900}).new_page()
    log_in(coach, f"{live_server.url}/scorecards/?rubric={rubric.slug}", "sup")
    coach.wait_for_url(f"{live_server.url}/scorecards/**")
    cell = "a.coach-cell[href*='agent=agent-ana'][href*='criterion=c1']"
    assert coach.locator(cell).count() == 1
    assert coach.locator("tr.team-row a.coach-cell").count() == 0  # a team's row is no one to coach
    assert accessibility_violations(coach) == [] and fits(coach, coach_width)
    if coach_width < 600:  # by keyboard on the phone's width, by mouse on the desktop's
        reach_by_keyboard(coach, cell)
        coach.keyboard.press("Enter")
    else:
        coach.locator(cell).click()
    coach.wait_for_url(f"{live_server.url}/coaching/new/**")
    assert coach.locator("input[name=criteria][value=c1]").is_checked()
    assert not coach.locator("input[name=criteria][value=c2]").is_checked()
    assert accessibility_violations(coach) == []
    coach.fill("#id_goal", "Confirm the amount before closing")
    coach.click("#coaching-form button[type=submit]")
    coach.wait_for_url(f"{live_server.url}/coaching/*/")
    session = CoachingSession.objects.get()
    assert (session.agent_id, [c.criterion.key for c in session.criteria.all()]) == ("agent-ana", ["c1"])
    assert coach.locator("#goal").inner_text() == "Confirm the amount before closing"

    unseen = after_the_session(rubric, sup, session)
    agent = browser.new_context(locale=agent_locale, viewport={"width": agent_width, "height": 900}).new_page()
    log_in(agent, f"{live_server.url}/me/calls/{unseen.pk}/", "ana")
    agent.wait_for_url(f"{live_server.url}/me/calls/{unseen.pk}/")
    # Blind: a form, and none of the judge's or the supervisor's values on the page.
    assert agent.locator("#self-review-form").count() == 1 and agent.locator(".judge-value, .human-value").count() == 0
    assert accessibility_violations(agent) == [] and fits(agent, agent_width)
    for key, value in (("c1", "3"), ("c2", "4"), ("c3", "5")):
        agent.select_option(f"#id_{key}", value)
    agent.locator("#self-review-button").focus()
    agent.keyboard.press("Enter")
    agent.wait_for_selector("#self-review-table")
    row = agent.locator("#self-review-table tr[data-criterion=c1]")
    assert [row.locator(f"td.{name}").inner_text() for name in ("own", "judge", "human", "minus-human")] == ["3", "4", "4", "-1"]
    assert SelfReview.objects.get().values.count() == 3
    agent.screenshot(path=SCREENSHOTS / f"self-review-{agent_locale}-{agent_width}.png", full_page=True)
    assert accessibility_violations(agent) == [] and fits(agent, agent_width)

    agent.goto(f"{live_server.url}/coaching/mine/")
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

    # The follow-up: the coach's session page, the effect of coaching with its interval.
    coach.goto(f"{live_server.url}/coaching/{session.pk}/")
    cells = coach.locator("#effect-table tr[data-criterion=c1] td")
    texts = [cells.nth(i).inner_text() for i in range(cells.count())]
    effect = coach.locator("#effect-table tr[data-criterion=c1] td.effect").inner_text()
    # Every call reviewed: exact estimates, so the intervals are points: +2 for Ana, 0 for the rest of the team.
    assert "[" in effect and "2" in effect, texts
    assert sum("[" in text for text in texts) >= 4, texts  # before, after, change and effect, each with its interval
    coach.screenshot(path=SCREENSHOTS / f"coaching-follow-up-{coach_locale}-{coach_width}.png", full_page=True)
    assert accessibility_violations(coach) == [] and fits(coach, coach_width)
