"""Cutting turns at evidence spans (pure: no database)."""

from __future__ import annotations

from reviews.transcript import Piece, transcript_turns

TRANSCRIPT = "AGENTE: Buenas tardes, le atiende Marta.\nCLIENTE: Hola, me cobraron dos veces.\n"


def span(text: str) -> list[int]:
    start = TRANSCRIPT.index(text)
    return [start, start + len(text)]


def test_turns_without_evidence_are_one_plain_piece_each():
    turns = transcript_turns(TRANSCRIPT, {})
    assert [(t.speaker, t.pieces) for t in turns] == [
        ("AGENTE", (Piece("Buenas tardes, le atiende Marta."),)),
        ("CLIENTE", (Piece("Hola, me cobraron dos veces."),)),
    ]


def test_overlapping_spans_split_into_pieces_with_every_key_in_rubric_order():
    turns = transcript_turns(TRANSCRIPT, {"c2": [span("le atiende Marta")], "c1": [span("tardes, le atiende")]})
    assert turns[0].pieces == (
        Piece("Buenas "),
        Piece("tardes, ", ("c1",), opens=True),
        Piece("le atiende", ("c2", "c1"), opens=True),
        Piece(" Marta", ("c2",)),
        Piece("."),
    )
    assert "".join(piece.text for turn in turns for piece in turn.pieces) == (
        "Buenas tardes, le atiende Marta.Hola, me cobraron dos veces."
    )


def test_a_span_over_a_turn_change_is_clipped_to_each_turn():
    turns = transcript_turns(TRANSCRIPT, {"c1": [span("Marta.\nCLIENTE: Hola")]})
    # Numbered again where it continues in the next turn: each turn reads on its own.
    assert [piece for piece in turns[0].pieces if piece.keys] == [Piece("Marta.", ("c1",), opens=True)]
    assert [piece for piece in turns[1].pieces if piece.keys] == [Piece("Hola", ("c1",), opens=True)]


def test_the_closest_passage_of_an_unverified_quote_is_a_piece_of_its_own_kind():
    turns = transcript_turns(TRANSCRIPT, {"c1": [span("Buenas tardes")]}, closest_by_key={"c2": span("me cobraron")})
    assert [piece for piece in turns[1].pieces if piece.near] == [Piece("me cobraron", near=("c2",), opens=True)]
    assert all(not piece.keys for piece in turns[1].pieces)


def test_timestamps_come_from_structured_turns_only_when_they_line_up():
    structured = [
        {"speaker": "AGENTE", "text": "Buenas tardes, le atiende Marta.", "start_ms": 0, "end_ms": 2000},
        {"speaker": "CLIENTE", "text": "Hola, me cobraron dos veces.", "start_ms": 2500, "end_ms": 4000},
    ]
    assert [(t.start_ms, t.end_ms) for t in transcript_turns(TRANSCRIPT, {}, structured)] == [(0, 2000), (2500, 4000)]
    shifted = structured[1:]
    assert [(t.start_ms, t.end_ms) for t in transcript_turns(TRANSCRIPT, {}, shifted)] == [(None, None), (None, None)]
