"""Headless Chromium for the browser tests, with the checks every page they open must pass.

Uses Debian's Chromium (/usr/bin/chromium) through Playwright; browsers are never downloaded. Every
page a test opens through the `browser` fixture (`browser.new_page(...)`, `browser.new_context(...)`)
is checked on each load, whatever the test asserts itself: it must not be wider than its viewport (at
1280 and 390 px alike), and a Spanish page must show no internal code (an enum value, a snake_case name,
an English status word). The test fails at its end, listing every page and what was wrong, so a new
page gets the checks by being visited.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connections

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Words that are codes, not Spanish: stored values and English labels a template printed untranslated.
# Text the user or the data wrote is not checked: transcripts, quotes, form values, code and keys, and
# whatever a template marks translate="no" (names such as a rubric's title or a call's id).
CODE_WORDS = [
    "all", "approve", "draft", "failed", "false", "finished", "flagged", "none", "null", "pending",
    "production", "reject", "running", "samples", "staging", "true", "undefined",
]
PAGE_CHECK = """
(() => {
  // Whole words only, by Unicode letters: "all" is a code, "allá" is Spanish.
  const CODE_WORDS = new RegExp(
    "(?<![\\\\p{L}\\\\d_])(?:" + %s.join("|") + "|[a-z]+(?:_[a-z0-9]+)+)(?![\\\\p{L}\\\\d_])", "iu"
  );
  const SKIP = "script, style, code, kbd, samp, pre, textarea, select, q, blockquote, .said, [translate=no]";
  function check() {
    const problems = [];
    const width = document.documentElement.scrollWidth;
    if (width > window.innerWidth) problems.push(`${width} px wide in a ${window.innerWidth} px window`);
    if ((document.documentElement.lang || "").startsWith("es")) {
      const texts = [document.title];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const parent = node.parentElement;
        if (!parent || parent.closest(SKIP) || !parent.getClientRects().length) continue;
        texts.push(node.textContent);
      }
      texts.forEach((text) => {
        const found = text.match(CODE_WORDS);
        if (found) problems.push(`internal code "${found[0]}" in “${text.trim().slice(0, 80)}”`);
      });
    }
    if (problems.length) window.__veredictoPageCheck(location.pathname + location.search, problems);
  }
  window.addEventListener("load", () => setTimeout(check, 0));
})();
""" % ("[" + ", ".join(f'"{word}"' for word in CODE_WORDS) + "]")


class CheckedBrowser:
    """The Playwright browser, each of whose contexts checks every page it loads (PAGE_CHECK)."""

    def __init__(self, chromium) -> None:
        self.chromium = chromium
        self.problems: list[str] = []
        self.contexts: list = []

    def new_context(self, **options):
        context = self.chromium.new_context(**options)
        viewport = options.get("viewport", {}).get("width", "default")
        context.expose_binding(
            "__veredictoPageCheck",
            lambda _source, url, found: self.problems.extend(f"{url} at {viewport} px: {p}" for p in found),
        )
        context.add_init_script(PAGE_CHECK)
        self.contexts.append(context)
        return context

    def new_page(self, **options):
        return self.new_context(**options).new_page()

    def __getattr__(self, name: str):
        return getattr(self.chromium, name)

    def collected(self) -> list[str]:
        """The problems found so far; each open page is asked once more, so a check still in flight arrives."""
        for context in self.contexts:
            for page in context.pages:
                try:
                    page.evaluate("() => new Promise((done) => setTimeout(done, 50))")
                except Exception:  # noqa: BLE001  (a page mid-navigation or closed has nothing pending)
                    pass
        return sorted(set(self.problems))


def unavailable(reason: str) -> None:
    """Skip on a developer machine without a browser; in CI a missing browser is a failure."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must install it)")
    pytest.skip(reason)


@pytest.fixture
def browser(monkeypatch) -> Iterator[CheckedBrowser]:
    if not CHROMIUM.exists():
        unavailable("Debian's chromium is not installed: apt-get install -y chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright is not installed: pip install playwright")
    # Playwright's sync API runs an event loop in this thread; the test's own
    # database calls are still plain synchronous ones.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        checked = CheckedBrowser(chromium)
        yield checked
        problems = checked.collected()
        chromium.close()
        # Database calls made while Playwright's loop ran opened their own
        # connection; left open, it would block dropping the test database.
        connections.close_all()
    assert problems == [], "pages that are wider than their window or show internal codes:\n" + "\n".join(problems)
