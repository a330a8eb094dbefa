"""In headless Chromium, by keyboard, in both languages at 1280 and 390 px: a QA lead ticks calls in the
review queue (Space) and assigns them with a button, sends two to a new calibration session, and keeps a
search of the calls list under a name, opens it and deletes it."""

from __future__ import annotations

import re

import pytest

from reviews.models import Assignment
from calls.models import SavedSearch
from tests.calls.conftest import ENGLISH, SPANISH, queued_call
from tests.calls.test_browser import grant, log_in, no_overflow
from tests.factories import UserFactory, published_rubric
from tests.review.test_browser import SCREENSHOTS, accessibility_violations, browser  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def tick(page, recording) -> None:
    page.locator(f"tr[data-recording='{recording.pk}'] input[type=checkbox]").focus()
    page.keyboard.press("Space")


@pytest.mark.parametrize(("locale", "width"), [("en-GB", 1280), ("es-ES", 390)])
def test_a_lead_assigns_and_sends_to_calibration_from_the_queue_by_keyboard(live_server, browser, locale, width):  # noqa: F811
    grant("Supervisors", ("reviews", "add_review"), ("qa", "view_recording"))
    grant(
        "QA leads", ("reviews", "add_review"), ("reviews", "add_assignment"), ("reviews", "run_calibration"), ("qa", "view_recording")
    )  # fmt: skip
    UserFactory(username="lena", groups=["QA leads"])
    UserFactory(username="marta", groups=["Supervisors"])
    rubric = published_rubric(slug="care", name="Care")
    first = queued_call(rubric, "billing-7", SPANISH, confidence=0.2)
    second = queued_call(rubric, "refund-1", ENGLISH, "en", confidence=0.3)
    third = queued_call(rubric, "refund-2", ENGLISH, "en", confidence=0.4)
    english = locale == "en-GB"

    page = browser.new_page(locale=locale, viewport={"width": width, "height": 900})
    log_in(page, f"{live_server.url}/review/", "lena")
    tick(page, first)
    tick(page, third)
    assert page.locator("input[name=call]:checked").count() == 2
    page.locator("#bulk-assignee").focus()
    page.keyboard.press("ArrowDown")  # lena herself (a QA lead reviews too)
    page.keyboard.press("ArrowDown")  # then marta
    page.screenshot(path=SCREENSHOTS / f"queue-bulk-{locale}-{width}.png", full_page=True)
    assert accessibility_violations(page) == []
    page.locator("#bulk-assign").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/review/")
    said = "2 calls assigned to marta." if english else "2 llamadas asignadas a marta."
    assert page.locator(".messages").inner_text().strip() == said
    assert sorted(Assignment.objects.values_list("recording_id", "assignee__username")) == [(first.pk, "marta"), (third.pk, "marta")]
    assert no_overflow(page)

    # Two calls to a new calibration session: its form opens with them chosen by id.
    tick(page, second)
    tick(page, third)
    page.locator("#bulk-calibrate").focus()
    page.keyboard.press("Space")
    page.wait_for_url(re.compile(r".*/calibrations/new/\?.*"))
    chosen = "2 calls from the queue are chosen" if english else "2 llamadas de la cola elegidas"
    assert chosen in page.locator(".messages").inner_text()
    assert page.locator("#id_recording_ids").input_value() == f"{second.pk} {third.pk}"
    assert page.locator("input[name=choose][value=ids]").is_checked()
    assert no_overflow(page)

    # A search of the calls list kept under a name, opened from its link, deleted.
    page.goto(f"{live_server.url}/calls/?q=refund")
    page.locator("#id_name").focus()
    page.keyboard.type("Refunds")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    saved = "Search saved as “Refunds”." if english else "Búsqueda guardada como «Refunds»."
    assert page.locator(".messages").inner_text().strip() == saved
    assert page.url.endswith("/calls/?q=refund")
    assert SavedSearch.objects.get().query == "q=refund"
    page.goto(f"{live_server.url}/calls/")
    page.screenshot(path=SCREENSHOTS / f"saved-searches-{locale}-{width}.png", full_page=True)
    assert accessibility_violations(page) == []
    page.locator("#saved-searches a", has_text="Refunds").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/calls/\?q=refund$"))
    assert page.locator("table.calls tbody tr").count() == 2
    page.locator("#saved-searches li button").focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert not SavedSearch.objects.exists()
    assert no_overflow(page)
