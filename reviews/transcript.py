"""The transcript as the review page shows it: turn by turn, with evidence marked.

Pure Python (no database): the selectors hand it a transcript, the structured
turns if the recording came with them, each criterion's verified spans and,
for an unverified quote, the closest real passage.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from qa.evidence import parse_turns


@dataclass(frozen=True)
class Piece:
    """A run of a turn's text; `keys` are the criteria whose verified evidence covers it, `near` those
    whose unverified quote has it as the closest real passage (neither: plain text)."""

    text: str
    keys: tuple[str, ...] = ()
    near: tuple[str, ...] = ()
    opens: bool = False  # a span starts here: the page numbers a highlight once, at its start


@dataclass(frozen=True)
class TurnView:
    index: int
    speaker: str | None
    start_ms: int | None
    end_ms: int | None
    pieces: tuple[Piece, ...]


def transcript_turns(
    transcript: str,
    spans_by_key: Mapping[str, Iterable[Sequence[int]]],
    structured_turns: list[dict] | None = None,
    closest_by_key: Mapping[str, Sequence[int]] | None = None,
) -> list[TurnView]:
    """The transcript's turns, each cut into pieces at the evidence spans.

    A span is clipped to every turn it touches (a quote may run over a turn
    change; the speaker label in between is not part of any turn's text).
    Overlapping spans of different criteria split into pieces carrying all
    their keys, so every character is rendered exactly once.
    """
    turns = parse_turns(transcript)
    timings = _timings(turns, structured_turns)
    spans = [(start, end, key) for key, key_spans in spans_by_key.items() for start, end in key_spans if start < end]
    near = [(start, end, key) for key, (start, end) in (closest_by_key or {}).items() if start < end]
    views = []
    for index, turn in enumerate(turns):
        start_ms, end_ms = timings[index]
        views.append(
            TurnView(
                index=index,
                speaker=turn.speaker,
                start_ms=start_ms,
                end_ms=end_ms,
                pieces=_pieces(turn.text, turn.start, spans, near),
            )
        )
    return views


def _timings(turns: list, structured_turns: list[dict] | None) -> list[tuple[int | None, int | None]]:
    """Timestamps from the structured turns, which the transcript renders one line each, in order.

    Only trusted when the parsed turns line up one to one with the structured
    ones (same count, same speakers); a text with line breaks inside a turn
    would shift them, and a wrong timestamp is worse than none.
    """
    lined_up = structured_turns is not None and len(structured_turns) == len(turns) and all(
        " ".join(str(given.get("speaker", "")).split()) == parsed.speaker
        for given, parsed in zip(structured_turns, turns)
    )
    if not lined_up:
        return [(None, None)] * len(turns)
    return [(given.get("start_ms"), given.get("end_ms")) for given in structured_turns]


def _pieces(
    text: str, offset: int, spans: list[tuple[int, int, str]], near: list[tuple[int, int, str]]
) -> tuple[Piece, ...]:
    end_of_turn = offset + len(text)

    def clip(given: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
        clipped = [(max(start, offset), min(end, end_of_turn), key) for start, end, key in given]
        return [(start, end, key) for start, end, key in clipped if start < end]

    spans, near = clip(spans), clip(near)
    cuts = sorted({offset, end_of_turn, *(edge for start, end, _ in spans + near for edge in (start, end))})
    pieces = []
    for low, high in zip(cuts, cuts[1:]):
        # dict.fromkeys keeps the criteria in the order given (the rubric's) without repeats.
        keys = tuple(dict.fromkeys(key for start, end, key in spans if start <= low and high <= end))
        near_keys = tuple(dict.fromkeys(key for start, end, key in near if start <= low and high <= end))
        opens = any(start == low for start, _, _ in spans + near)
        pieces.append(Piece(text[low - offset : high - offset], keys, near_keys, opens))
    return tuple(pieces)
