"""In headless Chromium: the review page's live quality score is the Python one (the same inputs give the
same numbers in static/review/quality.js and rubrics.quality), and the dashboard reads at 390 px, in Spanish
and English."""

from __future__ import annotations

import random

import pytest
from django.contrib.auth.models import Group, Permission

from rubrics.models import Criterion
from rubrics.quality import NOT_APPLICABLE, quality_score
from tests.factories import UserFactory, published_rubric
from tests.review.conftest import queued
from tests.review.test_browser import SCREENSHOTS, browser, log_in  # noqa: F401  (the browser fixture)
from tests.rubrics.test_quality import random_case

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def marta(db):
    group, _ = Group.objects.get_or_create(name="Supervisors")
    for app, codename in (("reviews", "add_review"), ("qa", "view_score")):
        group.permissions.add(Permission.objects.get(content_type__app_label=app, codename=codename))
    return UserFactory(username="marta", groups=["Supervisors"])


def _js(values: dict) -> dict:
    return {key: "na" if value is NOT_APPLICABLE else value for key, value in values.items()}


@pytest.mark.parametrize(("locale", "width", "label"), [("es-ES", 1280, "Fallo crítico"), ("en-US", 390, "Auto-fail")])
def test_the_live_score_follows_the_values_and_agrees_with_python(live_server, browser, marta, locale, width, label):  # noqa: F811
    rubric = published_rubric(criteria=3, slug="collect", name="Collect")
    Criterion.objects.filter(rubric=rubric, key="c1").update(critical=True, fail_at=2, title="States the debt")
    recording = queued(rubric=rubric, values={"c1": 4, "c2": 4, "c3": 2})
    page = browser.new_page(locale=locale, viewport={"width": width, "height": 800})
    log_in(page, f"{live_server.url}/review/{recording.pk}/")
    box = page.locator("#quality-score")
    # (75 + 75 + 25) / 3 = 58.3: the server's number, then the script's, the same.
    assert box.locator(".quality-value").inner_text() == "58.3"
    page.locator('label.rate:has(input[name="criterion-c1-value"][value="1"])').click()
    assert box.locator(".quality-value").inner_text() == "0.0"
    assert box.locator(".quality-auto-fail").is_visible() and "States the debt" in box.inner_text()
    assert label in box.inner_text()
    page.screenshot(path=SCREENSHOTS / f"quality-{locale}-{width}.png", full_page=True)
    page.locator('label.rate:has(input[name="criterion-c1-value"][value="3"])').click()
    assert box.locator(".quality-value").inner_text() == "50.0"  # (50 + 75 + 25) / 3
    assert not box.locator(".quality-auto-fail").is_visible()

    # The script's arithmetic against Python's on random policies and values.
    rng = random.Random(2828)
    for _ in range(40):
        rules, rows = random_case(rng)
        for row in rows:
            got = page.evaluate("([p, v]) => veredictoQuality(p, v)", [rules.as_dict(), _js(row)])
            want = quality_score(rules, row)
            assert (got["score"] is None) == (want.score is None), (rules, row)
            assert want.score is None or got["score"] == pytest.approx(want.score), (rules, row)
            assert (got["auto_failed"], tuple(got["auto_fail_criteria"])) == (want.auto_failed, want.auto_fail_criteria)


@pytest.mark.parametrize(
    ("locale", "heading", "width"), [("es-ES", "Panel", 390), ("en-US", "Dashboard", 390), ("en-US", "Dashboard", 1280)]
)
def test_the_dashboard_reads_on_a_phone_and_a_desktop(live_server, browser, marta, locale, heading, width):  # noqa: F811
    rubric = published_rubric(criteria=2, slug="collect", name="Collect")
    Criterion.objects.filter(rubric=rubric, key="c1").update(critical=True, fail_at=2)
    for value in (1, 3, 5):
        queued(rubric=rubric, values={"c1": value, "c2": 4})
    page = browser.new_page(locale=locale, viewport={"width": width, "height": 800})
    log_in(page, f"{live_server.url}/dashboard/")  # the landing page: every call is of this week
    assert page.locator("h1").inner_text().startswith(heading)
    for tile in ("quality", "auto-fail", "evidence", "backlog", "furthest"):
        assert page.locator(f"#tile-{tile}").is_visible()
    assert page.locator("#tile-backlog .figure").inner_text() == "3"
    assert page.locator("#tile-backlog tbody tr").first.locator("td").inner_text() == "3"  # all judged just now
    assert page.locator("#tile-auto-fail svg").count() == 1
    # Nothing wider than the window: the page does not scroll sideways.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    page.screenshot(path=SCREENSHOTS / f"dashboard-{locale}-{width}.png", full_page=True)
