"""Full-text search over transcripts, each in its own language.

On PostgreSQL a column, `qa_recording.search_vector`, holds each transcript's words as PostgreSQL's
full-text search reads them in the recording's language (`spanish` for `es…`, `english` for `en…`,
`simple`, which only lowercases, for any other). A trigger sets it on insert and when the transcript
or the language change (rows written as SQL get it too), and three GIN indexes serve it, one over the
calls of each configuration (migration qa 0016). It is no model field: Django never writes it, and on
SQLite, which has no full-text search of this kind, it does not exist and a search is read with the same
operators (`_reading`) as case-insensitive substring tests.

A search's words are read as a web search engine would (`websearch_to_tsquery`: "quoted phrases",
`or`, `-word`) in each configuration, and each reading is asked of its own calls only:
`(Spanish call AND vector @@ Spanish reading) OR (English call AND ...) OR (other AND ...)`, so a
transcript is tested by its own language's reading (a negated word too), and PostgreSQL answers with
one scan of each configuration's index, combined.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.contrib.postgres.search import SearchHeadline, SearchQuery
from django.db import connection, transaction
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils.safestring import SafeString, mark_safe

SEARCH_CONFIGS = ("spanish", "english", "simple")
_SPANISH = "lower(\"qa_recording\".\"language\") LIKE 'es%%'"
_ENGLISH = "lower(\"qa_recording\".\"language\") LIKE 'en%%'"
# The calls each configuration reads, as the trigger chooses (language is never NULL), written as the
# indexes' conditions are, so that PostgreSQL sees each condition implies its index's.
_LANGUAGE_IS = {"spanish": _SPANISH, "english": _ENGLISH, "simple": f"NOT ({_SPANISH} OR {_ENGLISH})"}
_MATCH_SQL = " OR ".join(
    f"({_LANGUAGE_IS[config]} AND \"qa_recording\".\"search_vector\" @@ websearch_to_tsquery('{config}'::regconfig, %s))"
    for config in SEARCH_CONFIGS
)
# The configuration the headline reads a transcript with, as the trigger chooses it.
SEARCH_CONFIG_SQL = (
    f"CASE WHEN {_SPANISH} THEN 'spanish'::regconfig WHEN {_ENGLISH} THEN 'english'::regconfig ELSE 'simple'::regconfig END"
)
# What ts_headline puts around a word found: characters of Unicode's private use area, which no
# transcript means, so that the text is escaped first and the marks become <mark> after.
_START, _STOP = "\ue000", "\ue001"
SNIPPET_CHARS = 160  # the SQLite fallback's snippet: about as long as PostgreSQL's two fragments


def search_enabled() -> bool:
    """Whether this database has the full-text column (PostgreSQL) or searches by substring (SQLite)."""
    return connection.vendor == "postgresql"


# A search's terms as websearch_to_tsquery reads them: a "quoted phrase" or a bare word, either one
# negated by a leading "-"; a bare `or` between two terms.
_TERM = re.compile(r'(-?)"([^"]*)"?|(-?)([^\s"]+)')


@dataclass(frozen=True)
class _Term:
    text: str  # lowercased, its words joined by single spaces
    negated: bool = False


def _reading(words: str) -> list[list[_Term]]:
    """SQLite's reading of a search, as PostgreSQL's websearch_to_tsquery reads one: every group must
    match, a group by any of its terms (`a b or c` is a AND (b OR c)), a negated term by its absence."""
    groups: list[list[_Term]] = []
    joined = False
    for match in _TERM.finditer(words):
        quoted = match.group(2) is not None
        negated = bool(match.group(1) if quoted else match.group(3))
        raw = match.group(2) if quoted else match.group(4)
        if not quoted and not negated and raw.lower() == "or":
            joined = bool(groups)
            continue
        found = re.findall(r"\w+", raw.lower())
        if not found:
            continue
        # A bare word with inner punctuation ("e-mail") is a phrase of its words, as PostgreSQL reads it.
        term = _Term(" ".join(found), negated)
        if joined:
            groups[-1].append(term)
        else:
            groups.append([term])
        joined = False
    return groups


def _found_terms(words: str) -> list[str]:
    """The terms a transcript is searched for (not the negated ones): what a snippet marks."""
    return [term.text for group in _reading(words) for term in group if not term.negated]


def _phrase_pattern(text: str) -> str:
    return r"\W+".join(re.escape(word) for word in text.split())


def recordings_matching(recordings: QuerySet, words: str) -> QuerySet:
    """`recordings` whose transcript has `words` (all of them; see the module's docstring)."""
    words = words.strip()
    if not words:
        return recordings
    if search_enabled():
        match = RawSQL(f"({_MATCH_SQL})", [words] * len(SEARCH_CONFIGS), output_field=BooleanField())
        return recordings.filter(match)
    condition = Q()
    for group in _reading(words):
        either = Q()
        for term in group:
            # A phrase's words in order, anything but a word between them (SQLite's REGEXP, which Django
            # provides); a single word as a substring, as before.
            has = Q(transcript__iregex=_phrase_pattern(term.text)) if " " in term.text else Q(transcript__icontains=term.text)
            either |= ~has if term.negated else has
        condition &= either
    return recordings.filter(condition)


@contextmanager
def matches_first() -> Iterator[None]:
    """Within it, PostgreSQL finds a search's calls from bitmap scans (the full-text indexes' matches,
    or another filter's index where that is the fewer calls) instead of walking the table, or a b-tree
    index, and testing each call's vector; PostgreSQL's only (elsewhere it does nothing).

    For a statement that stops early (a LIMIT: the calls list's capped count) with a second condition
    (a judge's value in qa_score), PostgreSQL prices both plans alike, since it counts the test of a
    vector as one operator: it is reading the vector out of line (TOAST, three or four pages a call), and
    the walk tests ten thousand calls before it has counted a thousand: 101 ms on a quiet machine (280
    with cold buffers), against 46 ms from the indexes' matches, whose vectors are not read (an exact
    bitmap needs no recheck; bench/search/README.md). The settings are local to a transaction (a
    savepoint within one) that is rolled back on leaving, which takes them back: what runs within must
    only read.
    """
    if not search_enabled():
        yield
        return
    with transaction.atomic(using=connection.alias):
        with connection.cursor() as cursor:
            # And no JIT: these plans' prices pass jit_above_cost, and compiling them takes longer (50 ms) than running them.
            cursor.execute(
                "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true), "
                "set_config('jit', 'off', true)"
            )
        yield
        transaction.set_rollback(True, using=connection.alias)


def headlines(recordings: QuerySet, words: str) -> dict[int, SafeString]:
    """Per recording id, the passages of its transcript where `words` were found, each found word in
    <mark>, everything else escaped: one query for the rows given (a page of them, not a whole search)."""
    words = words.strip()
    if not words:
        return {}
    if search_enabled():
        # Any language's reading: the marks show what was found (a negated word is not marked).
        query = None
        for config in SEARCH_CONFIGS:
            reading = SearchQuery(words, config=config, search_type="websearch")
            query = reading if query is None else query | reading
        found = recordings.annotate(
            headline=SearchHeadline(
                "transcript",
                query,
                config=RawSQL(SEARCH_CONFIG_SQL, []),
                start_sel=_START,
                stop_sel=_STOP,
                max_words=18,
                min_words=8,
                max_fragments=2,
                fragment_delimiter=" … ",
            )
        ).values_list("pk", "headline")
        return {pk: _marked(text) for pk, text in found}
    return {pk: _snippet(transcript, _found_terms(words)) for pk, transcript in recordings.values_list("pk", "transcript")}


def _marked(text: str) -> SafeString:
    escaped = html.escape(text.replace("\n", " "))
    return mark_safe(escaped.replace(_START, "<mark>").replace(_STOP, "</mark>"))


def _snippet(transcript: str, words: list[str]) -> SafeString:
    """The stretch around the first word found, every found word marked (SQLite's fallback)."""
    text = transcript.replace("\n", " ")
    if not words:
        return _marked(text[:SNIPPET_CHARS])
    pattern = re.compile("|".join(_phrase_pattern(word) for word in sorted(words, key=len, reverse=True)), re.IGNORECASE)
    first = pattern.search(text)
    start = max(0, first.start() - SNIPPET_CHARS // 3) if first else 0
    piece = pattern.sub(lambda match: f"{_START}{match.group(0)}{_STOP}", text[start : start + SNIPPET_CHARS])
    return _marked(("… " if start else "") + piece + (" …" if start + SNIPPET_CHARS < len(text) else ""))
