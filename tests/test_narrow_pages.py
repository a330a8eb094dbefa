"""At 390 px, in Spanish and English, the pages a supervisor and a QA lead read are no wider than the
window: the dashboard was 552 px wide (its chart's points and the furthest-criteria table cut). The data are
what a first month gives: calls over several weeks, long criterion titles, audited and reviewed calls."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from rubrics.models import Criterion
from tests.factories import UserFactory, judged_recording, published_rubric
from tests.reports.conftest import APPROVE, AUDIT, add_review, at
from tests.review.conftest import queued
from tests.review.test_browser import SCREENSHOTS, browser, log_in  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TITLES = [
    "Identifica al cliente antes de hablar de la cuenta",
    "Ofrece una solución concreta con fecha de cumplimiento",
    "Explica las comisiones y los plazos sin tecnicismos",
    "Cierra la llamada confirmando que no queda nada pendiente",
]


@pytest.fixture
def month(db):
    group, _ = Group.objects.get_or_create(name="QA leads")
    for app, codename in (("reviews", "add_review"), ("qa", "view_score"), ("qa", "view_recording")):
        group.permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    UserFactory(username="marta", groups=["QA leads"])
    rubric = published_rubric(criteria=4, slug="care", name="Atención al cliente (banca)")
    for criterion, title in zip(Criterion.objects.filter(rubric=rubric).order_by("key"), TITLES):
        Criterion.objects.filter(pk=criterion.pk).update(title=title)
    Criterion.objects.filter(rubric=rubric, key="c1").update(critical=True, fail_at=2)
    for day in range(2, 30):
        values = {f"c{n}": 1 + (day * n) % 5 for n in range(1, 5)}
        recording = judged_recording(
            rubric=rubric, values=values, occurred_at=at(day), review_reasons=[AUDIT], agent_id=f"agent-{day % 6}",
            agent_name=f"Agente número {day % 6}", team="equipo-norte" if day % 2 else "equipo-sur",
        )  # fmt: skip
        add_review(recording, APPROVE, when=at(day, 15), entries={"c2": {"adjusted_value": 1 + (day % 5)}})
    return rubric, queued(rubric=rubric, values={"c1": 2, "c2": 4, "c3": 5, "c4": 3})


PAGES = {
    "dashboard": "/dashboard/?rubric=care&date_from=2026-03-01&date_to=2026-03-31",
    "scorecards": "/scorecards/?rubric=care&since=2026-03-01&until=2026-03-31",
    "deviation": "/reports/deviation/?rubric=care&date_from=2026-03-01&date_to=2026-03-31",
    "evidence": "/reports/evidence/?rubric=care&date_from=2026-03-01&date_to=2026-03-31",
}


@pytest.mark.parametrize("locale", ["es-ES", "en-US"])
def test_no_page_is_wider_than_a_phone(live_server, browser, month, locale):  # noqa: F811
    _rubric, waiting = month
    page = browser.new_page(locale=locale, viewport={"width": 390, "height": 800})
    log_in(page, f"{live_server.url}/dashboard/")
    wide = {}
    for name, url in {**PAGES, "review": f"/review/{waiting.pk}/"}.items():
        page.goto(f"{live_server.url}{url}")
        page.screenshot(path=SCREENSHOTS / f"narrow-{name}-{locale}.png", full_page=True)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        if width > 390:
            culprits = page.evaluate(
                """() => [...document.querySelectorAll('body *')]
                    .filter(e => e.getBoundingClientRect().right > 391)
                    .slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className.baseVal ?? e.className)"""
            )
            wide[name] = (width, culprits)
    assert wide == {}


def _table_overflow(page, boxes_may_scroll: bool = False) -> list:
    """Tables wider than the window, or scrolling inside a box (a page's own width misses those); with
    `boxes_may_scroll`, a box that scrolls on purpose (overflow-x auto, as .table-scroll) is not counted."""
    return page.evaluate(
        """(boxesMayScroll) => [...document.querySelectorAll('table')]
              .filter(t => !(boxesMayScroll && getComputedStyle(t.parentElement).overflowX === 'auto'))
              .filter(t => t.getBoundingClientRect().right > 391
                || (t.parentElement && t.parentElement.scrollWidth > t.parentElement.clientWidth + 1)).map(t => t.id || t.className)""",
        boxes_may_scroll,
    )


@pytest.mark.parametrize("locale", ["es-ES", "en-US"])
def test_the_queue_and_the_agents_calls_fit_a_phone_and_the_login_labels_keep_their_distance(
    live_server, browser, month, locale  # noqa: F811
):
    """Issue 41's second walk: the review queue (and /me/) scrolled sideways at 390 px (now a card per row), and on
    the login page "Usuario" touched its box."""
    for width in (1280, 390):
        page = browser.new_page(locale=locale, viewport={"width": width, "height": 800})
        page.goto(f"{live_server.url}/accounts/login/")
        for field in ("username", "password"):
            label = page.locator(f"label[for=id_{field}]").bounding_box()
            box = page.locator(f"#id_{field}").bounding_box()
            # Above its field with room, or beside it with room: never touching.
            assert label["y"] + label["height"] + 3 <= box["y"] or label["x"] + label["width"] + 3 <= box["x"], (width, field)
        page.close()
    # An agent's /me/ at 390 px: test_an_agents_own_pages_fit_a_phone.
    for user, url in (("marta", "/review/"),):
        page = browser.new_page(locale=locale, viewport={"width": 390, "height": 800})
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", user)
        page.fill("#id_password", "pass-word-123")
        with page.expect_navigation():
            page.press("#id_password", "Enter")
        page.goto(f"{live_server.url}{url}")
        assert page.locator("table tbody tr").count() > 0, url
        page.screenshot(path=SCREENSHOTS / f"narrow-{user}-{locale}.png", full_page=True)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, url
        assert _table_overflow(page) == [], url
        page.close()


def test_an_agents_own_pages_fit_a_phone(live_server, browser, role_groups, month):  # noqa: F811
    """Issue 41's third walk: an agent's calls, scorecard and coaching at 390 px in Spanish, with calls to list.
    `role_groups`: after another transactional test's flush, the Agents group comes back without its permissions,
    so the agent's pages answered 403 with no list (why the second walk's fixture "came out empty")."""
    from django.core.management import call_command

    call_command("create_agent_user", "agent-2", "ana", "--password", "pass-word-123")
    page = browser.new_page(locale="es-ES", viewport={"width": 390, "height": 844})
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "ana")
    page.fill("#id_password", "pass-word-123")
    with page.expect_navigation():
        page.press("#id_password", "Enter")
    page.goto(f"{live_server.url}/me/")
    assert page.locator("table tbody tr").count() == 5  # days 2, 8, 14, 20, 26 of the month: agent-2's calls
    for url in ("/me/", "/me/scorecard/?since=2026-03-01&until=2026-03-31", "/coaching/mine/"):
        page.goto(f"{live_server.url}{url}")
        page.screenshot(path=SCREENSHOTS / f"narrow-agent-{url.split('?')[0].strip('/').replace('/', '-')}.png", full_page=True)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, url
        # The scorecard's figures scroll inside their labelled box on purpose (one column per week); the list does not.
        assert _table_overflow(page, boxes_may_scroll=url != "/me/") == [], url
    # A date box's mm/dd/yyyy is the browser's own language (docs/user/scorecards.md); the page says it is Spanish.
    assert page.evaluate("() => document.documentElement.lang") == "es"


def test_the_walk_script_walks_a_slice(live_server, month, role_groups, capsys):
    """scripts/walk.py (issue 41's walk: every role, language and width, 2 minutes on the demo) on a slice: a QA
    lead in Spanish at 390 px opens every page the top bar links and approves the waiting call by keyboard."""
    from django.core.management import call_command

    from scripts.walk import main

    call_command("create_agent_user", "agent-2", "ana", "--password", "pass-word-123")
    users = ["marta:pass-word-123", "ana:pass-word-123"]
    status = main([live_server.url, *users, "--langs", "es", "--widths", "390"])
    seen = capsys.readouterr().out
    assert status == 0, seen
    assert "marta es 390 /dashboard/: 200, 390 px" in seen and "ana es 390 /me/: 200, 390 px" in seen
    assert "approved in 1 keys (promise ≤ 1)" in seen and "undone with u, back on /review/" in seen
