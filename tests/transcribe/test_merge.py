"""Merging the channels' segments into turns (pure: no audio, no recognizer)."""

from __future__ import annotations

from qa.transcription import Segment, Word, turns_merge


def _segment(role: str, *words: tuple[str, int, int]) -> Segment:
    timed = tuple(Word(text, start, end) for text, start, end in words)
    return Segment(role, timed[0].start_ms, timed[-1].end_ms, " ".join(w.text for w in timed), timed)


def test_a_segment_spanning_the_other_sides_turn_is_cut_at_the_pause():
    # Whisper gave the agent one segment over 0-9 s, with the customer speaking at 3-6 s.
    agent = _segment(
        "agent",
        ("Hola,", 0, 400),
        ("buenos", 500, 900),
        ("días.", 950, 1500),
        ("Claro,", 6500, 7000),
        ("sí.", 7100, 9000),
    )
    customer = _segment("customer", ("Tengo", 3000, 3500), ("un", 3600, 3800), ("problema.", 3900, 5500))

    turns = turns_merge([agent, customer], language="es")

    assert [(turn.speaker, turn.text, turn.start_ms, turn.end_ms) for turn in turns] == [
        ("AGENTE", "Hola, buenos días.", 0, 1500),
        ("CLIENTE", "Tengo un problema.", 3000, 5500),
        ("AGENTE", "Claro, sí.", 6500, 9000),
    ]


def test_consecutive_segments_of_one_speaker_make_one_turn_and_labels_follow_the_language():
    first = _segment("agent", ("Good", 0, 300), ("morning.", 300, 800))
    second = _segment("agent", ("How", 1200, 1400), ("are", 1400, 1500), ("you?", 1500, 1900))
    turns = turns_merge([second, first], language="en")
    assert [(turn.speaker, turn.text, turn.start_ms, turn.end_ms) for turn in turns] == [
        ("AGENT", "Good morning. How are you?", 0, 1900)
    ]
