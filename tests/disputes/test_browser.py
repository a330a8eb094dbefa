"""In headless Chromium, in both languages and widths, by keyboard: an agent disputes a criterion of their
call's review, and a QA lead upholds it; the lead's review then stands."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command

from access.models import DEFAULT_WORKSPACE, Workspace
from access.services import member_add
from disputes.models import Dispute
from reviews.models import Review
from reviews.reference import human_references
from tests.disputes.conftest import reviewed_call
from tests.factories import UserFactory, published_rubric
from tests.review.conftest import set_evidence
from tests.review.test_browser import QUOTE, SCREENSHOTS, accessibility_violations, browser  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GRANTS = {
    "Supervisors": ["add_review", "view_review"],
    "QA leads": ["resolve_dispute", "view_dispute"],
    "Agents": ["add_dispute", "view_dispute"],
}


@pytest.fixture
def disputed_call(db):
    # A transactional test may run after another one flushed the groups the migrations made.
    for name, codenames in GRANTS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*Permission.objects.filter(content_type__app_label__in=["reviews", "disputes"], codename__in=codenames))
    workspace, _ = Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE, defaults={"name": "Default"})
    call_command("create_agent_user", "agent-ana", "ana", "--password", "pass-word-123")
    sup = UserFactory(username="sup")
    member_add(user=sup, workspace=workspace, role="supervisor")
    lead = UserFactory(username="lead")
    member_add(user=lead, workspace=workspace, role="qa_lead")
    rubric = published_rubric()
    call = reviewed_call(rubric, "agent-ana", sup, external_id="call-77")
    set_evidence(call, "c1", QUOTE)
    # Ana has seen this call's values (she skipped scoring it herself first): its page shows them.
    from django.contrib.auth import get_user_model

    from insights.selfreview.services import self_review_skip

    self_review_skip(recording=call, user=get_user_model().objects.get(username="ana"))
    return call


def log_in(page, url: str, username: str) -> None:
    page.goto(url)
    page.fill("#id_username", username)
    page.fill("#id_password", "pass-word-123")
    page.click("main button[type=submit]")  # the top bar has the language button


def tab_to(page, element_id: str, limit: int = 30) -> None:
    for _ in range(limit):
        if page.evaluate("document.activeElement.id") == element_id:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached #{element_id}")


@pytest.mark.parametrize(("locale", "width"), [("es-ES", 1280), ("en-GB", 390)])
def test_an_agent_disputes_and_a_lead_upholds_by_keyboard(live_server, browser, disputed_call, locale, width):  # noqa: F811
    call = disputed_call
    agent = browser.new_context(locale=locale, viewport={"width": width, "height": 900}).new_page()
    log_in(agent, f"{live_server.url}/", "ana")
    agent.wait_for_url(f"{live_server.url}/me/")
    assert agent.locator("#waiting-count").count() == 1  # a review to acknowledge
    agent.click(f"#my-calls a:text('call-77')")
    agent.wait_for_url(f"{live_server.url}/me/calls/{call.pk}/")
    assert agent.locator("mark[data-criteria='c1']").count() >= 1  # the judge's verified quote, highlighted
    agent.screenshot(path=SCREENSHOTS / f"agent-call-{locale}-{width}.png", full_page=True)
    assert accessibility_violations(agent) == []

    agent.locator("#id_c1-disputed").focus()
    agent.keyboard.press("Space")
    agent.keyboard.press("Tab")
    assert agent.evaluate("document.activeElement.id") == "id_c1-value"
    agent.keyboard.type("2")
    agent.keyboard.press("Tab")
    assert agent.evaluate("document.activeElement.id") == "id_c1-reason"
    agent.keyboard.type("Lo dijo el cliente")
    tab_to(agent, "dispute-button")
    agent.keyboard.press("Enter")
    agent.wait_for_selector("#dispute-outcome")
    dispute = Dispute.objects.get()
    assert [(c.criterion.key, c.proposed_value, c.reason) for c in dispute.criteria.all()] == [
        ("c1", 2, "Lo dijo el cliente")
    ]

    lead = browser.new_context(locale=locale, viewport={"width": width, "height": 900}).new_page()
    log_in(lead, f"{live_server.url}/disputes/", "lead")
    lead.wait_for_url(f"{live_server.url}/disputes/")
    lead.click(f"a[href='/disputes/{dispute.pk}/']")
    lead.wait_for_url(f"{live_server.url}/disputes/{dispute.pk}/")
    assert "Lo dijo el cliente" in lead.locator(f"#criterion-c1 .agent-reason").inner_text()
    lead.screenshot(path=SCREENSHOTS / f"lead-dispute-{locale}-{width}.png", full_page=True)
    assert accessibility_violations(lead) == []
    lead.locator("#id_c1-outcome_0").focus()
    lead.keyboard.press("Space")
    assert lead.locator("#id_c1-outcome_0").is_checked()
    tab_to(lead, "id_c1-comment")
    lead.keyboard.type("Cierto")
    tab_to(lead, "resolve-button")
    lead.keyboard.press("Enter")
    lead.wait_for_selector("#resolved")

    resolution = Review.objects.get(recording=call, from_dispute=True)
    assert human_references(recording_ids=[call.pk])[(call.pk, "c1")].review_id == resolution.pk
    agent.reload()
    assert agent.locator(".outcome.upheld").count() == 1


@pytest.mark.parametrize(("locale", "width", "required"), [("es-ES", 390, "(obligatorio)"), ("en-GB", 1280, "(required)")])
def test_an_empty_dispute_shows_its_error_where_the_eye_is(live_server, browser, disputed_call, locale, width, required):  # noqa: F811
    """Sent empty, the page came back at its top with the error at the bottom, under the form; and every
    criterion said "Why (required)" before it was ticked, when nothing is required of it."""
    call = disputed_call
    agent = browser.new_context(locale=locale, viewport={"width": width, "height": 800}).new_page()
    log_in(agent, f"{live_server.url}/me/calls/{call.pk}/", "ana")
    agent.wait_for_url(f"{live_server.url}/me/calls/{call.pk}/")
    reason_label = agent.locator("label[for='id_c1-reason']")
    assert required not in reason_label.inner_text()
    agent.locator("#id_c1-disputed").check()
    assert required in reason_label.inner_text()
    agent.locator("#id_c1-disputed").uncheck()

    agent.locator("#dispute-button").click()
    agent.wait_for_selector("#dispute-errors")
    summary = agent.locator("#dispute-errors")
    box = summary.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 800, box  # on screen, not below it
    assert summary.inner_text().strip()
    agent.screenshot(path=SCREENSHOTS / f"agent-dispute-empty-{locale}-{width}.png")

    # Ticked without a reason: the summary names the criterion and links to its field, which says why too.
    agent.locator("#id_c1-disputed").check()
    agent.select_option("#id_c1-value", "2")
    agent.locator("#dispute-button").click()
    agent.wait_for_selector("#dispute-errors a[href='#id_c1-reason']")
    assert agent.locator("#id_c1-reason ~ .field-error").count() == 1
    box = agent.locator("#dispute-errors").bounding_box()
    assert box is not None and 0 <= box["y"] < 800, box
    assert accessibility_violations(agent) == []
    assert not Dispute.objects.exists()
