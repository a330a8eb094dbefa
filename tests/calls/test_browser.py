"""In headless Chromium: a QA lead finds calls by their words and assigns one by keyboard; the supervisor
finds it first in their queue; the reviewers' throughput. In both languages, at 1280 and 390 px."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, Permission

from reviews.models import Assignment
from tests.calls.conftest import ENGLISH, SPANISH, call, queued_call
from tests.factories import UserFactory, published_rubric
from tests.review.test_browser import SCREENSHOTS, accessibility_violations, browser  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def grant(group: str, *permissions: tuple[str, str]) -> None:
    # A transactional test may run after another one flushed the permissions the migrations gave the groups.
    found, _ = Group.objects.get_or_create(name=group)
    for app_label, codename in permissions:
        found.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def log_in(page, url: str, username: str) -> None:
    page.goto(url)
    page.fill("#id_username", username)
    page.fill("#id_password", "pass-word-123")
    page.click("main button[type=submit]")  # the top bar has the language button
    page.wait_for_url(url)


def no_overflow(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0


@pytest.mark.parametrize(("locale", "width"), [("en-GB", 1280), ("es-ES", 390)])
def test_a_lead_finds_and_assigns_calls_by_keyboard(live_server, browser, locale, width):  # noqa: F811
    grant("Supervisors", ("reviews", "add_review"), ("qa", "view_recording"))
    grant("QA leads", ("reviews", "add_assignment"), ("qa", "view_recording"))
    UserFactory(username="lena", groups=["QA leads"])
    marta = UserFactory(username="marta", groups=["Supervisors"])
    rubric = published_rubric(slug="care", name="Care")
    wanted = queued_call(rubric, "billing-7", SPANISH, confidence=0.9)
    queued_call(rubric, "refund-1", ENGLISH, "en", confidence=0.1)
    call(rubric, "old-1", SPANISH, "es")  # judged, not in the queue
    english = locale == "en-GB"

    page = browser.new_page(locale=locale, viewport={"width": width, "height": 900})
    log_in(page, f"{live_server.url}/calls/", "lena")
    # By keyboard: the words, Enter.
    page.locator("#id_q").focus()
    page.keyboard.type("facturas")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/calls/\?q=facturas.*"))
    rows = page.locator("table.calls tbody tr")
    assert rows.count() == 2  # the two Spanish calls; the English one says nothing of invoices
    assert page.locator("table.calls mark").first.inner_text().lower() == "factura"
    assert ("2 calls found" if english else "2 llamadas encontradas") in page.locator("#calls-total").inner_text()
    page.screenshot(path=SCREENSHOTS / f"calls-{locale}-{width}.png", full_page=True)
    assert accessibility_violations(page) == []
    assert no_overflow(page)

    # Tick the queued call and assign it to marta, all by keyboard.
    page.locator(f"tr[data-recording='{wanted.pk}'] input[type=checkbox]").focus()
    page.keyboard.press("Space")
    page.locator("#id_assignee").focus()
    page.keyboard.press("ArrowDown")  # lena herself (a QA lead reviews too)
    page.keyboard.press("ArrowDown")  # then marta
    page.locator("#assign-form button[type=submit]").focus()
    page.keyboard.press("Enter")
    page.wait_for_load_state()
    assigned = "1 call assigned to marta." if english else "1 llamada asignada a marta."
    assert assigned in page.locator(".messages").inner_text()
    assert list(Assignment.objects.values_list("recording_id", "assignee__username")) == [(wanted.pk, "marta")]

    # The throughput page.
    page.goto(f"{live_server.url}/calls/reviewers/")
    assert page.locator("h1").inner_text() == ("Reviewers' throughput" if english else "Rendimiento de los revisores")
    assert accessibility_violations(page) == []
    assert no_overflow(page)

    # The supervisor: the assigned call above the queue, though the other has a lower confidence; opened first.
    mine = browser.new_page(locale=locale, viewport={"width": width, "height": 900})
    log_in(mine, f"{live_server.url}/review/", marta.username)
    section = mine.locator("#assigned-to-me")
    assert section.locator("li").count() == 1 and "billing-7" in section.inner_text()
    assert accessibility_violations(mine) == []
    mine.locator("#next-form button").focus()
    mine.keyboard.press("Enter")
    mine.wait_for_url(f"{live_server.url}/review/{wanted.pk}/")
