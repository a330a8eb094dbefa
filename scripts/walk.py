#!/usr/bin/env python
"""The first day, walked in headless Chromium (issue 41): each role logs in, in Spanish and English, at 1280 and
390 px, opens every page its top bar links, and a supervisor approves a call by keyboard alone (then undoes it, so
the walk leaves the data as it found them). It prints what it saw, page by page, and exits 1 if anything was wrong.

    python scripts/walk.py http://127.0.0.1:8000 supervisor:PASSWORD lead:PASSWORD agent:PASSWORD ...

Run it against the demo (scripts/demo, then add a QA lead, an agent and a superuser: docs/dev/testing.md) or any
server with data. Each page is checked for: its status (under 400), no sideways scroll (the page no wider than the
window; a table wider than its box only where the box scrolls on purpose, overflow-x auto), and on a Spanish page
no English the catalogue translates (a visible text that is a msgid with a different msgstr) nor an internal code
(tests/support/browser.py's check, the same one the browser tests run). The review: `j` and a digit per criterion
whose value does not exist, then `a` (docs/user/review-queue.md: two keys per such criterion).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, PAGE_CHECK  # noqa: E402  (one page check, not two)

LOCALES = {"es": "es-ES", "en": "en-US"}
WIDTHS = {1280: 900, 390: 844}
PO = ROOT / "locale" / "es" / "LC_MESSAGES" / "django.po"
ENTRY = re.compile(r'msgid ((?:"[^\n]*"\n)+)(?:msgid_plural (?:"[^\n]*"\n)+)?msgstr(?:\[0\])? ((?:"[^\n]*"\n)+)')
# Visible text a user or the data wrote, or a name, is not the catalogue's: the same skips as the page check.
TEXTS = """() => {
  const SKIP = "script, style, code, kbd, samp, pre, textarea, select, option, q, blockquote, .said, [translate=no]";
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(SKIP) || !parent.getClientRects().length) continue;
    const text = node.textContent.trim();
    if (text) texts.push(text);
  }
  document.querySelectorAll("input[type=submit], button").forEach((b) => b.value && texts.push(b.value));
  return texts;
}"""
# Tables wider than their box: fine where the box scrolls on purpose (overflow-x auto or scroll), else cut or
# pushing the page sideways.
TABLES = """() => [...document.querySelectorAll('table')].filter((t) => t.getClientRects().length).map((t) => {
  const box = t.parentElement, style = getComputedStyle(box);
  const wider = box.scrollWidth > box.clientWidth + 1 || t.getBoundingClientRect().right > window.innerWidth + 1;
  const scrolls = ["auto", "scroll"].includes(style.overflowX);
  return wider ? `${t.id || t.className || 'table'}${scrolls ? ' scrolls in its box' : ' CUT'}` : null;
}).filter(Boolean)"""


def catalogue() -> dict[str, str]:
    """English msgid → Spanish msgstr, for the msgids a page could show untranslated (two words or more)."""
    text = lambda block: "".join(re.findall(r'"(.*)"', block)).replace('\\"', '"')  # noqa: E731
    pairs = {text(msgid): text(msgstr) for msgid, msgstr in ENTRY.findall(PO.read_text(encoding="utf-8"))}
    return {msgid: msgstr for msgid, msgstr in pairs.items() if msgstr and msgstr != msgid and " " in msgid and "%" not in msgid}


@dataclass
class Walk:
    base: str
    english: dict[str, str]
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def note(self, where: str, what: str, bad: bool = False) -> None:
        self.lines.append(f"{'!!' if bad else 'ok'} {where}: {what}")
        if bad:
            self.problems.append(f"{where}: {what}")

    def log_in(self, page, user: str, password: str) -> None:
        page.goto(f"{self.base}/accounts/login/")
        page.fill("#id_username", user)
        page.fill("#id_password", password)
        with page.expect_navigation():
            page.press("#id_password", "Enter")

    def check(self, page, where: str, response, lang: str, found: list[str]) -> None:
        status = response.status if response else 0
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        tables = page.evaluate(TABLES)
        bad = []
        if status >= 400 or status == 0:
            bad.append(f"status {status}")
        if width[0] > width[1]:
            bad.append(f"{width[0]} px wide in {width[1]}")
        bad += [t for t in tables if t.endswith("CUT")]
        html_lang = page.evaluate("() => document.documentElement.lang")
        if not html_lang.startswith(lang):
            bad.append(f'<html lang="{html_lang}">')
        if lang == "es":
            texts = page.evaluate(TEXTS)
            bad += [f"English: “{t[:60]}”" for t in dict.fromkeys(texts) if t in self.english]
        bad += found
        dates = page.locator("input[type=date]").count()
        scrolling = [t for t in tables if not t.endswith("CUT")]
        seen = f"{status}, {width[0]} px" + (f", {len(scrolling)} table(s) scroll in their box" if scrolling else "")
        seen += f", {dates} date input(s)" if dates else ""
        self.note(where, seen + ("; " + "; ".join(bad) if bad else ""), bad=bool(bad))

    def visit(self, context, user: str, password: str, lang: str, width: int) -> None:
        found: list[str] = []
        context.expose_binding("__veredictoPageCheck", lambda _source, url, problems: found.extend(problems))
        page = context.new_page()
        self.log_in(page, user, password)
        links = page.eval_on_selector_all("header nav a", "links => links.map(a => a.getAttribute('href'))")
        landing = page.url.removeprefix(self.base)
        self.note(f"{user} {lang} {width}", f"lands on {landing}; top bar: {' '.join(links)}")
        for href in links:
            found.clear()
            response = page.goto(f"{self.base}{href}")
            page.evaluate("() => new Promise((done) => setTimeout(done, 50))")  # the page check's own timeout
            self.check(page, f"{user} {lang} {width} {href}", response, lang, list(found))
        if "/review/" in links:  # whoever the top bar sends to the queue reviews a call there
            self.review_by_keyboard(page, f"{user} {lang} {width} review")
        page.close()

    def review_by_keyboard(self, page, where: str) -> None:
        page.goto(f"{self.base}/review/")
        # A call another supervisor holds opens read-only: take the first one free or held by this user.
        free = page.locator("tr[data-recording]").evaluate_all(
            "rows => rows.filter(r => !r.lastElementChild.textContent.trim() || /^(you|usted)\\b/i.test(r.lastElementChild.textContent.trim()))"
            ".map(r => r.dataset.recording)"
        )
        if not free:
            # Claims at work, not a defect: each review the walk opens (and the next call after it) is held for
            # its reviewer, and the demo has four calls; an empty queue is a defect.
            held = page.locator("tr[data-recording]").count()
            self.note(where, f"all {held} waiting calls are held by other reviewers" if held else "the queue is empty", bad=not held)
            return
        page.locator(f"tr[data-recording='{free[0]}'] a").focus()  # Tab reaches it too; the walk counts the review's keys
        with page.expect_navigation():
            page.keyboard.press("Enter")
        call = page.url.removeprefix(self.base)
        panels = page.locator("[data-key]").evaluate_all("ps => ps.filter(p => p.querySelector('input[type=radio]')).map(p => p.dataset.key)")
        missing = [k for k in panels if not page.locator(f"[name=criterion-{k}-value]:checked").count()]
        keys = 0
        for _ in range(3 * len(panels)):
            name = page.evaluate("() => document.activeElement.name || ''")
            key = name.removeprefix("criterion-").removesuffix("-value")
            if not page.locator("[name$=-value][type=radio]").evaluate_all(
                "rs => [...new Set(rs.map(r => r.name))].some(n => !document.querySelector(`[name='${n}']:checked`))"
            ):
                break
            if key in panels and not page.locator(f"[name=criterion-{key}-value]:checked").count():
                page.keyboard.press("3")
            else:
                page.keyboard.press("j")
            keys += 1
        page.keyboard.press("a")
        keys += 1
        try:
            page.wait_for_url(lambda url: url.removeprefix(self.base) != call, timeout=15000)
        except Exception:  # noqa: BLE001  (a refused approve stays on the page: said below)
            errors = page.locator(".errorlist, .problems").all_inner_texts()
            self.note(where, f"{call}: not approved after {keys} keys; {errors}", bad=True)
            return
        # docs/user/review-queue.md: a key per criterion up to the last one without a value (j past a kept one, a
        # digit on a missing one, which moves on by itself), then a.
        promised = (panels.index(missing[-1]) + 1 if missing else 0) + 1
        self.note(
            where,
            f"{call}: {len(panels)} criteria, {len(missing)} without a value ({' '.join(missing)}), approved in {keys} keys (promise ≤ {promised})",
            bad=keys > promised,
        )
        undo = page.locator("#undo-toast button")
        if not (undo.count() and undo.is_visible()):
            self.note(where, "no undo toast after the approve", bad=True)
            return
        # Undo answers with the call again (reviews.views.undo), or the queue with why not. Waited for: a page
        # closed before its POST lands leaves the approve standing, and the next role's walk an emptier queue.
        with page.expect_navigation():
            page.keyboard.press("u")
        back = page.url.removeprefix(self.base).split("?")[0]
        self.note(where, f"undone with u, back on {back}", bad=back != call.split("?")[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base")
    parser.add_argument("users", nargs="+", help="USER:PASSWORD; one whose top bar links the review queue reviews a call")
    parser.add_argument("--langs", default="es,en")
    parser.add_argument("--widths", default="1280,390")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    walk = Walk(base=args.base.rstrip("/"), english=catalogue())
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        for spec in args.users:
            user, password = spec.split(":", 1)
            for lang in args.langs.split(","):
                for width in map(int, args.widths.split(",")):
                    context = chromium.new_context(locale=LOCALES[lang], viewport={"width": width, "height": WIDTHS[width]})
                    context.add_init_script(PAGE_CHECK)
                    walk.visit(context, user, password, lang, width)
                    context.close()
        chromium.close()
    print("\n".join(walk.lines))
    print(f"\n{len(walk.problems)} problem(s)")
    return 1 if walk.problems else 0


if __name__ == "__main__":
    sys.exit(main())
