"""Reading the README and the pages under docs/ as a reader sees them: a page's sections by heading, their
fenced blocks, the anchors GitHub gives the headings, and each shell block's marker (who runs it, or why
nothing does). Tests that run or check what the docs say read it from here, so a page and its test cannot
drift apart."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL = ("sh", "bash", "shell", "console")
FENCE = re.compile(r"^([ \t]*)```(\S*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.M | re.S)
HEADING = re.compile(r"^(#{1,6}) +(.+?) *#*$")
MARKER = re.compile(r"<!--\s*(run-by|not-run):\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    line: int  # of the opening fence, counting from 1
    marker: tuple[str, str] | None  # ("run-by", "tests/x.py") or ("not-run", "why") from the line before


def doc_pages() -> list[Path]:
    """The README and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def doc_text(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def _outside_fences(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line not inside a fenced block."""
    lines, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            inside = not inside
        elif not inside:
            lines.append((number, line))
    return lines


def headings(text: str) -> list[tuple[int, int, str]]:
    """(line number, level, title) of every heading outside fenced blocks."""
    found = []
    for number, line in _outside_fences(text):
        if match := HEADING.match(line):
            found.append((number, len(match.group(1)), match.group(2)))
    return found


def anchor(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`."""
    text = re.sub(r"[`*]", "", title).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {anchor(title) for _, _, title in headings(page.read_text(encoding="utf-8"))}


def docs_section(page: str, heading: str) -> str:
    """The section of `page` (a path from the repository's root) under the heading whose title is
    `heading`, whatever its level, up to the next heading of the same or a higher level."""
    text = doc_text(page)
    lines = text.splitlines(keepends=True)
    found = headings(text)
    for index, (number, level, title) in enumerate(found):
        if title == heading:
            end = next((n for n, lvl, _ in found[index + 1 :] if lvl <= level), len(lines) + 1)
            return "".join(lines[number - 1 : end - 1])
    raise LookupError(f"{page} has no heading {heading!r}")


def docs_blocks(text: str, language: str | tuple[str, ...] = SHELL) -> list[Block]:
    """The fenced blocks of `text` in `language` (by default the shell's), in order, with their markers."""
    languages = (language,) if isinstance(language, str) else language
    blocks = []
    for match in FENCE.finditer(text):
        indent, found, code = match.groups()
        if found not in languages:
            continue
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        code = "".join(row.removeprefix(indent) for row in code.splitlines(keepends=True))
        blocks.append(Block(found, code, line, marker.groups() if marker else None))
    return blocks


def manage_commands(code: str) -> list[list[str]]:
    """Every `python manage.py ...` of a shell block (a line's, or inside `$(...)`) as its argument list,
    the command first: continuation lines joined, comments dropped, a redirection (`> file`) kept as
    its two words for the caller."""
    joined = re.sub(r"\\\n\s*", " ", code)
    return [shlex.split(found, comments=True) for found in re.findall(r"python manage\.py ([^)\n]*)", joined)]
