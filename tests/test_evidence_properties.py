"""Property tests for qa.evidence (hypothesis): noisy copies of real runs verify, one changed word does not.

Plain pytest functions, no Django: run with ``python -m pytest tests/test_evidence_properties.py -p no:django``.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from qa.evidence import verify_evidence

SPEAKERS = ("AGENTE", "CLIENTE")
VOCABULARY = (
    "sí", "te", "lo", "mando", "hoy", "antes", "de", "las", "18", "por", "correo", "número", "reclamo",
    "año", "están", "crédito", "débito", "tarjeta", "información", "también", "pingüino", "acción",
    "cuántos", "día", "4500", "niño", "Ángel", "Perú", "don't", "we'll", "refund", "charge", "café",
    "the", "card", "24", "hours", "no", "el", "la", "cobro", "devolución",
)
# Words that never occur in a generated transcript.
FOREIGN = ("zanahoria", "xilófono", "quetzal", "umbrella", "walrus", "19", "pérdida")
TRANSCRIPT_SEPARATORS = (" ", ", ", ". ", "? ", " ¿", "; ", "! ", " [ruido] ", "\n  ")
QUOTE_SEPARATORS = (" ", ", ", " — ", "! ", "? ", "\n", " «", "» ", " “", "” ", "; ", " - ", ",", ".", "¡", " (", ") ")
WRAPPERS = (("", ""), ("“", "”"), ("«", "»"), ('"', '"'), ("‘", "’"), ("'", "'"))


@dataclass(frozen=True)
class Rendered:
    text: str
    words: list[str]  # every word of the transcript, in order
    spans: list[tuple[int, int]]  # character range of each word
    turn_of: list[int]  # turn number of each word
    speakers: list[str]  # speaker of each turn


def _strip_accents(text: str) -> str:
    return unicodedata.normalize("NFC", "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)))


def _key(word: str) -> str:
    """Reference comparison form, written independently of the module under test."""
    return _strip_accents(word).casefold().replace("'", "")


@st.composite
def transcripts(draw: st.DrawFn) -> Rendered:
    turns = draw(st.lists(st.tuples(st.sampled_from(SPEAKERS), st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=12)), min_size=1, max_size=12))
    text, words, spans, turn_of, speakers = "", [], [], [], []
    for number, (speaker, turn_words) in enumerate(turns):
        text += f"{speaker}: "
        speakers.append(speaker)
        for position, word in enumerate(turn_words):
            if position:
                text += draw(st.sampled_from(TRANSCRIPT_SEPARATORS))
            spans.append((len(text), len(text) + len(word)))
            words.append(word)
            turn_of.append(number)
            text += word
        text += draw(st.sampled_from(("\n", ".\n", "?\n")))
    return Rendered(text, words, spans, turn_of, speakers)


@st.composite
def runs(draw: st.DrawFn, rendered: Rendered, min_size: int = 3) -> tuple[int, int]:
    """A contiguous run [first, last] of at least ``min_size`` transcript words."""
    size = draw(st.integers(min_size, len(rendered.words)))
    first = draw(st.integers(0, len(rendered.words) - size))
    return first, first + size - 1


def _recase(draw: st.DrawFn, word: str) -> str:
    style = draw(st.sampled_from((str.upper, str.lower, str.title, str.swapcase, str)))
    word = style(word)
    return _strip_accents(word) if draw(st.booleans()) else word


def _noisy(draw: st.DrawFn, words: list[str]) -> str:
    """The words re-cased, maybe stripped of accents, re-punctuated and wrapped in quote marks."""
    quote = _recase(draw, words[0])
    for word in words[1:]:
        quote += draw(st.sampled_from(QUOTE_SEPARATORS)) + _recase(draw, word)
    opening, closing = draw(st.sampled_from(WRAPPERS))
    return f"{opening}{quote}{draw(st.sampled_from(('', '.', '!', '?')))}{closing}"


def _keys(words: list[str]) -> list[str]:
    return [_key(word) for word in words]


def _occurrences(rendered: Rendered, keys: list[str]) -> int:
    all_keys = _keys(rendered.words)
    return sum(all_keys[start : start + len(keys)] == keys for start in range(len(all_keys) - len(keys) + 1))


def _span_keys(rendered: Rendered, span: tuple[int, int]) -> list[str]:
    """Keys of the transcript words lying exactly inside ``span``."""
    start, end = span
    inside = [word for word, (s, e) in zip(rendered.words, rendered.spans) if start <= s and e <= end]
    return _keys(inside)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_noisy_copy_of_any_run_verifies_and_spans_cover_its_words(data: st.DataObject) -> None:
    rendered = data.draw(transcripts().filter(lambda r: len(r.words) >= 3))
    first, last = data.draw(runs(rendered))
    words = rendered.words[first : last + 1]
    check = verify_evidence(_noisy(data.draw, words), rendered.text)
    assert check.verified, check
    [span] = check.spans
    assert _span_keys(rendered, span) == _keys(words)
    # The span starts and ends on word boundaries of the transcript.
    assert span[0] in {s for s, _ in rendered.spans} and span[1] in {e for _, e in rendered.spans}
    if _occurrences(rendered, _keys(words)) == 1:
        assert span == (rendered.spans[first][0], rendered.spans[last][1])


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_run_with_one_word_replaced_does_not_verify(data: st.DataObject) -> None:
    rendered = data.draw(transcripts().filter(lambda r: len(r.words) >= 3))
    first, last = data.draw(runs(rendered))
    words = list(rendered.words[first : last + 1])
    at = data.draw(st.integers(0, len(words) - 1))
    # Mostly words of the transcript's own vocabulary, so the search cannot reject on a missing word alone.
    words[at] = data.draw(st.sampled_from(VOCABULARY + FOREIGN).filter(lambda w: _key(w) != _key(words[at])))
    assume(_occurrences(rendered, _keys(words)) == 0)  # the changed run must not exist elsewhere by chance
    check = verify_evidence(_noisy(data.draw, words), rendered.text)
    assert not check.verified, check


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_elided_runs_in_order_verify_with_one_span_each(data: st.DataObject) -> None:
    rendered = data.draw(transcripts().filter(lambda r: len(r.words) >= 4))
    first, last = data.draw(runs(rendered, min_size=4))
    cut = data.draw(st.integers(first + 2, last - 1))  # both fragments keep >= 2 words
    gap = data.draw(st.integers(0, last - cut - 1))  # words dropped at the ellipsis
    head, tail = rendered.words[first:cut], rendered.words[cut + gap : last + 1]
    ellipsis = data.draw(st.sampled_from(("...", "…", " [...] ", " (...) ", " … ")))
    check = verify_evidence(_noisy(data.draw, head) + ellipsis + _noisy(data.draw, tail), rendered.text)
    assert check.verified, check
    assert [_span_keys(rendered, span) for span in check.spans] == [_keys(head), _keys(tail)]
    assert check.spans[0][1] <= check.spans[1][0]


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_run_inside_one_turn_verifies_with_its_speakers_label(data: st.DataObject) -> None:
    rendered = data.draw(transcripts().filter(lambda r: max(r.turn_of.count(t) for t in set(r.turn_of)) >= 3))
    long_turns = [t for t in set(rendered.turn_of) if rendered.turn_of.count(t) >= 3]
    turn = data.draw(st.sampled_from(sorted(long_turns)))
    positions = [i for i, t in enumerate(rendered.turn_of) if t == turn]
    size = data.draw(st.integers(3, len(positions)))
    first = data.draw(st.sampled_from(positions[: len(positions) - size + 1]))
    label = data.draw(st.sampled_from((str.upper, str.lower, str.title)))(rendered.speakers[turn])
    quote = f"{label}: {_noisy(data.draw, rendered.words[first : first + size])}"
    assert verify_evidence(quote, rendered.text).verified
