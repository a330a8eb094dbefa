"""In headless Chromium: a supervisor scores a call of a calibration session, by keyboard, blind."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission

from calibration.selectors import CallSelection
from calibration.services import calibration_create
from reviews.models import CalibrationEntry
from tests.factories import UserFactory, judged_recording, published_rubric
from tests.review.conftest import set_evidence
from tests.review.test_browser import QUOTE, SCREENSHOTS, accessibility_violations, browser  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def calibration(db):
    # A transactional test may run after another one flushed the groups the migrations made.
    supervisors, _ = Group.objects.get_or_create(name="Supervisors")
    supervisors.permissions.add(Permission.objects.get(content_type__app_label="reviews", codename="add_review"))
    leads, _ = Group.objects.get_or_create(name="QA leads")
    leads.permissions.add(Permission.objects.get(content_type__app_label="reviews", codename="run_calibration"))
    lead = UserFactory(username="lead", groups=["QA leads"])
    marta = UserFactory(username="marta", groups=["Supervisors"])
    luis = UserFactory(username="luis", groups=["Supervisors"])
    rubric = published_rubric(not_applicable=("c2",))
    calls = [judged_recording(rubric=rubric, values={"c1": 5, "c2": 1, "c3": 5}) for _ in range(2)]
    set_evidence(calls[0], "c1", QUOTE)
    session = calibration_create(
        name="Marzo", rubric=rubric, lead=lead, participants=[marta, luis],
        selection=CallSelection(recording_ids=tuple(call.pk for call in calls)),
    )  # fmt: skip
    return session, calls


@pytest.mark.parametrize(("locale", "width"), [("es-ES", 1280), ("en-GB", 390)])
def test_a_supervisor_scores_a_call_in_a_calibration_session(live_server, browser, calibration, locale, width):  # noqa: F811
    session, calls = calibration
    page = browser.new_page(locale=locale, viewport={"width": width, "height": 900})
    page.goto(f"{live_server.url}/calibrations/")
    page.fill("#id_username", "marta")
    page.fill("#id_password", "pass-word-123")
    page.click("main button[type=submit]")  # the top bar has the language button
    page.wait_for_url(f"{live_server.url}/calibrations/")
    page.click(f"tr[data-session='{session.pk}'] a")
    page.click(f"li[data-recording='{calls[0].pk}'] a")
    page.wait_for_url(f"{live_server.url}/calibrations/{session.pk}/calls/{calls[0].pk}/")

    # Blind: the transcript without the judge's marks, and no value filled in.
    assert page.locator("mark").count() == 0
    assert QUOTE in page.locator(".transcript").inner_text()
    assert page.locator("input[name$='-value']:checked").count() == 0
    page.screenshot(path=SCREENSHOTS / f"calibration-score-{locale}-{width}.png", full_page=True)
    assert accessibility_violations(page) == []

    # The review page's scoring: the first value has the focus, a digit sets it and moves on, x is N/A,
    # Esc... no comment per criterion here; `s` saves. The call's overall comment is typed in its box.
    assert page.evaluate("document.activeElement.name") == "c1-value"
    for key in ("4", "x", "3"):
        page.keyboard.press(key)
    assert page.locator("#id_c2-value_5").is_checked()  # N/A, after the scale's 1-5
    page.fill("#id_comment", "saludo completo")
    page.locator("#criterion-c3 h3").click()
    page.keyboard.press("s")

    page.wait_for_url(f"{live_server.url}/calibrations/{session.pk}/calls/{calls[1].pk}/")
    entry = CalibrationEntry.objects.get(participant__username="marta")
    assert entry.comment == "saludo completo"
    assert [(v.criterion.key, v.value, v.not_applicable) for v in entry.values.order_by("criterion__order")] == [
        ("c1", 4, False),
        ("c2", None, True),
        ("c3", 3, False),
    ]
    saved = {"es-ES": "Guardado", "en-GB": "Saved"}[locale]
    assert saved in page.locator(".messages").inner_text()
    page.screenshot(path=SCREENSHOTS / f"calibration-next-{locale}-{width}.png", full_page=True)


def test_the_lead_closes_the_session_and_records_an_agreed_value(live_server, browser, calibration):  # noqa: F811
    from calibration.services import CalibrationAnswer, calibration_entry_save
    from reviews.models import AgreedValue, CalibrationSession

    session, calls = calibration
    for username, c1 in (("marta", 2), ("luis", 5)):
        participant = session.participants.get(username=username)
        for call in calls:
            answers = [CalibrationAnswer("c1", c1), CalibrationAnswer("c2", 3), CalibrationAnswer("c3", 4)]
            calibration_entry_save(session=session, recording_id=call.pk, participant=participant, answers=answers)

    page = browser.new_page(locale="en-GB", viewport={"width": 1280, "height": 900})
    page.goto(f"{live_server.url}/calibrations/{session.pk}/")
    page.fill("#id_username", "lead")
    page.fill("#id_password", "pass-word-123")
    page.click("main button[type=submit]")  # the top bar has the language button
    page.wait_for_url(f"{live_server.url}/calibrations/{session.pk}/")
    assert "marta: 2 of 2 calls scored" in page.locator(".progress").inner_text()
    # Closing asks first: the first click only opens the question.
    page.click("#close-session")
    assert CalibrationSession.objects.get(pk=session.pk).is_open
    page.click("#close-session-confirm")
    page.locator(".calibration-matrix").first.wait_for()
    row = page.locator(f"#call-c1-{calls[0].pk}")
    assert "discuss" in row.inner_text()  # 2 against 5
    # From 2 calls: the figures are greyed and say so.
    assert "too few" in page.locator("#criterion-c1 .too-few-note").inner_text()
    # Every row's agreed value is one form, saved once.
    row.locator("input[name$=':value']").fill("3")
    row.locator("input[name$=':note']").fill("greeting without the name")
    page.locator(f"#call-c3-{calls[1].pk} input[name$=':value']").fill("4")
    page.click("#save-agreed")
    page.locator(".messages").wait_for()
    assert "Agreed values saved: 2 changed." in page.locator(".messages").inner_text()
    agreed = AgreedValue.objects.get(criterion__key="c1")
    assert (agreed.call.recording_id, agreed.value, agreed.note) == (calls[0].pk, 3, "greeting without the name")
    assert AgreedValue.objects.count() == 2
    page.screenshot(path=SCREENSHOTS / "calibration-results-en-1280.png", full_page=True)
    assert accessibility_violations(page) == []
    page.set_viewport_size({"width": 390, "height": 900})
    page.screenshot(path=SCREENSHOTS / "calibration-results-en-390.png", full_page=True)
    assert accessibility_violations(page) == []  # the matrix scrolls in its box, and takes the focus to do so
