"""Full-text search over transcripts, each in its own language.

On PostgreSQL a column, `qa_recording.search_vector`, holds each transcript's words as PostgreSQL's
full-text search reads them in the recording's language (`spanish` for `es…`, `english` for `en…`,
`simple`, which only lowercases, for any other), plus a marker of that language (`§es`, `§en`,
`§other`: no text makes a lexeme with `§`). A trigger sets it on insert and when the transcript or
the language change (rows written as SQL get it too), and a GIN index serves it (migration qa 0015).
It is no model field: Django never writes it, and on SQLite, which has no full-text search of this
kind, it does not exist and a search is a case-insensitive substring test of every word.

A search's words are read as a web search engine would (`websearch_to_tsquery`: "quoted phrases",
`or`, `-word`) in each language, and each reading is joined to its language's marker:
`(Spanish words & §es) | (English words & §en) | (simple words & §other)`. So a transcript is tested
only by its own language's reading (a negated word too), in one query the index serves alone, whose
selectivity PostgreSQL estimates from the column's statistics (the markers' frequencies included).
"""

from __future__ import annotations

import html
import re

from django.contrib.postgres.search import SearchHeadline, SearchQuery
from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils.safestring import SafeString, mark_safe

# Each configuration with the marker of the transcripts it reads, as the trigger sets them.
SEARCH_CONFIGS = {"spanish": "§es", "english": "§en", "simple": "§other"}
# The configuration the headline reads a transcript with, as the trigger chooses it.
SEARCH_CONFIG_SQL = (
    "CASE WHEN lower(\"qa_recording\".\"language\") LIKE 'es%%' THEN 'spanish'::regconfig "
    "WHEN lower(\"qa_recording\".\"language\") LIKE 'en%%' THEN 'english'::regconfig ELSE 'simple'::regconfig END"
)
# One language's reading joined to its marker; a reading with no words left (stop words only, such as
# "la") matches nothing, where `&&` with an empty query would leave the marker alone: every call.
_READING_SQL = (
    "CASE WHEN numnode(websearch_to_tsquery('{config}'::regconfig, %s)) = 0 THEN '§none'::tsquery "
    "ELSE websearch_to_tsquery('{config}'::regconfig, %s) && '{marker}'::tsquery END"
)
_MATCH_SQL = '"qa_recording"."search_vector" @@ (' + " || ".join(
    _READING_SQL.format(config=config, marker=marker) for config, marker in SEARCH_CONFIGS.items()
) + ")"
# What ts_headline puts around a word found: characters of Unicode's private use area, which no
# transcript means, so that the text is escaped first and the marks become <mark> after.
_START, _STOP = "\ue000", "\ue001"
SNIPPET_CHARS = 160  # the SQLite fallback's snippet: about as long as PostgreSQL's two fragments


def search_enabled() -> bool:
    """Whether this database has the full-text column (PostgreSQL) or searches by substring (SQLite)."""
    return connection.vendor == "postgresql"


def _words(words: str) -> list[str]:
    return [word for word in re.findall(r"\w+", words.lower()) if word != "or"]


def recordings_matching(recordings: QuerySet, words: str) -> QuerySet:
    """`recordings` whose transcript has `words` (all of them; see the module's docstring)."""
    words = words.strip()
    if not words:
        return recordings
    if search_enabled():
        match = RawSQL(_MATCH_SQL, [words] * (2 * len(SEARCH_CONFIGS)), output_field=BooleanField())
        return recordings.filter(match)
    condition = Q()
    for word in _words(words):
        condition &= Q(transcript__icontains=word)
    return recordings.filter(condition)


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
    return {pk: _snippet(transcript, _words(words)) for pk, transcript in recordings.values_list("pk", "transcript")}


def _marked(text: str) -> SafeString:
    escaped = html.escape(text.replace("\n", " "))
    return mark_safe(escaped.replace(_START, "<mark>").replace(_STOP, "</mark>"))


def _snippet(transcript: str, words: list[str]) -> SafeString:
    """The stretch around the first word found, every found word marked (SQLite's fallback)."""
    text = transcript.replace("\n", " ")
    if not words:
        return _marked(text[:SNIPPET_CHARS])
    pattern = re.compile("|".join(re.escape(word) for word in sorted(words, key=len, reverse=True)), re.IGNORECASE)
    first = pattern.search(text)
    start = max(0, first.start() - SNIPPET_CHARS // 3) if first else 0
    piece = pattern.sub(lambda match: f"{_START}{match.group(0)}{_STOP}", text[start : start + SNIPPET_CHARS])
    return _marked(("… " if start else "") + piece + (" …" if start + SNIPPET_CHARS < len(text) else ""))
