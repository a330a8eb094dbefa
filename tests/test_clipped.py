"""Nothing a page shows is cut off, at 1280 and 390 px, in Spanish and English: the first-day walk found the
admin's wording-check column, the scorecards' Estimate column and the first character of the charts' date
labels clipped. Measured in Chromium: a cell's text fits its cell (scrollWidth <= clientWidth), a table shown
whole at 1280 px scrolls nowhere, and each SVG text's box lies inside its chart's viewBox."""

from __future__ import annotations

import pytest

from rubrics.models import Criterion, Rubric
from tests.review.test_browser import SCREENSHOTS, browser, log_in  # noqa: F401  (the browser fixture)
from tests.test_narrow_pages import month  # noqa: F401  (the fixture: a first month of calls)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# What is cut on the page as it is: cells whose text is wider than the cell, and SVG texts outside the drawing.
CLIPPED = """() => {
  const cut = [];
  for (const cell of document.querySelectorAll("td, th")) {
    if (!cell.getClientRects().length) continue;
    if (cell.scrollWidth > cell.clientWidth + 1)
      cut.push(`cell “${cell.innerText.trim().slice(0, 40)}”: ${cell.scrollWidth} px in ${cell.clientWidth}`);
  }
  for (const svg of document.querySelectorAll("svg.chart")) {
    const view = svg.viewBox.baseVal;
    for (const text of svg.querySelectorAll("text")) {
      const box = text.getBBox();
      if (box.x < view.x - 0.5 || box.x + box.width > view.x + view.width + 0.5)
        cut.push(`chart text “${text.textContent}” at x ${box.x.toFixed(1)}..${(box.x + box.width).toFixed(1)} of ${view.width}`);
    }
  }
  return cut;
}"""

# A table's columns hidden to the right of its box at 1280 px (a phone may scroll a table; a desktop must not).
HIDDEN_COLUMNS = """(selector) => [...document.querySelectorAll(selector)]
  .filter((box) => box.scrollWidth > box.clientWidth + 1)
  .map((box) => `${box.id || box.className}: ${box.scrollWidth} px in ${box.clientWidth}`)"""


@pytest.fixture
def owner(month):  # noqa: F811
    """marta, who reads the reports, also owns the rubric: the admin's criterion health is hers."""
    from django.contrib.auth import get_user_model

    get_user_model().objects.filter(username="marta").update(is_staff=True, is_superuser=True)
    rubric, _waiting = month
    # Criteria with wording findings (no subject, a vague word), so the wording-check column has sentences.
    Criterion.objects.filter(rubric=rubric).update(subject="")
    return rubric


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("locale", ["es-ES", "en-US"])
def test_nothing_is_clipped(live_server, browser, owner, locale, width):  # noqa: F811
    page = browser.new_page(locale=locale, viewport={"width": width, "height": 900})
    log_in(page, f"{live_server.url}/dashboard/")
    pages = {
        "dashboard": "/dashboard/?rubric=care&date_from=2026-03-01&date_to=2026-03-31",
        "scorecards": "/scorecards/?rubric=care&since=2026-03-01&until=2026-03-31",
        "agent scorecard": "/scorecards/agent/?rubric=care&agent=agent-1&since=2026-03-01&until=2026-03-31",
        "evidence": "/reports/evidence/?rubric=care&date_from=2026-03-01&date_to=2026-03-31",
        "versions": "/reports/versions/?rubric=care",
        "rubric admin": f"/admin/rubrics/rubric/{owner.pk}/change/",
    }
    cut = {}
    for name, url in pages.items():
        page.goto(f"{live_server.url}{url}")
        page.screenshot(path=SCREENSHOTS / f"clipped-{name.replace(' ', '-')}-{locale}-{width}.png", full_page=True)
        found = page.evaluate(CLIPPED)
        if width == 1280:
            found += page.evaluate(HIDDEN_COLUMNS, ".rubric-health, #correction .table-scroll")
        if found:
            cut[name] = found
    assert cut == {}
