"""End to end in headless Chromium: log in, open the queue, review a call, see the queue shrink.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright; browsers are
never downloaded. Screenshots go to artifacts/screenshots/ for CI to keep.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.db import connections

from qa.models import Recording
from reviews.models import Review
from tests.factories import UserFactory, published_rubric
from tests.review.conftest import queued, set_evidence

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path(settings.BASE_DIR) / "artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
QUOTE = "te lo mando hoy antes de las 18"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def unavailable(reason: str) -> None:
    """Skip on a developer machine without a browser; in CI a missing browser is a failure."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must install it)")
    pytest.skip(reason)


@pytest.fixture
def browser(monkeypatch) -> Iterator:
    if not CHROMIUM.exists():
        unavailable("Debian's chromium is not installed: apt-get install -y chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed: pip install playwright")
    # Playwright's sync API runs an event loop in this thread; the test's own
    # database calls are still plain synchronous ones.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()
        # Database calls made while Playwright's loop ran opened their own
        # connection; left open, it would block dropping the test database.
        connections.close_all()


@pytest.fixture
def supervisor_with_password(db):
    # A transactional test may run after another one flushed the groups the migration made.
    group, _ = Group.objects.get_or_create(name="Supervisors")
    group.permissions.add(Permission.objects.get(content_type__app_label="reviews", codename="add_review"))
    return UserFactory(username="marta", groups=["Supervisors"])


def test_a_supervisor_reviews_a_call_in_the_browser(live_server, browser, supervisor_with_password):
    first = queued(confidence=0.3, values={"c1": 4, "c2": 4, "c3": 4})
    set_evidence(first, "c1", QUOTE)
    set_evidence(first, "c3", "le prometo devolverle el dinero hoy", confidence=0.0)
    second = queued(confidence=0.7)

    page = browser.new_page(locale="es-ES", viewport={"width": 1400, "height": 1000})
    page.goto(f"{live_server.url}/review/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", "marta")
    page.fill("#id_password", "pass-word-123")
    page.click("main button[type=submit]")

    page.wait_for_url(f"{live_server.url}/review/")
    assert page.locator("h1").inner_text() == "Cola de revisión"
    rows = page.locator("tr[data-recording]")
    assert rows.count() == 2
    assert rows.first.get_attribute("data-recording") == str(first.pk)
    page.screenshot(path=SCREENSHOTS / "01-queue.png", full_page=True)

    rows.first.locator("a").click()
    page.wait_for_url(f"{live_server.url}/review/{first.pk}/")
    # The evidence is marked on exactly the quoted words, and only the verified quote is.
    assert page.locator("mark[data-criteria]").all_inner_texts() == [QUOTE]
    assert page.locator("mark[data-criteria='c1']").is_visible()
    assert "NO VERIFICADA" in page.locator("#criterion-c3").inner_text()

    # j selects the first criterion and highlights its quote.
    page.locator(".transcript h2").click()
    page.keyboard.press("j")
    assert "active" in page.locator("#criterion-c1").get_attribute("class")
    assert "active" in page.locator("mark[data-criteria='c1']").get_attribute("class")
    page.screenshot(path=SCREENSHOTS / "02-review.png", full_page=True)

    # Shortcuts stay quiet while typing: "a", "r" and "n" in a comment submit nothing.
    page.fill("#id_criterion-c2-value", "2")
    page.locator("#id_criterion-c2-comment").press_sequentially("no confirma la hora: ver turno 5")
    assert page.url == f"{live_server.url}/review/{first.pk}/"
    page.screenshot(path=SCREENSHOTS / "03-adjusted.png", full_page=True)

    # Out of the field, "a" approves and submits.
    page.locator(".transcript h2").click()
    page.keyboard.press("a")
    page.wait_for_url(f"{live_server.url}/review/")

    assert page.locator("tr[data-recording]").count() == 1
    assert page.locator("tr[data-recording]").first.get_attribute("data-recording") == str(second.pk)
    assert "Revisión guardada" in page.locator(".messages").inner_text()
    page.screenshot(path=SCREENSHOTS / "04-queue-after.png", full_page=True)

    review = Review.objects.get()
    assert (review.decision, review.user.username) == ("approve", "marta")
    assert [(e.criterion.key, e.adjusted_value, e.comment) for e in review.criteria.all()] == [
        ("c2", 2, "no confirma la hora: ver turno 5")
    ]


def test_a_blind_audit_takes_the_supervisors_own_values_and_a_does_not_apply(
    live_server, browser, supervisor_with_password
):
    rubric = published_rubric(not_applicable=("c2",))
    audit = queued(rubric=rubric, reasons=[Recording.ReviewReason.RANDOM_AUDIT], values={"c1": 5, "c2": 1, "c3": 5})

    page = browser.new_page(locale="es-ES", viewport={"width": 1400, "height": 1000})
    page.goto(f"{live_server.url}/review/{audit.pk}/")
    page.fill("#id_username", "marta")
    page.fill("#id_password", "pass-word-123")
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/review/{audit.pk}/")

    # Blind: the model's values are not on the page, and only c2 may be "does not apply".
    assert page.locator("#id_criterion-c1-value").input_value() == ""
    assert page.locator("input[name$='-not_applicable']").count() == 1
    assert "si cambia el valor" not in page.content()  # there is no model value to change
    page.fill("#id_criterion-c1-value", "4")
    page.fill("#id_criterion-c3-value", "3")
    page.check("#id_criterion-c2-not_applicable")
    page.screenshot(path=SCREENSHOTS / "05-blind-audit.png", full_page=True)
    page.locator(".transcript h2").click()
    page.keyboard.press("a")

    # Back on the same call, now revealed beside the supervisor's values.
    page.locator(".messages").wait_for()
    assert "Auditoría a ciegas guardada" in page.locator(".messages").inner_text()
    review = Review.objects.get()
    assert (review.decision, review.blind) == ("approve", True)
    assert [(e.criterion.key, e.adjusted_value, e.not_applicable) for e in review.criteria.all()] == [
        ("c1", 4, False),
        ("c2", None, True),
        ("c3", 3, False),
    ]
    page.screenshot(path=SCREENSHOTS / "06-blind-audit-revealed.png", full_page=True)
