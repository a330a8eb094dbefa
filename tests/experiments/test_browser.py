"""A rubric owner runs an experiment in headless Chromium (English, 1280 px, by
keyboard where it matters), drills down and promotes; a supervisor reads it in
Spanish at 390 px. Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from qa.models import Judge
from experiments.models import Experiment, Item, Promotion
from rubrics.models import Rubric
from rubrics.services import rubric_new_version
from tests.factories import UserFactory
from tests.review.test_browser import SCREENSHOTS, accessibility_violations, browser  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def role(name: str, *codenames: str) -> None:
    # A transactional test may run after another one flushed the groups the migrations made.
    group, _ = Group.objects.get_or_create(name=name)
    group.permissions.add(*Permission.objects.filter(codename__in=codenames))


def log_in(page, url: str, username: str) -> None:
    page.goto(url)
    page.fill("#id_username", username)
    page.fill("#id_password", "pass-word-123")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def test_an_owner_runs_and_promotes_an_experiment_and_a_supervisor_reads_it_in_spanish(
    live_server, browser, reviewed, fake_llm, eager_celery  # noqa: F811
):
    role("Rubric owners", "add_experiment", "change_experiment", "view_experiment")
    role("Supervisors", "view_experiment")
    UserFactory(username="owner", groups=["Rubric owners"])
    UserFactory(username="marta", groups=["Supervisors"])
    rubric_new_version(rubric=Rubric.objects.get(slug="care"))
    Judge.objects.create(name="candidate", base_url=fake_llm.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY")

    page = browser.new_page(locale="en-US", viewport={"width": 1280, "height": 900})
    log_in(page, f"{live_server.url}/experiments/", "owner")
    page.select_option("#id_rubric", "care")
    page.select_option("#id_candidate_version", "2")  # a list naming each version, no typed number
    page.select_option("#id_judge", label="candidate")
    page.fill("#id_limit", "20")
    page.screenshot(path=SCREENSHOTS / "exp-01-form.png", full_page=True)
    page.focus("#id_seed")
    page.keyboard.press("Enter")  # submits the form
    page.wait_for_url("**/experiments/*/")
    experiment = Experiment.objects.get()
    # Why the items failed, if they did: the experiment's own status says only that they did.
    reasons = set(Item.objects.filter(arm__experiment=experiment).exclude(error="").values_list("error", flat=True))
    assert experiment.status == Experiment.Status.FINISHED, reasons
    body = page.inner_text("main")
    assert "is closer to the supervisors on 2 criteria" in body and "better" in body
    assert page.locator("svg.chart").count() == 1
    page.screenshot(path=SCREENSHOTS / "exp-02-comparison.png", full_page=True)
    assert accessibility_violations(page) == []

    # Criteria are named by their titles, their keys beside them.
    assert page.locator("svg.chart text", has_text="Greets").count() == 1
    page.click("table.figures a >> text=Greets >> nth=0")
    page.wait_for_url("**/criteria/c1/")
    assert page.locator("h1").inner_text() == "Greets c1"
    assert accessibility_violations(page) == []
    assert page.locator("table.drill tbody tr").count() == 20
    page.screenshot(path=SCREENSHOTS / "exp-03-drill-down.png", full_page=True)
    page.go_back()

    page.click("text=Make this judge the default")
    page.wait_for_url("**/default_judge/")
    assert not Judge.objects.get(name="candidate").is_default  # asking is not doing
    page.screenshot(path=SCREENSHOTS / "exp-04-confirm.png", full_page=True)
    assert page.evaluate("document.activeElement.type") == "submit", page.evaluate("document.activeElement.outerHTML")
    page.keyboard.press("Enter")  # the confirmation button has the focus
    page.wait_for_url(f"**/experiments/{experiment.pk}/")
    assert Judge.objects.get(name="candidate").is_default
    assert Promotion.objects.filter(experiment=experiment, action="default_judge").exists()

    phone = browser.new_page(locale="es-ES", viewport={"width": 390, "height": 844})
    log_in(phone, f"{live_server.url}/experiments/{experiment.pk}/", "marta")
    text = phone.inner_text("main")
    assert "está más cerca de los supervisores en 2 criterios" in text and "mejor" in text
    assert "Hacer de este juez el predeterminado" not in text  # a supervisor reads, never promotes
    # The experiment's own content; the shared top bar is the base template's.
    width = phone.evaluate("Math.max(...[...document.querySelectorAll('main > *')].map(e => e.getBoundingClientRect().right))")
    phone.screenshot(path=SCREENSHOTS / "exp-05-supervisor-es-390.png", full_page=True)
    assert width <= 390 + 1, f"the experiment's content is wider than 390 px ({width} px)"

    # The owner's form on a phone, in Spanish: a select as wide as its longest option shrinks to the screen.
    owner_phone = browser.new_page(locale="es-ES", viewport={"width": 390, "height": 844})
    log_in(owner_phone, f"{live_server.url}/experiments/", "owner")
    assert owner_phone.locator("select[name=baseline]").is_visible()
    owner_phone.screenshot(path=SCREENSHOTS / "exp-06-new-experiment-es-390.png", full_page=True)
    assert owner_phone.evaluate("document.documentElement.scrollWidth") <= 390
    assert accessibility_violations(owner_phone) == []
