"""The review page's player in headless Chromium: a quote plays exactly its span."""

from __future__ import annotations

import pytest

from tests.factories import published_rubric
from tests.review.conftest import set_evidence
from tests.review.test_browser import SCREENSHOTS, browser, supervisor_with_password  # noqa: F401  (fixtures)
from tests.transcribe.conftest import queued_with_audio

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
QUOTE = "CLIENTE: me cobraron dos veces la factura"

AUDIO_STATE = "() => { const a = document.getElementById('call-audio'); return [a.paused, a.currentTime * 1000]; }"


def _log_in(page, url: str) -> None:
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", "marta")
    page.fill("#id_password", "pass-word-123")
    page.click("main button[type=submit]")  # the top bar has the language button
    page.wait_for_load_state()


def test_p_plays_the_current_criterions_quote_and_a_turn_plays_from_its_start(
    live_server,
    browser,  # noqa: F811  (the fixture imported above)
    supervisor_with_password,  # noqa: F811
    spanish_call,
    media_root,
):
    path, script = spanish_call
    recording = queued_with_audio(path, script, rubric=published_rubric())
    set_evidence(recording, "c1", QUOTE)
    set_evidence(recording, "c2", "le prometo devolverle el dinero hoy", confidence=0.0)
    words = recording.turns[1]["words"]
    start, end = words[1]["start_ms"], words[6]["end_ms"]

    page = browser.new_page(locale="es-ES", viewport={"width": 1280, "height": 900})
    _log_in(page, live_server.url)
    page.goto(f"{live_server.url}/review/{recording.pk}/")
    page.wait_for_function("() => document.getElementById('call-audio').readyState >= 1")
    # Each criterion is one row until its evidence is opened (`e`, or its toggle).
    assert page.locator("#criterion-c1 .play-quote").is_hidden()
    page.locator("#criterion-c2 .more-toggle").click()
    assert page.locator("#criterion-c2 .no-span").inner_text() == "No verificada: no hay un intervalo que reproducir."

    # k goes back to c1 and focuses its value (a radio button): `p` plays from there, the normal flow,
    # with no click on the transcript first.
    page.keyboard.press("k")
    assert page.evaluate("() => document.activeElement.name") == "criterion-c1-value"
    page.keyboard.press("p")
    page.wait_for_function(
        f"() => {{ const a = document.getElementById('call-audio'); return !a.paused && a.currentTime * 1000 > {start}; }}"
    )
    paused, now = page.evaluate(AUDIO_STATE)
    assert start <= now <= end, (start, now, end)
    assert "playing" in page.locator("#turn-1").get_attribute("class")
    page.screenshot(path=SCREENSHOTS / "player-01-quote-es.png")
    # It stops where the quote's last word ends.
    page.wait_for_function("() => document.getElementById('call-audio').paused", timeout=10_000)
    paused, now = page.evaluate(AUDIO_STATE)
    assert paused and end <= now <= end + 250, (now, end)

    # The quote's own button plays the same span; a turn plays from its start.
    page.locator("#turn-2").click()
    page.wait_for_function(
        f"() => {{ const a = document.getElementById('call-audio'); return !a.paused && a.currentTime * 1000 > {script[2].start_ms}; }}"
    )
    assert page.evaluate(AUDIO_STATE)[1] < script[2].end_ms
    assert "playing" in page.locator("#turn-2").get_attribute("class")
    assert "playing" not in page.locator("#turn-1").get_attribute("class")

    # In English, at a phone's width, by keyboard alone: Tab to the quote's button, Enter plays it.
    english = browser.new_page(locale="en-US", viewport={"width": 390, "height": 844})
    _log_in(english, live_server.url)
    english.goto(f"{live_server.url}/review/{recording.pk}/", wait_until="load")
    english.keyboard.press("e")  # opens the current criterion, c1: its evidence and play button
    assert english.locator("#criterion-c1 .play-quote").inner_text().startswith("▶ Play the quote (0:0")
    english.screenshot(path=SCREENSHOTS / "player-02-390-en.png", full_page=True)
    page = english
    page.locator("#criterion-c1 .play-quote").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => {{ const a = document.getElementById('call-audio'); return !a.paused && a.currentTime * 1000 > {start}; }}"
    )
    # At this width the transcript is behind its toggle, beside the scoring.
    page.locator('.view-toggle [data-show="transcript"]').focus()
    page.keyboard.press("Enter")
    page.locator("#turn-3").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => {{ const a = document.getElementById('call-audio'); return !a.paused && a.currentTime * 1000 > {script[3].start_ms}; }}"
    )
