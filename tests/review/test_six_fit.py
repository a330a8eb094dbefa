"""The review page's promise (docs/user/review-queue.md): "six criteria and the decision bar fit one
1280×900 screen", with the sample rubrics' own titles and two criteria whose quote did not verify, in
English and in Spanish. The first-day walk found three in English and one and a half in Spanish: the
unverified badge wrapped the titles to three or four lines."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from rubrics.models import Criterion
from tests.factories import UserFactory, published_rubric
from tests.review.conftest import queued, set_evidence
from tests.review.test_browser import QUOTE, SCREENSHOTS, browser, log_in  # noqa: F401  (the browser fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TITLES = {
    # samples/rubrics/customer-care.yaml and samples/rubrics/soporte-cobranzas.yaml, the longest first
    "en-GB": [
        "Checks for anything else and closes politely",
        "Confirms the request before acting",
        "Verifies the account holder",
        "Gives a timeframe for follow-up",
        "Offers a concrete resolution",
        "Greets and identifies",
    ],
    "es-ES": [
        "Identifica el problema antes de responder",
        "Informa la deuda con importe y vencimiento",
        "Informa el número de gestión o reclamo",
        "Ofrece una solución concreta y completa",
        "Da un plazo concreto para lo prometido",
        "Verifica la identidad del titular",
    ],
}

ON_SCREEN = """(element) => {
  const box = element.getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight && box.left >= 0 && box.right <= window.innerWidth;
}"""


@pytest.fixture
def supervisor(db):
    group, _ = Group.objects.get_or_create(name="Supervisors")
    group.permissions.add(Permission.objects.get(content_type__app_label="reviews", codename="add_review"))
    # Every page in the top bar, as a QA lead or an admin sees it: the bar takes two lines at 1280 px.
    return UserFactory(username="marta", groups=["Supervisors"], is_superuser=True, is_staff=True)


@pytest.mark.parametrize("locale", ["en-GB", "es-ES"])
def test_six_criteria_two_unverified_and_the_decision_bar_fit_1280_by_900(live_server, browser, supervisor, locale):  # noqa: F811
    rubric = published_rubric(criteria=6)
    for n, title in enumerate(TITLES[locale], start=1):
        Criterion.objects.filter(rubric=rubric, key=f"c{n}").update(title=title)
    recording = queued(rubric=rubric, values={f"c{n}": 4 for n in range(1, 7)})
    # Two quotes the transcript does not hold: the badge shows beside their titles.
    set_evidence(recording, "c1", "le prometo devolverle el dinero hoy", confidence=0.0)
    set_evidence(recording, "c4", "su número de reclamo es el 4471", confidence=0.0)
    page = browser.new_page(locale=locale, viewport={"width": 1280, "height": 900})
    log_in(page, f"{live_server.url}/review/{recording.pk}/")
    page.screenshot(path=SCREENSHOTS / f"six-unverified-{locale[:2]}-1280x900.png")
    assert page.locator(".unverified-label:visible").count() == 2
    assert page.locator(".topbar").bounding_box()["height"] > 60, "the top bar's two lines of links are part of the test"
    assert page.evaluate("() => window.scrollY") == 0
    bar = page.locator("#decision-bar")
    assert bar.evaluate(ON_SCREEN), "the decision bar is on the first screen"
    assert page.locator("#submit-approve").evaluate(ON_SCREEN)
    bar_top = bar.bounding_box()["y"]
    off = []
    for n in range(1, 7):
        values = page.locator(f"#criterion-c{n} .rating")
        box = values.bounding_box()
        if not (values.evaluate(ON_SCREEN) and box["y"] + box["height"] <= bar_top):
            off.append(f"c{n} ({TITLES[locale][n - 1]}) at y={box['y']:.0f}..{box['y'] + box['height']:.0f}")
    assert off == [], f"value buttons not on the first screen above the decision bar (at y={bar_top:.0f})"
