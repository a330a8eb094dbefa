"""The reports in headless Chromium, in Spanish and English, at 1280 and 390 px: they open on the reviewed
version, mark too-small figures, and nothing overflows the screen (tables and charts scroll in their box)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from tests.factories import judged_recording
from tests.reports.conftest import APPROVE, AUDIT, add_review, at
from tests.review.test_browser import (  # noqa: F401 (fixtures)
    SCREENSHOTS,
    accessibility_violations,
    browser,
    log_in,
    supervisor_with_password,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("locale", ["es-ES", "en-GB"])
@pytest.mark.parametrize("width", [1280, 390])
def test_the_deviation_report_opens_on_the_reviewed_version_and_fits_the_screen(
    live_server, browser, supervisor_with_password, care_rubric, locale, width  # noqa: F811
):
    # A transactional test may run after another one flushed the permissions the migration gave the group.
    view_score = Permission.objects.get(codename="view_score", content_type__app_label="qa")
    supervisor_with_password.user_permissions.add(view_score)
    recording = judged_recording(rubric=care_rubric, values={"c1": 4, "c2": 2}, review_reasons=[AUDIT])
    add_review(recording, APPROVE, when=at(10))
    page = browser.new_page(locale=locale, viewport={"width": width, "height": 844 if width == 390 else 800})
    log_in(page, f"{live_server.url}/reports/deviation/")

    assert page.locator("select[name=version]").input_value() == str(care_rubric.version)
    assert "Care v1" in page.locator("h1").inner_text()
    # One reviewed call: every row is too few to trust, greyed and marked.
    assert page.locator("#group-all tr.too-few").count() == 2
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    assert accessibility_violations(page) == []  # e.g. a table or chart that scrolls must take the focus
    tag = f"{locale[:2]}-{width}"
    page.screenshot(path=SCREENSHOTS / f"20-deviation-{tag}.png", full_page=True)
    page.goto(f"{live_server.url}/reports/evidence/?rubric=care")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    assert accessibility_violations(page) == []
    page.screenshot(path=SCREENSHOTS / f"21-evidence-{tag}.png", full_page=True)
