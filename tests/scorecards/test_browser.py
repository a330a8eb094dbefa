"""In headless Chromium (Debian's, through Playwright): open the scorecard, then an agent's page by keyboard."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from insights.scorecards.services import scorecard_weeks_refresh_all
from tests.scorecards.conftest import call

from tests.review.test_browser import (  # noqa: F401 (fixtures)
    SCREENSHOTS,
    accessibility_violations,
    browser,
    supervisor_with_password,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def log_in(page, url: str) -> None:
    page.goto(url)
    page.fill("#id_username", "marta")
    page.fill("#id_password", "pass-word-123")
    page.click("main button[type=submit]")  # the top bar has the language button
    page.wait_for_url(url)


@pytest.mark.parametrize(("locale", "width"), [("en-US", 1280), ("es-ES", 390)])
def test_a_scorecard_and_an_agents_page(  # noqa: F811 (pytest fixtures imported above)
    live_server, browser, supervisor_with_password, teams_data, locale, width
):
    # A transactional test may run after another flushed the permissions the migration gave the group.
    supervisor_with_password.groups.get().permissions.add(
        Permission.objects.get(content_type__app_label="qa", codename="view_score")
    )
    scorecard_weeks_refresh_all()  # Celery beat's pass; then one call judged after it
    call(teams_data, "a3", "south", {"c1": 3})
    page = browser.new_page(locale=locale, viewport={"width": width, "height": 900})
    url = f"{live_server.url}/scorecards/?rubric=care"
    log_in(page, url)
    english = locale == "en-US"
    as_of = page.locator("#figures-as-of")
    assert as_of.is_visible()
    said = "1 call judged or reviewed since then is counted" if english else "1 llamada evaluada o revisada desde"
    assert said in as_of.inner_text()

    rows = page.locator("table.scorecard tbody tr")
    assert rows.count() == 5  # north, its two agents, south, its agent
    assert page.locator("tr.team-row").count() == 2
    a2 = page.locator("tr", has=page.locator("a", has_text="A2"))
    pooled = "correction pooled from the team's 14 audited calls" if english else "del equipo"
    assert pooled in a2.inner_text()
    heading = "What the correction does" if english else "Qué hace la corrección"
    assert page.locator("#correction h2").inner_text() == heading
    page.screenshot(path=SCREENSHOTS / f"scorecard-{locale}-{width}.png", full_page=True)
    assert accessibility_violations(page) == []

    # By keyboard: focus the agent's link and follow it.
    page.locator("a", has_text="A1").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/scorecards/agent/**")
    assert "A1" in page.locator("h1").inner_text()
    assert page.locator("#criterion-c1 svg.chart").count() == 1
    coaching = page.locator("#criterion-c1 ul.coaching").first
    assert coaching.locator("a").count() == 5  # a1's five lowest verified scores, each to its review page
    assert coaching.locator("a").first.get_attribute("href").startswith("/review/")
    page.screenshot(path=SCREENSHOTS / f"scorecard-agent-{locale}-{width}.png", full_page=True)
    # Nothing wider than the window but the scrollable tables.
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    assert accessibility_violations(page) == []
