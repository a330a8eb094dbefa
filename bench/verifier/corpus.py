"""Labelled corpus for the verifier benchmark: transcripts, and quotes derived from them.

Every case says whether a verifier should accept it. Accepted quotes are cut from a turn by
construction (exact, noisy, wrapped, labelled, elided, ...); refused ones are built to be wrong
(a changed number or word, an added negation, a dropped or truncated word, the wrong speaker,
fragments reversed, a fabricated sentence, a paraphrase, a description of an absence, too few
words). A deliberately naive word search, independent of qa.evidence, rejects any refused quote
that happens to be literal after all, so the labels stay true.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from bench.verifier.calls import CALLS, FABRICATED, NEGATION, SLOTS, TEMPLATES, Call

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
ELLIPSES = ("...", "…", " [...] ", " (...) ", " … ", "... ")
WRAPPERS = (("“", "”"), ("«", "»"), ('"', '"'), ("‘", "’"))
NOISY_SEPARATORS = (" ", ", ", " — ", "! ", "? ", "\n", "; ", " - ", ",", " «", "» ")
RECORDING_WORDS = 9000  # a 60-minute call at ~150 words a minute


@dataclass(frozen=True)
class Case:
    kind: str
    source: str
    transcript: str
    evidence: str
    accept: bool


@dataclass(frozen=True)
class Word:
    text: str
    start: int  # offsets in the turn's text
    end: int


@dataclass(frozen=True)
class ViewTurn:
    label: str
    text: str
    words: tuple[Word, ...]


def strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def key(word: str) -> str:
    return strip_accents(word).casefold().replace("'", "")


def asr_style(text: str, rng: random.Random) -> str:
    """What an ASR engine writes: lower case, no accents, no punctuation, now and then a noise tag."""
    words = [word.replace("'", "") for word in WORD.findall(strip_accents(text).lower())]
    return " ".join(f"[noise] {word}" if rng.random() < 0.05 else word for word in words)


class View:
    """A call rendered as ``LABEL: text`` lines, plus the word-level view the derivations cut from."""

    def __init__(self, call: Call, rng: random.Random, asr: bool = False) -> None:
        self.call = call
        self.name = call.name + ("-asr" if asr else "")
        self.turns = [
            ViewTurn(call.labels[role], text, tuple(Word(m.group(), m.start(), m.end()) for m in WORD.finditer(text)))
            for role, text in call.turns
        ]
        self.text = "".join(self._line(turn, rng, asr) for turn in self.turns)
        self.keys = [key(word.text) for turn in self.turns for word in turn.words]
        self.speakers = [turn.label for turn in self.turns for _ in turn.words]
        self.vocabulary = sorted(set(self.keys))

    @staticmethod
    def _line(turn: ViewTurn, rng: random.Random, asr: bool) -> str:
        if asr:
            return f"{turn.label.lower()}: {asr_style(turn.text, rng)}\n"
        # Now and then a turn goes on on a continuation line, as exported transcripts do.
        text = turn.text.replace(". ", ".\n  ", 1) if rng.random() < 0.2 else turn.text
        return f"{turn.label}: {text}\n"

    # --- the naive reference search that keeps the labels of refused cases true

    def starts(self, keys: list[str], speaker: str | None = None) -> list[int]:
        size = len(keys)
        return [
            start
            for start in range(len(self.keys) - size + 1)
            if self.keys[start : start + size] == keys
            and (speaker is None or all(s == speaker for s in self.speakers[start : start + size]))
        ]

    def in_order(self, first: list[str], second: list[str]) -> bool:
        ends = [start + len(first) for start in self.starts(first)]
        return any(start >= min(ends) for start in self.starts(second)) if ends else False


@dataclass(frozen=True)
class Run:
    turn: int
    first: int  # word indices in the turn, inclusive
    last: int


def pick_run(rng: random.Random, view: View, min_words: int = 3, max_words: int = 12) -> Run | None:
    turns = [n for n, turn in enumerate(view.turns) if len(turn.words) >= min_words]
    if not turns:
        return None
    turn = rng.choice(turns)
    count = len(view.turns[turn].words)
    size = rng.randint(min_words, min(max_words, count))
    first = rng.randint(0, count - size)
    return Run(turn, first, first + size - 1)


def run_text(view: View, run: Run) -> str:
    """The run as written in the turn, punctuation included."""
    turn = view.turns[run.turn]
    return turn.text[turn.words[run.first].start : turn.words[run.last].end]


def run_words(view: View, run: Run) -> list[str]:
    return [word.text for word in view.turns[run.turn].words[run.first : run.last + 1]]


def noisy(rng: random.Random, words: list[str]) -> str:
    """Same words: re-cased, sometimes without accents, re-punctuated."""
    out = []
    for word in words:
        word = rng.choice((str.upper, str.lower, str.title, str))(word)
        out.append(strip_accents(word) if rng.random() < 0.5 else word)
        out.append(rng.choice(NOISY_SEPARATORS))
    return "".join(out[:-1])


def labelled(rng: random.Random, label: str) -> str:
    return rng.choice((str.upper, str.lower, str.title, str))(label) + rng.choice((": ", ":", " : ", ":\n"))


def two_runs(rng: random.Random, view: View) -> tuple[Run, Run] | None:
    """Two non-overlapping runs of >= 2 words, the first before the second."""
    first = pick_run(rng, view, min_words=2, max_words=8)
    second = pick_run(rng, view, min_words=2, max_words=8)
    if first is None or second is None:
        return None
    if (second.turn, second.first) < (first.turn, first.first):
        first, second = second, first
    if first.turn == second.turn and second.first <= first.last:
        return None
    return first, second


# --- accepted quotes


def exact(rng: random.Random, view: View) -> str | None:
    run = pick_run(rng, view)
    return run_text(view, run) if run else None


def noisy_copy(rng: random.Random, view: View) -> str | None:
    run = pick_run(rng, view)
    return noisy(rng, run_words(view, run)) if run else None


def wrapped(rng: random.Random, view: View) -> str | None:
    run = pick_run(rng, view)
    if run is None:
        return None
    opening, closing = rng.choice(WRAPPERS)
    return f"{opening}{run_text(view, run)}{rng.choice(('', '.', '...'))}{closing}"


def with_label(rng: random.Random, view: View) -> str | None:
    run = pick_run(rng, view)
    if run is None:
        return None
    body = run_text(view, run) if rng.random() < 0.5 else noisy(rng, run_words(view, run))
    return labelled(rng, view.turns[run.turn].label) + body


def elided(rng: random.Random, view: View) -> str | None:
    runs = two_runs(rng, view)
    if runs is None:
        return None
    parts = []
    for run in runs:
        label = labelled(rng, view.turns[run.turn].label) if rng.random() < 0.5 else ""
        parts.append(label + run_text(view, run))
    return rng.choice(ELLIPSES).join(parts)


def label_alone(rng: random.Random, view: View) -> str | None:
    run = pick_run(rng, view)
    if run is None:
        return None
    return labelled(rng, view.turns[run.turn].label).rstrip() + " " + rng.choice(ELLIPSES).strip() + " " + run_text(view, run)


def across_turns(rng: random.Random, view: View) -> str | None:
    """The end of one turn and the start of the next, with the next speaker's label between them."""
    turn = rng.randrange(len(view.turns) - 1)
    this, following = view.turns[turn], view.turns[turn + 1]
    if len(this.words) < 2 or len(following.words) < 2:
        return None
    tail = run_text(view, Run(turn, rng.randint(0, len(this.words) - 2), len(this.words) - 1))
    head = run_text(view, Run(turn + 1, 0, rng.randint(1, len(following.words) - 1)))
    prefix = labelled(rng, this.label) if rng.random() < 0.5 else ""
    return f"{prefix}{tail} {labelled(rng, following.label)}{head}"


# --- refused quotes


def _mutated(rng: random.Random, view: View, change: Callable[[random.Random, list[str]], list[str] | None]) -> str | None:
    """A run whose words ``change`` alters; refused only if the altered words exist nowhere."""
    run = pick_run(rng, view, min_words=4)
    if run is None:
        return None
    words = change(rng, run_words(view, run))
    if words is None or view.starts([key(word) for word in words]):
        return None
    return " ".join(words) + rng.choice(("", "."))


def changed_number(rng: random.Random, view: View) -> str | None:
    def change(rng: random.Random, words: list[str]) -> list[str] | None:
        numbers = [n for n, word in enumerate(words) if word.isdigit()]
        if not numbers:
            return None
        at = rng.choice(numbers)
        words[at] = str(int(words[at]) + rng.choice((1, 2, 10)))
        return words

    return _mutated(rng, view, change)


def replaced_word(rng: random.Random, view: View) -> str | None:
    def change(rng: random.Random, words: list[str]) -> list[str] | None:
        at = rng.randrange(len(words))
        words[at] = rng.choice([word for word in view.vocabulary if word != key(words[at])])
        return words

    return _mutated(rng, view, change)


def added_negation(rng: random.Random, view: View) -> str | None:
    def change(rng: random.Random, words: list[str]) -> list[str]:
        words.insert(rng.randrange(len(words)), NEGATION[view.call.language])
        return words

    return _mutated(rng, view, change)


def dropped_word(rng: random.Random, view: View) -> str | None:
    def change(rng: random.Random, words: list[str]) -> list[str]:
        del words[rng.randint(1, len(words) - 2)]  # an inner word: dropping an end leaves a true quote
        return words

    return _mutated(rng, view, change)


def truncated_word(rng: random.Random, view: View) -> str | None:
    def change(rng: random.Random, words: list[str]) -> list[str] | None:
        if len(words[-1]) < 2:
            return None
        words[-1] = words[-1][: rng.randint(1, len(words[-1]) - 1)]  # "18" -> "1": a substring, not the word
        return words

    return _mutated(rng, view, change)


def wrong_speaker(rng: random.Random, view: View) -> str | None:
    run = pick_run(rng, view)
    if run is None:
        return None
    others = sorted({turn.label for turn in view.turns} - {view.turns[run.turn].label})
    other = rng.choice(others)
    if view.starts([key(word) for word in run_words(view, run)], speaker=other):
        return None
    if rng.random() < 0.5:
        return labelled(rng, other) + run_text(view, run)
    return labelled(rng, other).rstrip() + " ... " + run_text(view, run)


def reversed_fragments(rng: random.Random, view: View) -> str | None:
    runs = two_runs(rng, view)
    if runs is None:
        return None
    first, second = ([key(word) for word in run_words(view, run)] for run in runs)
    if view.in_order(second, first):
        return None
    return rng.choice(ELLIPSES).join(run_text(view, run) for run in reversed(runs))


def _fabricated(rng: random.Random, view: View, tail: bool) -> str | None:
    run = pick_run(rng, view)
    if run is None:
        return None
    sentence = rng.choice(FABRICATED[view.call.language])
    real = run_text(view, run) + "."
    return f"{real} {sentence}" if tail else f"{sentence} {real}"


def fabricated_tail(rng: random.Random, view: View) -> str | None:
    return _fabricated(rng, view, tail=True)


def fabricated_head(rng: random.Random, view: View) -> str | None:
    return _fabricated(rng, view, tail=False)


def _unless_literal(view: View, quote: str) -> str | None:
    return None if view.starts([key(word) for word in WORD.findall(quote)]) else quote


def paraphrase(rng: random.Random, view: View) -> str | None:
    return _unless_literal(view, rng.choice(view.call.paraphrases))


def absence(rng: random.Random, view: View) -> str | None:
    return _unless_literal(view, rng.choice(view.call.absences))


def too_short(rng: random.Random, view: View) -> str | None:
    """Real words, too few to locate: one word, two words, or a one-word fragment after an ellipsis."""
    shape = rng.choice(("one", "two", "tail"))
    run = pick_run(rng, view, min_words=2, max_words=2 if shape != "tail" else 6)
    if run is None:
        return None
    words = run_words(view, run)
    if shape == "one":
        return words[0] + "."
    if shape == "two":
        return " ".join(words)
    return f"{run_text(view, run)} ... {rng.choice(view.vocabulary)}"


ACCEPTED: dict[str, Callable[[random.Random, View], str | None]] = {
    "exact": exact,
    "noisy": noisy_copy,
    "wrapped": wrapped,
    "labelled": with_label,
    "elided": elided,
    "label_alone": label_alone,
    "across_turns": across_turns,
}
REFUSED: dict[str, Callable[[random.Random, View], str | None]] = {
    "changed_number": changed_number,
    "replaced_word": replaced_word,
    "added_negation": added_negation,
    "dropped_word": dropped_word,
    "truncated_word": truncated_word,
    "wrong_speaker": wrong_speaker,
    "reversed": reversed_fragments,
    "fabricated_tail": fabricated_tail,
    "fabricated_head": fabricated_head,
    "paraphrase": paraphrase,
    "absence": absence,
    "too_short": too_short,
}


def derive(rng: random.Random, view: View, kind: str, tries: int = 50) -> Case | None:
    """One case of ``kind`` from ``view``, or None when the view offers none (e.g. no numbers)."""
    accept = kind in ACCEPTED
    make = ACCEPTED[kind] if accept else REFUSED[kind]
    for _ in range(tries):
        evidence = make(rng, view)
        if evidence is not None:
            return Case(kind, view.name, view.text, evidence, accept)
    return None


def call_corpus(seed: int = 2026, per_kind: int = 6) -> list[Case]:
    """``per_kind`` cases of every kind from each hand-written call, clean and as ASR output.

    Quotes are always cut from the clean text: against the ASR rendering, they carry accents and
    punctuation the transcript lacks, as a judge's corrected quote does.
    """
    rng = random.Random(seed)
    cases = []
    for call in CALLS:
        for asr in (False, True):
            view = View(call, rng, asr=asr)
            for kind in [*ACCEPTED, *REFUSED]:
                cases += [case for _ in range(per_kind) if (case := derive(rng, view, kind))]
    return cases


def _fill(rng: random.Random, template: str, language: str) -> str:
    hour = rng.randint(8, 18)
    small = rng.randint(2, 8)
    values = {
        "num": str(rng.randint(1000, 999999)),
        "amount": f"{rng.randint(1, 99)}{'.' if language == 'es' else ','}{rng.randint(0, 999):03d}",
        "hour": str(hour),
        "hour2": str(hour + rng.randint(1, 4)),
        "small": str(small),
        "small2": str(small + rng.randint(1, 5)),
        **{slot: rng.choice(choices) for slot, choices in SLOTS[language].items()},
    }
    return template.format(**values)


def long_call(rng: random.Random, language: str, number: int) -> Call:
    """A ~60-minute call: the language's real turns and filled templates, drawn at random."""
    calls = [call for call in CALLS if call.language == language]
    real_turns = [turn for call in calls for turn in call.turns]
    turns: list[tuple[str, str]] = []
    words = 0
    while words < RECORDING_WORDS:
        if rng.random() < 0.5:
            turn = rng.choice(real_turns)
        else:
            role, template = rng.choice(TEMPLATES[language])
            turn = (role, _fill(rng, template, language))
        turns.append(turn)
        words += len(WORD.findall(turn[1]))
    return Call(
        name=f"{language}-60min-{number}",
        language=language,
        labels=calls[0].labels,
        turns=tuple(turns),
        paraphrases=tuple(p for call in calls for p in call.paraphrases),
        absences=tuple(a for call in calls for a in call.absences),
    )


@dataclass(frozen=True)
class Recording:
    transcript: str
    words: int  # spoken words, labels not counted
    cases: list[Case]


def recordings(count: int, seed: int = 60, quotes: int = 12) -> list[Recording]:
    """``count`` distinct 60-minute transcripts (Spanish and English, clean and ASR-style), each
    with ``quotes`` cases, half of them to accept."""
    rng = random.Random(seed)
    out = []
    for number in range(count):
        view = View(long_call(rng, ("es", "en")[number % 2], number), rng, asr=number % 4 >= 2)
        kinds = rng.sample(list(ACCEPTED), quotes // 2) + rng.sample(list(REFUSED), quotes - quotes // 2)
        cases = [case for kind in kinds if (case := derive(rng, view, kind))]
        out.append(Recording(view.text, len(view.keys), cases))
    return out
