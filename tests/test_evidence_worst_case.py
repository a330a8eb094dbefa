"""The verifier's worst case: repetitive transcripts and quotes (one word said thousands of times,
a phrase repeated, a quote of a thousand fragments) cost about a pass over the quote plus the
transcript, not their product. The issue's probe: a 4,000-word quote against a 40,000-word
transcript took 4.95 s, a 1.9 MB quote over 7 minutes; before this change these cases took from
11 s to nearly 5 minutes each on the shared test machine.

The bounds are generous (measured well under a second each with other work on the 2 cores):
they catch a return to quadratic time, not a slow machine. Many distinct frequent fragments, which
each cost the previous verifier a pass over the transcript (n x fragments), are also timed at two
sizes: four times the quote and the transcript must cost about four times as much (measured 3-5x),
not sixteen (the previous verifier: 4.2 s at the larger size, about 16x). Plain pytest, no Django.
"""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qa import evidence
from qa.evidence import Status, verify_evidence

BOUND_SECONDS = 5.0
SPEAKERS = ("AGENTE", "CLIENTE")


def timed(quote: str, transcript: str):
    started = time.perf_counter()
    check = verify_evidence(quote, transcript)
    return check, time.perf_counter() - started


def turns(words_per_turn: int, turns_count: int, phrase: str) -> str:
    return "".join(f"{SPEAKERS[number % 2]}: {' '.join([phrase] * words_per_turn)}\n" for number in range(turns_count))


CASES = {
    # 40,000 times the same word in one turn; the quote is 4,000 of them.
    "one word everywhere": ("sí " * 4000, "AGENTE: " + "sí " * 40_000 + "\n", Status.VERIFIED),
    # The same, in alternating turns of 100: the quote's label holds nowhere for 4,000 words.
    "a label that never holds": ("AGENTE: " + "sí " * 4000, turns(100, 400, "sí"), Status.WRONG_SPEAKER),
    # A repeated phrase, quoted a thousand times over with one word that is not there.
    "a near miss": ("uno dos tres " * 1300 + "cuatro", "AGENTE: " + "uno dos tres " * 13_000 + "\n", Status.PARAPHRASE),
    # A thousand fragments, each found everywhere.
    "a thousand fragments": (" ... ".join(["sí sí"] * 1000), "AGENTE: " + "sí " * 40_000 + "\n", Status.VERIFIED),
    # Labelled fragments over turns of one word each.
    "labels at every word": (
        " ... ".join(["AGENTE: sí CLIENTE: sí"] * 500),
        turns(1, 40_000, "sí"),
        Status.VERIFIED,
    ),
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
    fragment_words=st.integers(min_value=3, max_value=3_000),
    fragments=st.integers(min_value=1, max_value=300),
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
    fragment_words = min(fragment_words, max(3, 4000 // fragments))  # quotes up to about 4,000 words
    start = seed.randrange(0, transcript_words - fragment_words)
    piece = " ".join(words[start : start + fragment_words])
    label = f"{SPEAKERS[(start // turn_words) % 2]}: " if labelled else ""
    quote = " ... ".join([label + piece] * fragments)

    check, seconds = timed(quote, transcript)

    assert seconds < BOUND_SECONDS, f"{seconds:.1f} s for {len(quote.split())} quote words"
    if fragments == 1 and not labelled:
        assert check.status is Status.VERIFIED  # a slice of the transcript, word for word


def distinct_fragments(transcript_words: int, fragments: int, *, labelled: bool, seed: int = 3) -> tuple[str, str]:
    """A transcript of two words in random order (turns of 50 words, alternating speakers), and a quote
    of that many distinct 12-word fragments cut from it: every fragment occurs, most many times."""
    rng = random.Random(seed)
    words = [rng.choice(("sí", "no")) for _ in range(transcript_words)]
    transcript = "".join(
        f"{SPEAKERS[(start // 50) % 2]}: {' '.join(words[start : start + 50])}\n" for start in range(0, transcript_words, 50)
    )
    chosen: dict[str, str] = {}
    while len(chosen) < fragments:
        start = rng.randrange(transcript_words - 12)
        label = f"{SPEAKERS[(start // 50) % 2]}: " if labelled else ""
        chosen.setdefault(" ".join(words[start : start + 12]), label)
    return " ... ".join(label + fragment for fragment, label in chosen.items()), transcript


def cpu_seconds(quote: str, transcript: str) -> float:
    """Best of two runs, CPU time (other sessions' load counts less), the transcript's preparation included."""
    best = float("inf")
    for _ in range(2):
        evidence._prepare.cache_clear()
        started = time.process_time()
        verify_evidence(quote, transcript)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("labelled", [False, True], ids=["unlabelled", "labelled"])
def test_many_distinct_frequent_fragments_scale_linearly(labelled):
    small = cpu_seconds(*distinct_fragments(10_000, 250, labelled=labelled))
    large = cpu_seconds(*distinct_fragments(40_000, 1_000, labelled=labelled))
    assert large < BOUND_SECONDS, f"{large:.1f} s"
    assert large < 8 * max(small, 0.005), f"4x the input cost {large / small:.1f}x the time ({small:.3f} s -> {large:.3f} s)"
