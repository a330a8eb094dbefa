"""The rubric owner in headless Chromium: criteria folded to one line, a criterion
edited, its lint finding seen, then published through the confirmation."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from rubrics.models import Rubric
from rubrics.services import rubric_publish
from tests.factories import CriterionExceptionFactory, CriterionFactory, RubricFactory, UserFactory
from tests.review.test_browser import SCREENSHOTS, browser  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def owner(db):
    # A transactional test may run after another one flushed the groups the migration made.
    group, _ = Group.objects.get_or_create(name="Rubric owners")
    group.permissions.add(*Permission.objects.filter(content_type__app_label="rubrics"))
    return UserFactory(username="olga", is_staff=True, groups=["Rubric owners"])


def draft_with_three_criteria() -> Rubric:
    first = RubricFactory(slug="soporte", name="Soporte")
    for order, (key, title, description) in enumerate(
        [
            ("saludo", "Saluda", "El agente dice su nombre en el primer turno."),
            ("verifica", "Verifica", "El agente pide el documento del titular."),
            ("cierre", "Cierre", "El agente pregunta si hay algo más antes de cortar."),
        ],
        start=1,
    ):
        criterion = CriterionFactory(
            rubric=first, key=key, title=title, description=description, evidence_guidance="Cite la frase.", order=order,
            subject="agent",  # whose words: stated, so the only finding is the one the test makes
        )
        CriterionExceptionFactory(criterion=criterion, text="La llamada se corta antes.", outcome="not_applicable")
    return rubric_publish(rubric=first)


def log_in(page, url: str) -> None:
    page.goto(f"{url}/admin/login/")
    page.fill("#id_username", "olga")
    page.fill("#id_password", "pass-word-123")
    page.click("input[type=submit]")


def test_a_rubric_owner_edits_a_criterion_and_sees_its_lint_finding(live_server, browser, owner):  # noqa: F811
    published = draft_with_three_criteria()
    page = browser.new_page(locale="es-ES", viewport={"width": 1280, "height": 900})
    log_in(page, live_server.url)

    # From the published version, "Nueva versión borrador" through its confirmation.
    page.goto(f"{live_server.url}/admin/rubrics/rubric/{published.pk}/change/")
    assert page.locator("a.rubric-new-version").text_content() == "Nueva versión borrador"
    assert page.locator("a.deletelink").count() == 0
    page.click("a.rubric-new-version")
    page.click("input[type=submit][value='Crear el borrador']")
    draft = Rubric.objects.get(slug="soporte", version=2)
    page.wait_for_url(f"{live_server.url}/admin/rubrics/rubric/{draft.pk}/change/")

    # Each criterion is one line with its exceptions count; all closed.
    toggles = page.locator(".criterion-toggle")
    assert toggles.count() == 3
    assert "verifica" in toggles.nth(1).inner_text() and "1 excepción" in toggles.nth(1).inner_text()
    assert not page.locator("#id_criteria-1-description").is_visible()
    page.screenshot(path=SCREENSHOTS / "rubric-01-folded.png", full_page=True)

    # By keyboard: focus the second line, Enter opens it; opening the third closes the second.
    toggles.nth(1).focus()
    page.keyboard.press("Enter")
    assert page.locator("#id_criteria-1-description").is_visible()
    toggles.nth(2).click()
    assert not page.locator("#id_criteria-1-description").is_visible()
    assert page.locator("#id_criteria-2-description").is_visible()

    # Edit the second criterion into two behaviours and save: the lint points at it.
    toggles.nth(1).click()
    page.fill("#id_criteria-1-description", "El agente pide el documento y confirma la dirección del titular.")
    page.click("input[name=_continue]")
    page.wait_for_url(f"{live_server.url}/admin/rubrics/rubric/{draft.pk}/change/")
    assert "Se guardaron los cambios" in page.locator(".messagelist").inner_text()
    assert "«y confirma»" in page.locator(".rubric-lint").inner_text()
    line = page.locator(".criterion-toggle").nth(1)
    assert "1 hallazgo" in line.inner_text()
    assert "has-warning" in line.get_attribute("class")
    line.click()
    assert "Advertencia" in page.locator("#criteria-1 .criterion-findings").inner_text()
    page.screenshot(path=SCREENSHOTS / "rubric-02-finding.png", full_page=True)

    # Publish: the confirmation shows the diff and the warning, and asks to confirm it.
    page.click("a.rubric-publish")
    body = page.locator("#content-main").inner_text()
    assert "Cambios en v2 respecto de v1" in body
    assert "Modificado: verifica Verifica — descripción" in body
    assert "dos conductas" in body
    page.screenshot(path=SCREENSHOTS / "rubric-03-confirm.png", full_page=True)
    page.check("input[name=confirm_warnings]")
    page.click("input[type=submit][value=Publicar]")
    page.wait_for_url(f"{live_server.url}/admin/rubrics/rubric/{draft.pk}/change/")
    draft.refresh_from_db()
    assert draft.status == Rubric.Status.PUBLISHED


def test_the_rubric_page_fits_a_phone(live_server, browser, owner):  # noqa: F811
    published = draft_with_three_criteria()
    page = browser.new_page(locale="en-US", viewport={"width": 390, "height": 844})
    log_in(page, live_server.url)
    page.goto(f"{live_server.url}/admin/rubrics/rubric/{published.pk}/change/")

    # Read-only (published): the line still names the criterion.
    assert page.locator(".criterion-toggle").first.inner_text() == "saludo Saluda · 1 exception"
    width = page.evaluate("document.documentElement.scrollWidth")
    page.screenshot(path=SCREENSHOTS / "rubric-04-phone.png", full_page=True)
    assert width <= 390 + 1
