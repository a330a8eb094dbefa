"""The verifier's worst case within the bound every judge's answer is held to (``qa.answer``: a quote
of at most 160 characters, about 40 fragments at most): repetitive transcripts (one word said 40,000
times, a phrase repeated, one-word turns) and the quotes that cost most on them (the widest quote of
one word, a label that never holds, a near miss, the most fragments, the most distinct fragments)
cost a few passes over the transcript, not the transcript times the quote.

The bound on the time is generous (each case measured well under a second with other work on the 2
cores): it catches a return to quadratic time, not a slow machine. The quote with the most distinct
fragments, unverified, is also timed at two transcript sizes: four times the transcript must cost
about four times as much, not sixteen. A quote past the schema's bound is never given to the verifier
by the judge; the verifier then costs about one pass per distinct fragment (qa/evidence.py).
"""

from __future__ import annotations

import itertools
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qa import evidence
from qa.answer import COMPACT_SHAPE, STANDARD_SHAPE, UNBOUNDED_SHAPE
from qa.evidence import Status, verify_evidence

BOUND_SECONDS = 5.0
SPEAKERS = ("AGENTE", "CLIENTE")
# The longest quote any judge's answer may carry: every answer is checked against its shape's bound.
QUOTE_BOUND = max(shape.evidence_max_chars for shape in (STANDARD_SHAPE, UNBOUNDED_SHAPE, COMPACT_SHAPE))


def timed(quote: str, transcript: str):
    assert len(quote) <= QUOTE_BOUND, f"{len(quote)} characters: no judge's answer carries this quote"
    started = time.perf_counter()
    check = verify_evidence(quote, transcript)
    return check, time.perf_counter() - started


def turns(words_per_turn: int, turns_count: int, phrase: str) -> str:
    return "".join(f"{SPEAKERS[number % 2]}: {' '.join([phrase] * words_per_turn)}\n" for number in range(turns_count))


def widest(piece: str, *, head: str = "", tail: str = "", joiner: str = "") -> str:
    """``head`` + as many ``piece``s (joined by ``joiner``) as fit in the bound + ``tail``."""
    count = 1
    while len(head + joiner.join([piece] * (count + 1)) + tail) <= QUOTE_BOUND:
        count += 1
    return head + joiner.join([piece] * count) + tail


CASES = {
    # 40,000 times the same word in one turn; the quote is as many of them as fit.
    "one word everywhere": (widest("sí", joiner=" "), "AGENTE: " + "sí " * 40_000 + "\n", Status.VERIFIED),
    # The same, in alternating turns of 40: the quote's label holds nowhere for its 50-odd words.
    "a label that never holds": (widest("sí", head="AGENTE: ", joiner=" "), turns(40, 1000, "sí"), Status.WRONG_SPEAKER),
    # A repeated phrase, quoted over and over with one word that is not there.
    "a near miss": (
        widest("uno dos tres", joiner=" ", tail=" cuatro"), "AGENTE: " + "uno dos tres " * 13_000 + "\n", Status.PARAPHRASE
    ),
    # The most fragments a quote can have, each found everywhere.
    "the most fragments": (widest("sí sí", joiner="…"), "AGENTE: " + "sí " * 40_000 + "\n", Status.VERIFIED),
    # Labelled fragments over turns of one word each.
    "labels at every word": (widest("AGENTE: sí CLIENTE: sí", joiner="…"), turns(1, 40_000, "sí"), Status.VERIFIED),
}


@pytest.mark.parametrize("case", CASES)
def test_repetitive_text_costs_about_one_pass(case):
    quote, transcript, status = CASES[case]
    check, seconds = timed(quote, transcript)
    assert check.status is status
    assert seconds < BOUND_SECONDS, f"{case}: {seconds:.1f} s"


@given(
    vocabulary=st.lists(st.sampled_from(["sí", "no", "vale", "ya", "eh"]), min_size=1, max_size=3, unique=True),
    turn_words=st.integers(min_value=1, max_value=200),
    transcript_words=st.integers(min_value=5_000, max_value=20_000),
    fragment_words=st.integers(min_value=2, max_value=60),
    fragments=st.integers(min_value=1, max_value=40),
    labelled=st.booleans(),
    seed=st.randoms(use_true_random=False),
)
@settings(max_examples=10, deadline=None)
def test_adversarial_repetitive_text_stays_within_the_bound(
    vocabulary, turn_words, transcript_words, fragment_words, fragments, labelled, seed
):
    words = [seed.choice(vocabulary) for _ in range(transcript_words)]
    transcript = "".join(
        f"{SPEAKERS[(start // turn_words) % 2]}: {' '.join(words[start : start + turn_words])}\n"
        for start in range(0, transcript_words, turn_words)
    )
    start = seed.randrange(0, transcript_words - fragment_words)
    label = f"{SPEAKERS[(start // turn_words) % 2]}: " if labelled else ""
    # The fragment and the number of fragments cut down to what the bound admits.
    piece = words[start : start + fragment_words]
    while len(label + " ".join(piece)) > QUOTE_BOUND:
        piece.pop()
    fragment = label + " ".join(piece)
    while fragments > 1 and len(" ... ".join([fragment] * fragments)) > QUOTE_BOUND:
        fragments -= 1
    quote = " ... ".join([fragment] * fragments)

    check, seconds = timed(quote, transcript)

    assert seconds < BOUND_SECONDS, f"{seconds:.1f} s for {len(quote.split())} quote words"
    if fragments == 1 and not labelled and len(piece) >= 3:
        assert check.status is Status.VERIFIED  # a slice of the transcript, word for word


# Two-letter words: the most distinct two-word fragments fit in the bound.
SHORT_WORDS = ("sí", "no", "ya", "eh", "ah", "oh")


def distinct_fragments(transcript_words: int, *, seed: int = 3) -> tuple[str, str]:
    """A transcript of short words in random order (turns of 50 words, alternating speakers), and the
    quote with the most distinct two-word fragments the bound admits, every one of them occurring many
    times, led by a label that holds nowhere (a word no one says): the quote is unverified, so every
    distinct fragment is looked up."""
    rng = random.Random(seed)
    words = [rng.choice(SHORT_WORDS) for _ in range(transcript_words)]
    transcript = "".join(
        f"{SPEAKERS[(start // 50) % 2]}: {' '.join(words[start : start + 50])}\n" for start in range(0, transcript_words, 50)
    )
    pairs = [f"{first} {second}" for first, second in itertools.product(SHORT_WORDS, repeat=2)]
    quote = "AGENTE: uh uh"
    for pair in pairs:
        if len(quote + "…" + pair) > QUOTE_BOUND:
            break
        quote += "…" + pair
    return quote, transcript


def cpu_seconds(quote: str, transcript: str) -> float:
    """Best of two runs, CPU time (other sessions' load counts less), the transcript's preparation included."""
    assert len(quote) <= QUOTE_BOUND
    best = float("inf")
    for _ in range(2):
        evidence._prepare.cache_clear()
        started = time.process_time()
        verify_evidence(quote, transcript)
        best = min(best, time.process_time() - started)
    return best


def test_the_most_distinct_fragments_scale_linearly_with_the_transcript():
    quote, small_transcript = distinct_fragments(10_000)
    assert quote.count("…") >= 20  # the bound's worth of distinct fragments (24 here)
    assert verify_evidence(quote, small_transcript).status is Status.PARTIAL
    small = cpu_seconds(quote, small_transcript)
    large = cpu_seconds(*distinct_fragments(40_000))
    assert large < BOUND_SECONDS, f"{large:.1f} s"
    assert large < 8 * max(small, 0.005), f"4x the input cost {large / small:.1f}x the time ({small:.3f} s -> {large:.3f} s)"
