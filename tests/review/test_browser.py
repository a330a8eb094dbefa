"""End to end in headless Chromium: log in, open the queue, review a call, see the queue shrink.

The browser and the checks every page passes (no page wider than its window, no internal code on a
Spanish page) are tests/support/browser.py's. Screenshots go to artifacts/screenshots/ for CI to keep.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, Permission
from django.utils import timezone

from qa.models import Recording
from reviews.models import Review
from tests.factories import UserFactory, published_rubric
from tests.review.conftest import queued, set_evidence
from tests.support.browser import browser  # noqa: F401  (the fixture, which other browser tests import from here)

SCREENSHOTS = Path(settings.BASE_DIR) / "artifacts" / "screenshots"
SCREENSHOTS.mkdir(parents=True, exist_ok=True)
QUOTE = "te lo mando hoy antes de las 18"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def supervisor_with_password(db):
    # A transactional test may run after another one flushed the groups the migration made.
    group, _ = Group.objects.get_or_create(name="Supervisors")
    group.permissions.add(Permission.objects.get(content_type__app_label="reviews", codename="add_review"))
    return UserFactory(username="marta", groups=["Supervisors"])


class Counted:
    """Drives a page and counts what a supervisor would do: clicks and key presses (typed comments apart)."""

    def __init__(self, page) -> None:
        self.page, self.clicks, self.keys = page, 0, 0

    def click(self, selector: str) -> None:
        self.page.locator(selector).click()
        self.clicks += 1

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)
        self.keys += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)  # the comment itself: not counted


def log_in(page, url: str) -> None:
    page.goto(url)
    page.fill("#id_username", "marta")
    page.fill("#id_password", "pass-word-123")
    page.click("main button[type=submit]")
    page.wait_for_url(url)


def accessibility_violations(page) -> list[str]:
    """What axe-core (bundled by axe-playwright-python: nothing is fetched) finds wrong on the page as it is."""
    from axe_playwright_python.sync_playwright import Axe

    violations = Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {[node['target'] for node in v['nodes'][:3]]}" for v in violations]


def focused(page) -> str:
    """`name=value` of the focused element, e.g. criterion-c2-value=4."""
    return page.evaluate("() => `${document.activeElement.name}=${document.activeElement.value}`")


def test_a_supervisor_reviews_a_call_by_keyboard_with_an_undo(live_server, browser, supervisor_with_password):
    first = queued(confidence=0.3, values={"c1": 4, "c2": 4, "c3": 4})
    set_evidence(first, "c1", QUOTE)
    set_evidence(first, "c3", "le prometo devolverle el dinero hoy", confidence=0.0)
    second = queued(confidence=0.7)

    page = browser.new_page(locale="es-ES", viewport={"width": 1280, "height": 800})
    log_in(page, f"{live_server.url}/review/")
    assert page.locator("h1").inner_text() == "Cola de revisión"
    rows = page.locator("tr[data-recording]")
    assert rows.count() == 2 and rows.first.get_attribute("data-recording") == str(first.pk)
    page.screenshot(path=SCREENSHOTS / "01-queue-es-1280.png", full_page=True)

    rows.first.locator("a").click()
    page.wait_for_url(f"{live_server.url}/review/{first.pk}/")
    # The evidence is marked on exactly the quoted words, and only the verified quote is.
    assert "".join(page.locator("mark[data-criteria]").all_inner_texts()) == QUOTE
    assert page.locator("mark[data-criteria='c1']").first.is_visible()
    assert "NO VERIFICADA" in page.locator("#criterion-c3").inner_text()
    # No Tab needed: the first criterion's value has the focus as the page opens.
    assert focused(page) == "criterion-c1-value=4"
    assert "active" in page.locator("mark[data-criteria='c1']").first.get_attribute("class")

    review = Counted(page)
    review.press("j")  # j focuses the next criterion's value, k the previous
    assert focused(page) == "criterion-c2-value=4"
    review.press("2")  # one digit sets the value; a changed value needs a comment, so the comment gets the focus
    assert page.locator("#id_criterion-c2-value_1").is_checked()
    assert focused(page) == "criterion-c2-comment="
    review.type("no confirma la hora: ver turno 5 (a, r, n)")  # letters typed in a comment trigger nothing
    review.press("Escape")  # back to the criterion
    assert focused(page) == "criterion-c2-value=2"
    page.screenshot(path=SCREENSHOTS / "02-review-es-1280.png")

    # c3's quote did not verify, so its value does not exist: nothing is preselected there, and the
    # approve needs the supervisor's own. Two keys: j to it, then its digit (no comment: nothing changed).
    review.press("j")
    assert focused(page).startswith("criterion-c3-value=") and not page.locator("[name=criterion-c3-value]:checked").count()
    review.press("4")
    # "a" submits at once: no wait, the review is stored, the next call opens with an Undo toast.
    started = time.monotonic()
    review.press("a")
    page.wait_for_url(f"{live_server.url}/review/{second.pk}/", timeout=15000)  # the next call opens by itself
    assert time.monotonic() - started < 4, "the submit does not wait for its undo"
    assert "Revisión guardada: Aprobada" in page.locator(".messages").inner_text()
    saved = Review.objects.get()
    assert (saved.decision, saved.user.username) == ("approve", "marta")
    assert [(e.criterion.key, e.adjusted_value, e.comment) for e in saved.criteria.all()] == [
        ("c2", 2, "no confirma la hora: ver turno 5 (a, r, n)"), ("c3", 4, ""),
    ]
    # Approving with one adjusted value, as stated in docs/user/review-queue.md: 4 keys, and 2 more for the criterion
    # whose quote did not verify.
    assert (review.clicks, review.keys) == (0, 6)
    assert page.locator("#undo-toast").is_visible()
    page.screenshot(path=SCREENSHOTS / "03-undo-toast-es-1280.png")

    # `u` (or the toast's button) voids it: the call is back as it was, the review kept but counting for nothing.
    page.keyboard.press("u")
    page.wait_for_url(f"{live_server.url}/review/{first.pk}/")
    assert "Revisión deshecha" in page.locator(".messages").inner_text()
    assert not Review.objects.exists() and Review.log.get().void.user.username == "marta"
    first.refresh_from_db()
    assert first.status == Recording.Status.IN_REVIEW
    assert page.locator("#id_criterion-c2-value_3").is_checked(), "the model's value again, not the undone review's"
    assert page.locator("#undo-toast").count() == 0


def test_one_click_per_value_and_errors_beside_the_decision_bar(live_server, browser, supervisor_with_password):
    first = queued(values={"c1": 4, "c2": 4, "c3": 4}, confidence=0.2)
    second = queued(values={"c1": 4, "c2": 4, "c3": 4}, confidence=0.3)
    page = browser.new_page(locale="en-GB", viewport={"width": 1280, "height": 800})
    log_in(page, f"{live_server.url}/review/{first.pk}/")

    # With the mouse: one click for the value, which moves the focus to its comment; one click to approve.
    review = Counted(page)
    review.click("#criterion-c2 label.rate:has-text('2')")
    assert focused(page) == "criterion-c2-comment="
    review.type("Only partly met")
    review.click("#submit-approve")
    page.wait_for_url(f"{live_server.url}/review/{second.pk}/")
    assert (review.clicks, review.keys) == (2, 0)
    assert [(e.criterion.key, e.adjusted_value) for e in Review.objects.get().criteria.all()] == [("c2", 2)]

    # A changed value without its comment: the error is in view beside the buttons, naming the criterion by title.
    page.locator("#criterion-c2 label.rate", has_text="2").click()
    page.locator("#id_comment").click()  # the supervisor looks elsewhere instead of commenting
    page.click("#submit-approve")
    summary = page.locator("#error-summary")
    summary.wait_for()
    assert summary.evaluate("(element) => element === document.activeElement")
    box = summary.bounding_box()
    assert 0 <= box["y"] and box["y"] + box["height"] <= 800, "the summary is inside the window"
    assert "Criterion 2: Changing “Criterion 2” needs a comment saying why." in summary.inner_text()
    assert "'c2'" not in page.content()
    page.screenshot(path=SCREENSHOTS / "04-errors-en-1280.png")
    page.click("#error-summary a")
    assert page.url.endswith("#criterion-c2")
    assert Review.objects.count() == 1


def test_a_stray_key_on_a_finished_review_does_nothing_and_a_new_review_starts_from_it(
    live_server, browser, supervisor_with_password
):
    recording = queued(values={"c1": 4, "c2": 4, "c3": 4})
    page = browser.new_page(locale="en-GB", viewport={"width": 1280, "height": 800})
    log_in(page, f"{live_server.url}/review/{recording.pk}/")
    page.keyboard.press("j")
    page.keyboard.press("2")
    page.keyboard.type("Wrong time promised")
    page.keyboard.press("Escape")
    page.locator("#id_reject_reason").select_option("wrong_score")
    page.click("#submit-reject")
    page.wait_for_url(f"{live_server.url}/review/")

    # Opened again (from a report, say): clicking the page and pressing keys changes nothing.
    page.goto(f"{live_server.url}/review/{recording.pk}/")
    assert page.locator("#final-notice").is_visible()
    page.locator(".transcript h2").click()
    for key in ("a", "r", "3", "x", "j", "a"):
        page.keyboard.press(key)
    page.wait_for_timeout(1000)  # a key would have submitted at once
    assert page.url == f"{live_server.url}/review/{recording.pk}/"
    assert list(Review.objects.values_list("decision", "reject_reason")) == [("reject", "wrong_score")]
    page.screenshot(path=SCREENSHOTS / "05-finished-en-1280.png", full_page=True)

    # Only an explicit new review unlocks it, starting from the latest review's values, not the model's.
    page.click("#start-new-review")
    page.wait_for_url(f"{live_server.url}/review/{recording.pk}/?new=1")
    assert page.locator("#id_criterion-c2-value_1").is_checked()
    assert page.locator("#id_criterion-c2-comment").input_value() == "Wrong time promised"
    page.keyboard.press("a")
    page.wait_for_url(f"{live_server.url}/review/", timeout=15000)
    latest = Review.objects.first()
    assert latest.decision == "approve" and [(e.criterion.key, e.adjusted_value) for e in latest.criteria.all()] == [
        ("c2", 2)
    ]


def test_shortcuts_can_be_turned_off_and_the_language_changes_with_a_button(
    live_server, browser, supervisor_with_password
):
    recording = queued()
    page = browser.new_page(locale="es-ES", viewport={"width": 1280, "height": 800})
    log_in(page, f"{live_server.url}/review/{recording.pk}/")
    page.uncheck("#shortcuts-toggle")
    page.reload()  # remembered in this browser
    assert not page.locator("#shortcuts-toggle").is_checked()
    page.locator(".transcript h2").click()
    page.keyboard.press("j")
    page.keyboard.press("a")
    page.wait_for_timeout(500)
    assert page.locator("#undo-toast").count() == 0 and not Review.objects.exists()

    # Choosing a language submits nothing by itself; the button does.
    page.select_option("select[name=language]", "en")
    page.wait_for_timeout(300)
    assert "Aprobar" in page.locator("#submit-approve").inner_text()
    page.click(".lang button")
    page.wait_for_url(f"{live_server.url}/review/{recording.pk}/")
    assert "Approve" in page.locator("#submit-approve").inner_text()


def test_a_blind_audit_takes_one_key_per_criterion(live_server, browser, supervisor_with_password):
    rubric = published_rubric(criteria=6, not_applicable=("c2",))
    audit = queued(rubric=rubric, reasons=[Recording.ReviewReason.RANDOM_AUDIT], values={"c1": 5, "c2": 1})

    page = browser.new_page(locale="es-ES", viewport={"width": 1280, "height": 800})
    log_in(page, f"{live_server.url}/review/{audit.pk}/")
    # Blind: nothing is chosen, and only c2 offers N/A.
    assert page.locator("input[name$='-value']:checked").count() == 0
    assert page.locator("input[value='na']").count() == 1
    review = Counted(page)
    for key in ("4", "x", "3", "5", "2", "4"):  # each digit sets a value and moves to the next criterion
        review.press(key)
    page.screenshot(path=SCREENSHOTS / "06-blind-audit-es-1280.png")
    review.press("a")

    # Back on the same call, now revealed beside the supervisor's values, and locked.
    page.locator(".messages").wait_for(timeout=15000)
    assert "Auditoría a ciegas guardada" in page.locator(".messages").inner_text()
    assert page.locator("#final-notice").is_visible()
    assert (review.clicks, review.keys) == (0, 7)
    saved = Review.objects.get()
    assert (saved.decision, saved.blind) == ("approve", True)
    assert [(e.criterion.key, e.adjusted_value, e.not_applicable) for e in saved.criteria.all()] == [
        ("c1", 4, False),
        ("c2", None, True),
        ("c3", 3, False),
        ("c4", 5, False),
        ("c5", 2, False),
        ("c6", 4, False),
    ]
    page.screenshot(path=SCREENSHOTS / "07-blind-audit-revealed-es-1280.png", full_page=True)


@pytest.mark.parametrize("locale", ["es-ES", "en-GB"])
def test_the_review_page_is_usable_at_390_px(live_server, browser, supervisor_with_password, locale):
    recording = queued(values={"c1": 4, "c2": 4, "c3": 4})
    set_evidence(recording, "c1", QUOTE)
    # What the bundled small model writes when it rambles: strings with no space to wrap at.
    set_evidence(recording, "c3", "agent:1.0.0.0.1:" + "1000000:" * 40, rationale="0" * 300)
    page = browser.new_page(locale=locale, viewport={"width": 390, "height": 844})
    log_in(page, f"{live_server.url}/review/{recording.pk}/")
    tag = locale[:2]
    page.screenshot(path=SCREENSHOTS / f"08-review-{tag}-390.png")

    # Nothing is wider than the screen, and a value can be clicked (nothing covers it).
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert accessibility_violations(page) == []
    page.locator("#criterion-c2 label.rate", has_text="3").click(timeout=3000)
    assert page.locator("#id_criterion-c2-value_2").is_checked()
    # The transcript is one button away, and its quote leads back to the scoring.
    assert page.locator(".transcript").is_hidden()
    page.click(".view-toggle button[data-show=transcript]")
    assert page.locator("mark[data-criteria='c1']").first.is_visible()
    page.screenshot(path=SCREENSHOTS / f"09-transcript-{tag}-390.png")
    page.locator("mark[data-criteria='c1']").first.click()
    assert page.locator("#criterion-c1").is_visible()
    page.goto(f"{live_server.url}/review/")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert accessibility_violations(page) == []
    page.screenshot(path=SCREENSHOTS / f"10-queue-{tag}-390.png", full_page=True)


def test_transcript_search_and_highlights_by_keyboard(live_server, browser, supervisor_with_password):
    recording = queued()
    set_evidence(recording, "c1", QUOTE)
    page = browser.new_page(locale="es-ES", viewport={"width": 1280, "height": 800})
    log_in(page, f"{live_server.url}/review/{recording.pk}/")
    page.keyboard.press("/")
    page.keyboard.type("octubre")  # its "r" is a letter in the search, not a reject
    assert page.locator("#undo-toast").count() == 0
    assert page.locator(".turn.hit").count() >= 1
    assert all("octubre" in text.lower() for text in page.locator(".turn.hit .said").all_inner_texts())
    # A highlight is reachable by Tab and Enter selects its criterion.
    page.locator("mark[data-criteria='c1']").first.focus()
    page.keyboard.press("Enter")
    assert "active" in page.locator("#criterion-c1").get_attribute("class")


IN_VIEW = """(element) => {
  const box = element.getBoundingClientRect();
  const bar = document.getElementById("decision-bar").getBoundingClientRect();
  return box.top >= 0 && box.bottom <= Math.min(window.innerHeight, bar.top);
}"""


@pytest.mark.parametrize("locale", ["es-ES", "en-GB"])
def test_six_compact_criteria_and_the_decision_bar_fit_one_screen_and_the_focused_value_stays_in_view(
    live_server, browser, supervisor_with_password, locale
):
    rubric = published_rubric(criteria=6)
    recording = queued(rubric=rubric, values={f"c{n}": 4 for n in range(1, 7)})
    set_evidence(recording, "c1", QUOTE)
    page = browser.new_page(locale=locale, viewport={"width": 1280, "height": 900})
    log_in(page, f"{live_server.url}/review/{recording.pk}/")
    page.screenshot(path=SCREENSHOTS / f"11-compact-{locale[:2]}-1280.png")
    # One row each until opened: all six and the decision bar (its Approve too) in the first screen.
    bar = page.locator("#decision-bar").bounding_box()
    assert bar["y"] + bar["height"] <= 900
    for n in range(1, 7):
        box = page.locator(f"#criterion-c{n}").bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= bar["y"], f"criterion c{n} is on the first screen"
    assert page.locator("#submit-approve").evaluate(IN_VIEW.replace("bar.top", "window.innerHeight"))

    # With every criterion open (the evidence of each), j still brings the focused value into view, clear of
    # the sticky bar, and so does the comment that takes the focus after a change.
    for n in range(1, 7):
        page.locator(f"#criterion-c{n} .more-toggle").click()
    page.evaluate("() => window.scrollTo(0, 0)")
    page.locator("#criterion-c1 h3").click()  # c1 is the current criterion again
    for n in range(2, 7):
        page.keyboard.press("j")
        assert focused(page).startswith(f"criterion-c{n}-value=")
        assert page.evaluate(f"() => ({IN_VIEW})(document.activeElement)"), f"c{n}'s value is in view"
    page.keyboard.press("2")  # a change on c6: its comment takes the focus, in view
    assert focused(page) == "criterion-c6-comment="
    assert page.evaluate(f"() => ({IN_VIEW})(document.activeElement)"), "the comment is in view"
    page.keyboard.press("Escape")
    page.keyboard.press("k")
    page.keyboard.press("k")
    assert focused(page).startswith("criterion-c4-value=")
    assert page.evaluate(f"() => ({IN_VIEW})(document.activeElement)")


def test_an_undo_after_its_seconds_is_refused(live_server, browser, supervisor_with_password):
    recording = queued(values={"c1": 4, "c2": 4, "c3": 4})
    page = browser.new_page(locale="en-GB", viewport={"width": 1280, "height": 800})
    log_in(page, f"{live_server.url}/review/{recording.pk}/")
    page.keyboard.press("a")
    page.wait_for_url(f"{live_server.url}/review/")  # nothing else waiting: the queue, with the toast
    toast = page.locator("#undo-toast")
    assert toast.is_visible()
    # Submitted longer ago than the undo lasts (as if the toast had been left open): Undo is refused.
    Review.objects.update(created_at=timezone.now() - timedelta(seconds=30))
    toast.locator("button").click()
    page.wait_for_url(f"{live_server.url}/review/")
    assert "Too late to undo this review" in page.locator(".messages").inner_text()
    assert Review.objects.count() == 1 and not Review.log.filter(void__isnull=False).exists()
    # And the toast closes itself when its seconds are up.
    page.goto(f"{live_server.url}/review/{recording.pk}/?new=1")
    page.keyboard.press("a")
    page.wait_for_url(f"{live_server.url}/review/")
    page.locator("#undo-toast").wait_for(state="hidden", timeout=12_000)


def test_unverified_criteria_take_one_key_each_whatever_the_value(live_server, browser, supervisor_with_password):
    rubric = published_rubric(criteria=6)
    call = queued(rubric=rubric, values={f"c{n}": 4 for n in range(1, 7)})
    for n in range(1, 7):  # no quote verified: none of the judge's six values exists
        set_evidence(call, f"c{n}", "una frase que nadie dijo en esta llamada", confidence=0.0)

    page = browser.new_page(locale="es-ES", viewport={"width": 1280, "height": 800})
    log_in(page, f"{live_server.url}/review/{call.pk}/")
    assert page.locator("input[name$='-value']:checked").count() == 0
    review = Counted(page)
    # A digit other than the judge's 4 changes nothing that exists: no comment is asked, the next criterion
    # takes the focus, and the keys never end up typed into a comment box.
    for number, key in enumerate(("3", "2", "5", "1", "3", "2"), start=1):
        review.press(key)
        assert page.locator(f"[name=criterion-c{number}-value]:checked").get_attribute("value") == key
        if number < 6:
            assert focused(page).startswith(f"criterion-c{number + 1}-value=")
    assert page.locator("textarea:focus").count() == 0
    assert all(not text for text in page.locator("textarea").evaluate_all("(boxes) => boxes.map((box) => box.value)"))
    review.press("a")
    page.locator(".messages").wait_for(timeout=15000)
    saved = Review.objects.get()
    assert saved.decision == "approve"
    assert [(e.criterion.key, e.adjusted_value, e.comment) for e in saved.criteria.order_by("criterion__order")] == [
        (f"c{n}", int(key), "") for n, key in enumerate(("3", "2", "5", "1", "3", "2"), start=1)
    ]
    assert (review.clicks, review.keys) == (0, 7)
