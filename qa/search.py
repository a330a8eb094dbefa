"""Full-text search over transcripts, each in its own language.

On PostgreSQL a stored column, `qa_recording.search_vector`, holds each transcript's words as
PostgreSQL's full-text search reads them in the recording's language (`spanish` for `es…`, `english`
for `en…`, `simple`, which only lowercases, for any other), computed by the database on every insert
and update (a generated column: rows written as SQL get it too) and indexed with GIN (migration qa
0015). It is no model field: Django never writes it, and on SQLite, which has no full-text search of
this kind, it does not exist and a search is a case-insensitive substring test of every word.

A search's words are read as a web search engine would (`websearch_to_tsquery`: "quoted phrases",
`or`, `-word`) in each configuration, and a transcript is tested with its own language's reading:
`(Spanish AND vector @@ Spanish query) OR (English AND ...) OR (other AND ...)`, which PostgreSQL
serves with one index scan per configuration, combined.
"""

from __future__ import annotations

import html
import re

from django.contrib.postgres.search import SearchHeadline, SearchQuery, SearchVectorField
from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils.safestring import SafeString, mark_safe

# The language's configuration, as the generated column and the headline both choose it.
SEARCH_CONFIG_SQL = (
    "CASE WHEN lower(language) LIKE 'es%%' THEN 'spanish'::regconfig "
    "WHEN lower(language) LIKE 'en%%' THEN 'english'::regconfig ELSE 'simple'::regconfig END"
)
SEARCH_CONFIGS = ("spanish", "english", "simple")
_SPANISH = "lower(\"qa_recording\".\"language\") LIKE 'es%%'"
_ENGLISH = "lower(\"qa_recording\".\"language\") LIKE 'en%%'"
# Which rows each configuration reads: as SEARCH_CONFIG_SQL chooses (language is never NULL).
_LANGUAGE_IS = {"spanish": _SPANISH, "english": _ENGLISH, "simple": f"NOT ({_SPANISH} OR {_ENGLISH})"}
# What ts_headline puts around a word found: characters of Unicode's private use area, which no
# transcript means, so that the text is escaped first and the marks become <mark> after.
_START, _STOP = "\ue000", "\ue001"
SNIPPET_CHARS = 160  # the SQLite fallback's snippet: about as long as PostgreSQL's two fragments


def search_enabled() -> bool:
    """Whether this database has the full-text column (PostgreSQL) or searches by substring (SQLite)."""
    return connection.vendor == "postgresql"


def _query(words: str, config: str) -> SearchQuery:
    return SearchQuery(words, config=config, search_type="websearch")


def _any_query(words: str) -> SearchQuery:
    """Any configuration's reading: for the headline, which marks what was found (negated words are not)."""
    query = _query(words, SEARCH_CONFIGS[0])
    for config in SEARCH_CONFIGS[1:]:
        query |= _query(words, config)
    return query


def _vector() -> RawSQL:
    return RawSQL('"qa_recording"."search_vector"', [], output_field=SearchVectorField())


def _words(words: str) -> list[str]:
    return [word for word in re.findall(r"\w+", words.lower()) if word not in ("or",)]


def recordings_matching(recordings: QuerySet, words: str) -> QuerySet:
    """`recordings` whose transcript has `words` (all of them; see the module's docstring)."""
    words = words.strip()
    if not words:
        return recordings
    if search_enabled():
        condition = Q()
        for config in SEARCH_CONFIGS:
            language = RawSQL(_LANGUAGE_IS[config], [], output_field=BooleanField())
            condition |= Q(language, search_vector=_query(words, config))
        return recordings.alias(search_vector=_vector()).filter(condition)
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
        found = recordings.annotate(
            headline=SearchHeadline(
                "transcript",
                _any_query(words),
                config=RawSQL(SEARCH_CONFIG_SQL.replace("language", '"qa_recording"."language"'), []),
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
    pattern = re.compile("|".join(re.escape(word) for word in sorted(words, key=len, reverse=True)), re.IGNORECASE)
    first = pattern.search(text) if words else None
    start = max(0, first.start() - SNIPPET_CHARS // 3) if first else 0
    piece = text[start : start + SNIPPET_CHARS]
    marked = pattern.sub(lambda match: f"{_START}{match.group(0)}{_STOP}", piece) if words else piece
    return _marked(("… " if start else "") + marked + (" …" if start + SNIPPET_CHARS < len(text) else ""))


