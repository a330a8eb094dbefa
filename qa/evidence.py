"""Check that a judge's evidence quote is literally in the call transcript.

Pure module (no Django, no database). ``verify_evidence(evidence, transcript)`` returns an
``EvidenceCheck``; store ``check.to_dict()`` (it carries ``VERIFIER_VERSION``) with the score.

Transcript format
    Lines ``SPEAKER: text`` separated by ``\n`` (or ``\r\n``). A label is the text before the line's
    first colon when it is 1-3 words starting with a letter (``AGENTE``, ``caller``, ``Speaker 2``;
    never ``10:30``). A line without a label continues the previous turn. ``parse_turns`` exposes the
    turns with their character offsets.

What counts as literal
    Words are compared, not characters. A word is a run of letters/digits; inner apostrophes join
    (``don't`` -> ``dont``), hyphens split (``e-mail`` -> ``e mail``), digits are words (``18`` is not
    ``17``). Case, accents/diacritics, punctuation, quote marks, whitespace and line breaks are
    ignored. Bracketed ASR tags (``[noise]``, ``<unk>``) are not words, in quote and transcript alike.
    The words must be contiguous and in order.

Fragments and speaker labels
    Ellipses (``...``, ``…``, ``[...]``, ``(...)``) split the quote into fragments, which must all be
    found, in the given order, without overlap. Labels are the transcript's own (``AGENTE``, ``agent``,
    ``Speaker 2``...), recognised in the quote when followed by a colon, in any case. A label at the
    start of a fragment requires the fragment's words to lie in turns of that speaker; a label inside a
    fragment must stand where the transcript opens a turn of that speaker; a label alone before an
    ellipsis attributes the next fragment. Unlabelled words are not attributed to anyone.

Too short
    A fragment of one word, fewer than 3 words in all (labels not counted), or a quote of only labels,
    ellipses or punctuation cannot be located reliably and is never verified.

Status precedence (first that applies wins)
    ``empty`` (None or blank) > ``too_short`` > ``verified`` > ``wrong_speaker`` (a fragment's words
    exist, but only where the quote's labels don't hold) > ``out_of_order`` (every fragment found, but
    not in the given order without overlap) > ``partial`` (some fragments found, not all) >
    ``paraphrase`` (no fragment found; the closest passage has similarity >= ``PARAPHRASE_THRESHOLD``)
    > ``not_found``.

Spans and closest
    ``spans`` has one ``(start, end)`` per fragment found, offsets into the transcript as given, so
    ``transcript[start:end]`` is the quoted passage. For an unverified quote they show what was found
    (possibly with the wrong speaker or order) and must not be highlighted as evidence. ``closest`` is
    computed only when a fragment is missing: the passage nearest to the first missing fragment (its
    first 100 words), found among windows seeded by the fragment's rarest words, stretched over the
    fragment's unmatched ends within the same turns, and scored with difflib's ratio on words. It is
    None when the fragment shares no word with the transcript.

A transcript is prepared (turns, normalised words, speakers, word index) once and kept in a bounded
LRU cache keyed by the transcript string, so the quotes of one call share that work.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

VERIFIER_VERSION = "2026.11.1"

MIN_WORDS = 3
MIN_FRAGMENT_WORDS = 2
# Word-level difflib ratio from which an unfound quote is called a paraphrase: a quote with one word
# changed in eight scores 0.875; a description of the call usually shares a few loose words (< 0.5).
PARAPHRASE_THRESHOLD = 0.6

_PREPARED_CACHE_SIZE = 64
# Bounds on the closest-passage search, so an unverified quote costs about the same on any transcript.
_SEED_BUDGET = 1000  # occurrences of the quote's rarest words that may vote for a window start
_CANDIDATE_WINDOWS = 5  # best-voted windows compared word by word with difflib
_CLOSEST_MAX_WORDS = 100  # difflib grows with the quote's length squared: longer quotes are judged by their head
# Above this many words compared per transcript word, a fragment is searched by a linear scan instead of
# from its rarest word's occurrences.
_SEEDED_SEARCH_FACTOR = 4

# A turn label: 1-3 words, the first starting with a letter, before the line's first colon
# ("AGENTE:", "Speaker 2:"); "10:30" is not a label.
_LABEL = re.compile(r"^[ \t]*([^\W\d_][^\W_]*(?:[ \t]+[^\W_]+){0,2})[ \t]*:", re.MULTILINE)
# Letters and digits, with the combining marks of decomposed (NFD) text; written as an unrolled loop
# because a per-character alternation makes tokenizing a long transcript several times slower.
_LETTERS = r"[^\W_]+(?:[\u0300-\u036f]+[^\W_]*)*"
# Words are joined across inner apostrophes.
_WORD = rf"{_LETTERS}(?:['’ʼ´]{_LETTERS})*"
_TOKEN = re.compile(_WORD)
_QUOTE_TOKEN = re.compile(rf"({_WORD})|(:)")
# Bracketed ASR tags ([noise], <unk>): not words, so they are blanked out before tokenizing.
_TAG = re.compile(r"\[[^\]\n]*\]|<[^>\n]*>")
_ELLIPSIS = re.compile(r"[\[(]\s*(?:\.{3,}|…)\s*[\])]|\.{3,}|…")
_APOSTROPHES = str.maketrans("", "", "'’ʼ´")


class Status(StrEnum):
    VERIFIED = "verified"
    EMPTY = "empty"
    TOO_SHORT = "too_short"
    WRONG_SPEAKER = "wrong_speaker"
    OUT_OF_ORDER = "out_of_order"
    PARTIAL = "partial"
    PARAPHRASE = "paraphrase"
    NOT_FOUND = "not_found"


@dataclass(frozen=True)
class Turn:
    """One speaker turn; ``transcript[start:end] == text`` (the label is not part of it)."""

    speaker: str | None
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Closest:
    """The transcript passage nearest to an unfound quote: what the judge probably meant."""

    text: str
    start: int
    end: int
    similarity: float

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "start": self.start, "end": self.end, "similarity": self.similarity}


@dataclass(frozen=True)
class EvidenceCheck:
    status: Status
    spans: tuple[tuple[int, int], ...] = ()
    closest: Closest | None = None

    @property
    def verified(self) -> bool:
        return self.status is Status.VERIFIED

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form to store next to the score."""
        return {
            "status": self.status.value,
            "verified": self.verified,
            "spans": [list(span) for span in self.spans],
            "closest": self.closest.to_dict() if self.closest else None,
            "version": VERIFIER_VERSION,
        }


@dataclass(frozen=True)
class _Segment:
    """Words of a fragment attributed to one label (None: not attributed)."""

    label: str | None
    words: tuple[str, ...]


@dataclass(frozen=True)
class _Fragment:
    segments: tuple[_Segment, ...]

    @functools.cached_property
    def words(self) -> tuple[str, ...]:
        return tuple(word for segment in self.segments for word in segment.words)


@dataclass(frozen=True)
class _Prepared:
    """A transcript ready for searching. Character offsets of words are not kept: only the few
    words that end up in a span are located again, by re-tokenizing their turn."""

    transcript: str
    searchable: str  # the transcript with ASR tags blanked out; same length, same offsets
    words: tuple[str, ...]  # normalised, by position
    speakers: tuple[str | None, ...]  # normalised label, by position
    turn_starts: tuple[int, ...]  # ascending position of the first word of each turn that has words
    turn_ranges: tuple[tuple[int, int], ...]  # character range of each of those turns
    index: dict[str, list[int]]  # word -> ascending positions
    labels: frozenset[str]  # normalised speaker labels
    turn_start_set: frozenset[int]  # turn_starts, for a constant-time "does a turn open here?"
    run_ends: tuple[int, ...]  # by position: where the run of words of that position's speaker ends


def verify_evidence(evidence: str | None, transcript: str) -> EvidenceCheck:
    """Check one evidence quote against a transcript of ``SPEAKER: text`` lines."""
    if evidence is not None and not isinstance(evidence, str):
        raise TypeError(f"evidence must be str or None, not {type(evidence).__name__}")
    if not isinstance(transcript, str):
        raise TypeError(f"transcript must be str, not {type(transcript).__name__}")
    if evidence is None or not evidence.strip():
        return EvidenceCheck(Status.EMPTY)
    prepared = _prepare(transcript)
    fragments = _parse_quote(evidence, prepared.labels)
    if _too_short(fragments):
        return EvidenceCheck(Status.TOO_SHORT)
    return _locate(fragments, prepared)


def parse_turns(transcript: str) -> list[Turn]:
    """Split ``SPEAKER: text`` lines (ending in \\n or \\r\\n) into turns.

    A line without a label continues the previous turn; text before the first label is a turn
    without speaker; blank turns are left out.
    """
    return [Turn(speaker, transcript[start:end], start, end) for speaker, start, end in _turn_ranges(transcript)]


def _turn_ranges(transcript: str) -> list[tuple[str | None, int, int]]:
    """(label as written, start, end) of each non-blank turn's text, label excluded."""
    ranges: list[tuple[str | None, int, int]] = []
    speaker: str | None = None
    body = 0
    for label in _LABEL.finditer(transcript):
        _add_range(ranges, transcript, speaker, body, label.start())
        speaker, body = " ".join(label.group(1).split()), label.end()
    _add_range(ranges, transcript, speaker, body, len(transcript))
    return ranges


def _add_range(ranges: list[tuple[str | None, int, int]], transcript: str, speaker: str | None, start: int, end: int) -> None:
    text = transcript[start:end]
    stripped = text.strip()
    if stripped:
        first = start + len(text) - len(text.lstrip())
        ranges.append((speaker, first, first + len(stripped)))


@functools.lru_cache(maxsize=1 << 16)
def _normalize_word(word: str) -> str:
    # casefold before NFKD: casefolding can itself produce decomposable characters.
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    stripped = "".join(char for char in decomposed if not unicodedata.combining(char))
    return stripped.translate(_APOSTROPHES)


def _blank_tags(text: str) -> str:
    """Replace ASR tags by spaces of the same length, so character offsets stay valid."""
    if "[" not in text and "<" not in text:
        return text
    return _TAG.sub(lambda tag: " " * len(tag.group()), text)


@functools.lru_cache(maxsize=256)
def _label_key(label: str) -> str:
    """How a speaker label is compared: its normalised words."""
    return " ".join(_normalize_word(word) for word in _TOKEN.findall(label))


@functools.lru_cache(maxsize=_PREPARED_CACHE_SIZE)
def _prepare(transcript: str) -> _Prepared:
    # Hot path for long transcripts: the work per word is kept to C-level calls where possible.
    searchable = _blank_tags(transcript)
    raw: list[str] = []
    speakers: list[str | None] = []
    turn_starts: list[int] = []
    turn_ranges: list[tuple[int, int]] = []
    labels: set[str] = set()
    for speaker, start, end in _turn_ranges(transcript):
        key = _label_key(speaker) if speaker else None
        if key:
            labels.add(key)
        found = _TOKEN.findall(searchable, start, end)
        if found:
            turn_starts.append(len(raw))
            turn_ranges.append((start, end))
            raw += found
            speakers += [key] * len(found)
    # Lower-casing once for all words leaves plain ASCII words normalised; only the others (accents,
    # apostrophes) go through the full normalisation.
    lowered = "\n".join(raw).lower().split("\n")
    words = tuple(word if word.isascii() and "'" not in word else _normalize_word(word) for word in lowered)
    index: dict[str, list[int]] = {}
    for position, word in enumerate(words):
        index.setdefault(word, []).append(position)
    run_ends = [len(speakers)] * len(speakers)
    for position in range(len(speakers) - 2, -1, -1):
        if speakers[position] == speakers[position + 1]:
            run_ends[position] = run_ends[position + 1]
        else:
            run_ends[position] = position + 1
    return _Prepared(
        transcript=transcript,
        searchable=searchable,
        words=words,
        speakers=tuple(speakers),
        turn_starts=tuple(turn_starts),
        turn_ranges=tuple(turn_ranges),
        index=index,
        labels=frozenset(labels),
        turn_start_set=frozenset(turn_starts),
        run_ends=tuple(run_ends),
    )


def _parse_quote(evidence: str, labels: frozenset[str]) -> list[_Fragment]:
    fragments: list[_Fragment] = []
    pending: str | None = None  # a label left alone before an ellipsis attributes the next fragment
    for piece in _ELLIPSIS.split(evidence):
        segments = _segments(piece, labels)
        if segments and segments[0].label is None and pending:
            segments[0] = _Segment(pending, segments[0].words)
        pending = None
        if segments and not segments[-1].words:
            pending = segments.pop().label
        if segments:
            fragments.append(_Fragment(tuple(segments)))
    return fragments


def _segments(piece: str, labels: frozenset[str]) -> list[_Segment]:
    """Words of one fragment, cut where a label of the transcript followed by a colon stands."""
    cuts: list[tuple[str | None, list[str]]] = [(None, [])]
    for match in _QUOTE_TOKEN.finditer(_blank_tags(piece)):
        word, colon = match.groups()
        if word:
            cuts[-1][1].append(_normalize_word(word))
        elif colon:
            label = _pop_label(cuts[-1][1], labels)
            if label:
                cuts.append((label, []))
    segments = [_Segment(label, tuple(words)) for label, words in cuts if words]
    last_label, last_words = cuts[-1]
    if last_label and not last_words:
        segments.append(_Segment(last_label, ()))
    return segments


def _pop_label(words: list[str], labels: frozenset[str]) -> str | None:
    """If the words just before a colon are a speaker label, remove them and return it (longest first)."""
    for size in (3, 2, 1):
        key = " ".join(words[-size:])
        if len(words) >= size and key in labels:
            del words[-size:]
            return key
    return None


def _too_short(fragments: list[_Fragment]) -> bool:
    total = sum(len(fragment.words) for fragment in fragments)
    return total < MIN_WORDS or any(len(fragment.words) < MIN_FRAGMENT_WORDS for fragment in fragments)


def _locate(fragments: list[_Fragment], prepared: _Prepared) -> EvidenceCheck:
    # Identical fragments share their search, and each (fragment, occurrence) is checked for its
    # speakers at most once: with repetitive text and quotes, that is what keeps the cost near-linear.
    occurrences: dict[tuple[str, ...], list[int]] = {}
    for fragment in fragments:
        if fragment.words not in occurrences:
            occurrences[fragment.words] = _occurrences(fragment.words, prepared)
    literal = [occurrences[fragment.words] for fragment in fragments]
    # Equal fragments get one key; a fragment is hashed once here, never per occurrence.
    distinct: dict[_Fragment, int] = {}
    keys = [distinct.setdefault(fragment, len(distinct)) for fragment in fragments]
    verdicts: dict[tuple[int, int], bool] = {}

    def holds(number: int, start: int) -> bool:
        key = (keys[number], start)
        if key not in verdicts:
            verdicts[key] = _speakers_hold(fragments[number], start, prepared)
        return verdicts[key]

    chain = _ordered_chain(fragments, literal, holds)
    if chain is not None:
        return EvidenceCheck(Status.VERIFIED, _spans(fragments, chain, prepared))

    first_attributed: dict[int, int | None] = {}
    for number, starts in enumerate(literal):
        if keys[number] not in first_attributed:
            first_attributed[keys[number]] = next((start for start in starts if holds(number, start)), None)
    attributed = [first_attributed[key] for key in keys]
    # Show what exists (preferring a correctly attributed occurrence) for the reviewer.
    found = [
        (fragment, starts[0] if good is None else good)
        for fragment, starts, good in zip(fragments, literal, attributed)
        if starts
    ]
    spans = _spans([fragment for fragment, _ in found], [start for _, start in found], prepared)
    missing = next((fragment for fragment, starts in zip(fragments, literal) if not starts), None)
    closest = _closest(missing.words, prepared) if missing else None

    if any(starts and good is None for starts, good in zip(literal, attributed)):
        status = Status.WRONG_SPEAKER
    elif all(good is not None for good in attributed):
        status = Status.OUT_OF_ORDER
    elif any(good is not None for good in attributed):
        status = Status.PARTIAL
    elif closest and closest.similarity >= PARAPHRASE_THRESHOLD:
        status = Status.PARAPHRASE
    else:
        status = Status.NOT_FOUND
    return EvidenceCheck(status, spans, closest)


def _occurrences(words: tuple[str, ...], prepared: _Prepared) -> list[int]:
    """Ascending start positions where the words occur contiguously.

    Seeded by the quote's rarest word while checking its occurrences costs at most a few passes
    over the transcript; otherwise (repetitive text: the rarest word is everywhere) a
    Knuth-Morris-Pratt scan, linear in the transcript plus the fragment.
    """
    count, offset = min((len(prepared.index.get(word, ())), offset) for offset, word in enumerate(words))
    if count == 0:
        return []
    size = len(words)
    if count * size > _SEEDED_SEARCH_FACTOR * (len(prepared.words) + size):
        return _kmp_search(words, prepared.words)
    candidates = (position - offset for position in prepared.index[words[offset]])
    return [start for start in candidates if start >= 0 and prepared.words[start : start + size] == words]


def _kmp_search(pattern: tuple[str, ...], text: tuple[str, ...]) -> list[int]:
    """Every start of `pattern` in `text` (overlapping ones included), in O(len(text) + len(pattern))."""
    failure = [0] * len(pattern)
    matched = 0
    for position in range(1, len(pattern)):
        while matched and pattern[position] != pattern[matched]:
            matched = failure[matched - 1]
        if pattern[position] == pattern[matched]:
            matched += 1
        failure[position] = matched
    starts = []
    matched = 0
    for position, word in enumerate(text):
        while matched and word != pattern[matched]:
            matched = failure[matched - 1]
        if word == pattern[matched]:
            matched += 1
            if matched == len(pattern):
                starts.append(position - matched + 1)
                matched = failure[matched - 1]
    return starts


def _speakers_hold(fragment: _Fragment, start: int, prepared: _Prepared) -> bool:
    """Does the occurrence at ``start`` satisfy the fragment's labels? Constant time per label."""
    position = start
    for number, segment in enumerate(fragment.segments):
        end = position + len(segment.words)
        if segment.label is not None:
            if number > 0 and position not in prepared.turn_start_set:  # an inner label marks a turn change
                return False
            if prepared.speakers[position] != segment.label or prepared.run_ends[position] < end:
                return False
        position = end
    return True


def _turn_bounds(position: int, prepared: _Prepared) -> tuple[int, int]:
    """Word positions [first, past-the-end) of the turn holding ``position``."""
    at = bisect.bisect_right(prepared.turn_starts, position)
    end = prepared.turn_starts[at] if at < len(prepared.turn_starts) else len(prepared.words)
    return prepared.turn_starts[at - 1], end


def _ordered_chain(
    fragments: list[_Fragment], literal: list[list[int]], holds: Callable[[int, int], bool]
) -> list[int] | None:
    """Earliest non-overlapping attributed occurrence of each fragment in order; greedy is enough for
    existence. Each fragment's scan starts where the previous fragment's match ended, so the scans
    cover disjoint stretches of the transcript."""
    chain: list[int] = []
    position = 0
    for number, (fragment, starts) in enumerate(zip(fragments, literal)):
        at = bisect.bisect_left(starts, position)
        while at < len(starts) and not holds(number, starts[at]):
            at += 1
        if at == len(starts):
            return None
        chain.append(starts[at])
        position = starts[at] + len(fragment.words)
    return chain


def _spans(fragments: list[_Fragment], starts: list[int], prepared: _Prepared) -> tuple[tuple[int, int], ...]:
    ends = [start + len(fragment.words) - 1 for fragment, start in zip(fragments, starts)]
    offsets = _word_offsets(starts + ends, prepared)
    return tuple((offsets[first][0], offsets[last][1]) for first, last in zip(starts, ends))


def _char_range(first: int, last: int, prepared: _Prepared) -> tuple[int, int]:
    """Characters from the start of word ``first`` to the end of word ``last``."""
    offsets = _word_offsets([first, last], prepared)
    return offsets[first][0], offsets[last][1]


def _word_offsets(positions: list[int], prepared: _Prepared) -> dict[int, tuple[int, int]]:
    """Character offsets of the words at ``positions``, re-tokenizing each turn involved once
    (a quote of many fragments in one long turn must not re-read the turn per fragment)."""
    by_turn: dict[int, set[int]] = {}
    for position in positions:
        by_turn.setdefault(bisect.bisect_right(prepared.turn_starts, position) - 1, set()).add(position)
    offsets: dict[int, tuple[int, int]] = {}
    for turn, wanted in by_turn.items():
        start, end = prepared.turn_ranges[turn]
        first, last = prepared.turn_starts[turn], max(wanted)
        words = itertools.islice(_TOKEN.finditer(prepared.searchable, start, end), last - first + 1)
        for position, match in enumerate(words, first):
            if position in wanted:
                offsets[position] = match.span()
    return offsets


def _closest(words: tuple[str, ...], prepared: _Prepared) -> Closest | None:
    """Nearest passage to ``words``: windows voted for by the quote's rarer words, scored by difflib."""
    words = words[:_CLOSEST_MAX_WORDS]
    votes: Counter[int] = Counter()
    for offset, word in _seeds(words, prepared):
        votes.update(map((-offset).__add__, prepared.index[word]))  # window start = position - offset
    slack = len(words) // 2 + 2  # room for words the quote dropped or added
    best: tuple[float, int, int] | None = None
    tried: list[int] = []
    for start, _ in votes.most_common():
        if len(tried) == _CANDIDATE_WINDOWS:
            break
        if any(abs(start - other) <= slack for other in tried):
            continue  # nearly the same window as one already scored
        tried.append(start)
        scored = _score_window(words, prepared, max(0, start - slack), start + len(words) + slack)
        if best is None or scored[0] > best[0]:
            best = scored
    if best is None:
        return None
    similarity, first, last = best
    char_start, char_end = _char_range(first, last, prepared)
    return Closest(prepared.transcript[char_start:char_end], char_start, char_end, similarity)


def _seeds(words: tuple[str, ...], prepared: _Prepared) -> list[tuple[int, str]]:
    """(offset, word) pairs of the quote's rarest words, up to ``_SEED_BUDGET`` transcript occurrences."""
    present = sorted(
        (len(prepared.index[word]), offset, word) for offset, word in enumerate(words) if word in prepared.index
    )
    seeds: list[tuple[int, str]] = []
    spent = 0
    for count, offset, word in present:
        if seeds and spent + count > _SEED_BUDGET:
            break
        seeds.append((offset, word))
        spent += count
    return seeds


def _score_window(words: tuple[str, ...], prepared: _Prepared, low: int, high: int) -> tuple[float, int, int]:
    """(similarity, first word, last word) of the passage in words [low, high) that best matches ``words``."""
    window = prepared.words[low:high]
    matcher = difflib.SequenceMatcher(None, words, window, autojunk=False)
    blocks = [block for block in matcher.get_matching_blocks() if block.size]
    first, last = blocks[0], blocks[-1]  # a voted window always shares at least its seed word
    # Stretch the passage over the quote's unmatched head and tail ("... las 17" meant "... las 18"),
    # within the turns of the matched words (a neighbour's words are not what the judge meant) but
    # beyond the window if need be: a cut-off window must not score better.
    head_turn, _ = _turn_bounds(low + first.b, prepared)
    _, tail_turn = _turn_bounds(low + last.b + last.size - 1, prepared)
    start = max(head_turn, low + first.b - first.a)
    end = min(tail_turn, low + last.b + len(words) - last.a)
    matched = sum(block.size for block in blocks)
    return round(2 * matched / (len(words) + end - start), 3), start, end - 1
