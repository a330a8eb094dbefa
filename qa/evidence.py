"""Check that a judge's evidence quote is literally in the call transcript.

Pure module (no Django, no database). ``verify_evidence(evidence, transcript)`` returns an
``EvidenceCheck``; store ``check.to_dict()`` (it carries ``VERIFIER_VERSION``) with the score.
``verify_references(references, transcript)`` does the same for evidence given by turn number
(reference mode, below).

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

Whose words (``subject``)
    ``verify_evidence(..., subject="agent")`` (or ``"customer"``) also requires the quote to include
    words of a turn of that speaker: a quote none of whose words lies in such a turn is
    ``wrong_subject``. A quote that spans the customer's words and the agent's answer verifies for
    either. A label's role comes from its words (``SPEAKER_ROLES``: ``AGENTE``, ``agent``, ``operador``...
    are the agent; ``CLIENTE``, ``caller``, ``usuaria``... the customer); a turn whose label names
    neither (``Speaker 2``, ``UNKNOWN`` from mono audio without diarization) could be either, so its
    words count for any subject: with no role known at all, the subject is not checked. ``"any"``
    (the default) checks no subject.

Too short
    A fragment of one word, fewer than 3 words in all (labels not counted), or a quote of only labels,
    ellipses or punctuation cannot be located reliably and is never verified.

Status precedence (first that applies wins)
    ``empty`` (None or blank) > ``too_short`` > ``verified`` > ``wrong_subject`` (the quote is there as
    given, but only in turns of someone other than the subject) > ``wrong_speaker`` (a fragment's words
    exist, but only where the quote's labels don't hold) > ``out_of_order`` (every fragment found, but
    not in the given order without overlap) > ``partial`` (some fragments found, not all) >
    ``paraphrase`` (no fragment found; the closest passage has similarity >= ``PARAPHRASE_THRESHOLD``)
    > ``not_found``.

Evidence by reference (``verify_references``)
    The judge cites turns by number (1-based positions in ``parse_turns(transcript)``), each with
    some of that turn's exact words or none (the whole turn). A number that is not a turn of the
    transcript is ``bad_reference``. Each reference's words are matched as a quote is (same words,
    fragments and labels), but only inside the turn it cites: words that are only in another turn are
    ``wrong_turn`` (their spans show where they are); words not even there get the quote statuses
    above, computed within the cited turn (``closest`` is that turn's nearest passage). No minimum
    length: the turn locates the words. With ``subject``, at least one cited turn must be that
    speaker's (or of no known role), else ``wrong_subject``. Precedence: ``empty`` (no reference, or a
    whole turn without words) > ``bad_reference`` > ``too_short`` (words that hold no word) > the
    first unverified reference's status > ``wrong_subject`` > ``verified``. ``references_text``
    writes references as the text a supervisor reads (and ``references_parse`` reads it back).

Spans and closest
    ``spans`` has one ``(start, end)`` per fragment found, offsets into the transcript as given, so
    ``transcript[start:end]`` is the quoted passage. For an unverified quote they show what was found
    (possibly with the wrong speaker or order) and must not be highlighted as evidence. ``closest`` is
    computed only when a fragment is missing: the passage nearest to the first missing fragment (its
    first 100 words), found among windows seeded by the fragment's rarest words, stretched over the
    fragment's unmatched ends within the same turns, and scored with difflib's ratio on words. It is
    None when the fragment shares no word with the transcript.

Cost
    A transcript is prepared once (kept in a bounded LRU cache keyed by the transcript string, so the
    quotes of one call share it) in about one pass of C-level string operations: see ``_prepare``.
    Checking a quote within the answer schema's bound (``qa.answer``) costs a few passes over the
    transcript whatever the text repeats; past it, about one pass per distinct fragment: see
    ``_locate`` for the algorithm and why.
"""

from __future__ import annotations

import bisect
import codecs
import difflib
import functools
import itertools
import math
import re
import unicodedata
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from operator import add, methodcaller
from typing import Any

VERIFIER_VERSION = "2026.12.2"  # 2026.12.2: evidence by turn reference (bad_reference, wrong_turn)

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

# A turn label: 1-3 words, the first starting with a letter, before the line's first colon
# ("AGENTE:", "Speaker 2:"); "10:30" is not a label.
_LABEL_TEXT = r"([^\W\d_][^\W_]*(?:[ \t]+[^\W_]+){0,2})[ \t]*:"
_FIRST_LABEL = re.compile(r"[ \t]*" + _LABEL_TEXT)  # on the transcript's first line
# On the other lines. Starting with a literal newline lets the regex engine jump from line to line
# instead of trying a match at every character, as a multiline "^" does.
_LINE_LABEL = re.compile(r"\n[ \t]*" + _LABEL_TEXT)
# The same, capturing the whole label and the label's text, for ``re.split``.
_LINE_LABEL_PARTS = re.compile(r"(\n[ \t]*" + _LABEL_TEXT + ")")
# Letters and digits, with the combining marks of decomposed (NFD) text; written as an unrolled loop
# because a per-character alternation makes tokenizing a long transcript several times slower.
_LETTERS = r"[^\W_]+(?:[\u0300-\u036f]+[^\W_]*)*"
# Words are joined across inner apostrophes.
_APOSTROPHE_CHARS = "'’ʼ´"
_WORD = rf"{_LETTERS}(?:[{_APOSTROPHE_CHARS}]{_LETTERS})*"
_TOKEN = re.compile(_WORD)
_QUOTE_TOKEN = re.compile(rf"({_WORD})|(:)")
# Bracketed ASR tags ([noise], <unk>): not words, so they are blanked out before tokenizing.
_TAG = re.compile(r"\[[^\]\n]*\]|<[^>\n]*>")
_ELLIPSIS = re.compile(r"[\[(]\s*(?:\.{3,}|…)\s*[\])]|\.{3,}|…")
_APOSTROPHES = str.maketrans("", "", _APOSTROPHE_CHARS)

# The prepared transcript's searchable form joins the normalised words with this separator, which no
# word contains (it is not a word character, and normalising a word never produces it).
_SEP = "\n"


# Speaker labels (normalised: lower case, no accents) and the role they name. The labels the recognizer
# writes (qa.transcription.SPEAKER_LABELS: AGENTE/CLIENTE, AGENT/CUSTOMER) and those of common exports.
AGENT = "agent"
CUSTOMER = "customer"
ANY = "any"
SPEAKER_ROLES: dict[str, str] = {
    **dict.fromkeys(
        ("agent", "agente", "operator", "operador", "operadora", "asesor", "asesora", "advisor", "representative",
         "representante", "ejecutivo", "ejecutiva", "rep"),
        AGENT,
    ),
    **dict.fromkeys(
        ("customer", "cliente", "caller", "client", "usuario", "usuaria", "user", "llamante", "titular"), CUSTOMER
    ),
}  # fmt: skip
SUBJECTS = (AGENT, CUSTOMER, ANY)


class Status(StrEnum):
    VERIFIED = "verified"
    EMPTY = "empty"
    TOO_SHORT = "too_short"
    WRONG_SUBJECT = "wrong_subject"
    WRONG_SPEAKER = "wrong_speaker"
    OUT_OF_ORDER = "out_of_order"
    PARTIAL = "partial"
    PARAPHRASE = "paraphrase"
    NOT_FOUND = "not_found"
    # Reference mode only (``verify_references``).
    BAD_REFERENCE = "bad_reference"
    WRONG_TURN = "wrong_turn"


@dataclass(frozen=True)
class Turn:
    """One speaker turn; ``transcript[start:end] == text`` (the label is not part of it)."""

    speaker: str | None
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Reference:
    """A cited turn: ``turn`` is its 1-based position in ``parse_turns(transcript)``; ``words`` some of
    its exact words, blank for the whole turn."""

    turn: int
    words: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"turn": self.turn, "words": self.words}


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
class _Check:
    """A labelled segment's condition, in characters from the start of the fragment's first word."""

    label: str
    start: int
    end: int
    opens_turn: bool  # a label inside a fragment must stand where a turn opens


@dataclass(frozen=True)
class _Fragment:
    segments: tuple[_Segment, ...]

    @functools.cached_property
    def words(self) -> tuple[str, ...]:
        return tuple(word for segment in self.segments for word in segment.words)

    @functools.cached_property
    def needle(self) -> str:
        """The words as they stand in ``_Prepared.plain``, separators around them included."""
        return _SEP + _SEP.join(self.words) + _SEP

    @functools.cached_property
    def checks(self) -> tuple[_Check, ...]:
        checks = []
        start = 0
        for number, segment in enumerate(self.segments):
            end = start + len(_SEP.join(segment.words))
            if segment.label is not None:
                checks.append(_Check(segment.label, start, end, opens_turn=number > 0))
            start = end + len(_SEP)
        return tuple(checks)

@dataclass(frozen=True, eq=False)
class _Prepared:
    """A transcript ready for searching.

    Its words, normalised, stand in one string ``plain`` ("\\n" + words joined by "\\n" + "\\n"), so
    that a fragment is found by ``str.find`` of its own "\\nw1\\nw2\\n" (C speed, and CPython's search is
    linear in the text scanned for long needles, at most proportional to it for short ones). Positions
    are character offsets into ``plain``; what is needed about a position (its turn, speaker, run) is
    kept per turn, not per word, and looked up by bisection. Character offsets in the transcript are
    found again only for the few words that end up in a span, by re-tokenizing their turn.
    """

    transcript: str
    plain: str
    turn_offsets: list[int]  # offset in ``plain`` of the first word of each turn that has words
    turn_starts: list[int]  # position (word number) of the same words
    turn_ranges: list[tuple[int, int]]  # character range of each of those turns in the transcript
    speakers: list[str | None]  # normalised label of each of those turns
    run_ends: list[int]  # per turn: offset in ``plain`` where its speaker's run of words ends
    labels: frozenset[str]  # normalised speaker labels

    @functools.cached_property
    def words(self) -> list[str]:
        return self.plain[1:-1].split(_SEP) if len(self.plain) > 1 else []

    @functools.cached_property
    def index(self) -> dict[str, list[int]]:
        """word -> ascending positions; only an unverified quote's closest passage needs it."""
        index: defaultdict[str, list[int]] = defaultdict(list)
        # Appending each position to its word's list through map: no Python bytecode per word.
        deque(map(list.append, map(index.__getitem__, self.words), itertools.count()), maxlen=0)
        return dict(index)

    def turn_at(self, offset: int) -> int:
        return bisect.bisect_right(self.turn_offsets, offset) - 1

    @functools.cached_property
    def _subject_turns(self) -> dict[str, list[int]]:
        roles = [SPEAKER_ROLES.get(speaker or "") for speaker in self.speakers]
        return {subject: [turn for turn, role in enumerate(roles) if role in (subject, None)] for subject in (AGENT, CUSTOMER)}

    def subject_turns(self, subject: str) -> list[int] | None:
        """The turns (ascending) whose words may be ``subject``'s: its own and those of no known role;
        None when every turn qualifies (nothing to check)."""
        turns = self._subject_turns[subject]
        return None if len(turns) == len(self.speakers) else turns


def verify_evidence(evidence: str | None, transcript: str, subject: str = ANY) -> EvidenceCheck:
    """Check one evidence quote against a transcript of ``SPEAKER: text`` lines; with ``subject``
    (``agent`` or ``customer``), also that it includes words of that speaker."""
    if evidence is not None and not isinstance(evidence, str):
        raise TypeError(f"evidence must be str or None, not {type(evidence).__name__}")
    if not isinstance(transcript, str):
        raise TypeError(f"transcript must be str, not {type(transcript).__name__}")
    if subject not in SUBJECTS:
        raise ValueError(f"subject must be one of {', '.join(SUBJECTS)}, not {subject!r}")
    if evidence is None or not evidence.strip():
        return EvidenceCheck(Status.EMPTY)
    prepared = _prepare(transcript)
    fragments = _parse_quote(evidence, prepared.labels)
    if _too_short(fragments):
        return EvidenceCheck(Status.TOO_SHORT)
    return _locate(fragments, prepared, subject)


def verify_references(references: Sequence[Reference], transcript: str, subject: str = ANY) -> EvidenceCheck:
    """Check evidence given by turn number: each reference's words (or its whole turn) in the turn it
    cites, and, with ``subject``, that some cited turn is that speaker's. See the module's docstring."""
    if isinstance(references, str) or not all(isinstance(reference, Reference) for reference in references):
        raise TypeError("references must be a sequence of Reference")
    if not isinstance(transcript, str):
        raise TypeError(f"transcript must be str, not {type(transcript).__name__}")
    if subject not in SUBJECTS:
        raise ValueError(f"subject must be one of {', '.join(SUBJECTS)}, not {subject!r}")
    if not references:
        return EvidenceCheck(Status.EMPTY)
    turns = parse_turns(transcript)
    if any(not 1 <= reference.turn <= len(turns) for reference in references):
        return EvidenceCheck(Status.BAD_REFERENCE)
    prepared = _prepare(transcript)
    checks = [_check_reference(reference.words, turns[reference.turn - 1], prepared) for reference in references]
    spans = tuple(span for check in checks for span in check.spans)
    for status in (Status.EMPTY, Status.TOO_SHORT):
        if any(check.status is status for check in checks):
            return EvidenceCheck(status, spans)
    if failed := next((check for check in checks if not check.verified), None):
        return EvidenceCheck(failed.status, spans, failed.closest)
    if subject == ANY or prepared.subject_turns(subject) is None:
        return EvidenceCheck(Status.VERIFIED, spans)
    roles = {SPEAKER_ROLES.get(_label_key(turns[reference.turn - 1].speaker or "")) for reference in references}
    return EvidenceCheck(Status.VERIFIED if roles & {subject, None} else Status.WRONG_SUBJECT, spans)


def _check_reference(words: str, turn: Turn, prepared: _Prepared) -> EvidenceCheck:
    """One reference's words (blank: the whole turn) within ``turn``, with spans in the transcript."""
    number = _prepared_turn(turn, prepared)
    if not words.strip():
        # A turn of only ASR tags ("CLIENTE: [noise]") has no words to show.
        return EvidenceCheck(Status.VERIFIED, ((turn.start, turn.end),)) if number is not None else EvidenceCheck(Status.EMPTY)
    fragments = _parse_quote(words, prepared.labels)
    if not fragments:
        return EvidenceCheck(Status.TOO_SHORT)
    if number is not None:
        low = prepared.turn_offsets[number]
        high = prepared.turn_offsets[number + 1] if number + 1 < len(prepared.turn_offsets) else len(prepared.plain)
        # The greedy chain ends every fragment as early as possible from the turn's first word: if it
        # ends past the turn, no chain lies inside it.
        chain = _chain(fragments, prepared, low)
        if chain is not None and chain[-1] + len(fragments[-1].needle) - 1 <= high:
            return EvidenceCheck(Status.VERIFIED, _spans(list(zip(fragments, chain)), prepared))
    if (elsewhere := _chain(fragments, prepared)) is not None:
        return EvidenceCheck(Status.WRONG_TURN, _spans(list(zip(fragments, elsewhere)), prepared))
    # Not in the transcript as given: what the turn itself holds, as for a quote of that turn alone
    # (from its label's line, so the turn's text is read as it is in the transcript).
    opening = prepared.transcript.rfind("\n", 0, prepared.turn_ranges[number][0] if number is not None else turn.start) + 1
    alone = _prepare(prepared.transcript[opening : turn.end])
    check = _locate(_parse_quote(words, alone.labels), alone)
    closest = check.closest
    if closest is not None:
        closest = Closest(closest.text, closest.start + opening, closest.end + opening, closest.similarity)
    status = Status.NOT_FOUND if check.verified else check.status  # cannot verify: it is not in the turn
    return EvidenceCheck(status, tuple((start + opening, end + opening) for start, end in check.spans), closest)


def _prepared_turn(turn: Turn, prepared: _Prepared) -> int | None:
    """The index in ``prepared``'s turns (those with words) of a turn of ``parse_turns``; None without words."""
    number = bisect.bisect_right(prepared.turn_ranges, (turn.start, math.inf)) - 1
    if number >= 0 and prepared.turn_ranges[number][0] <= turn.start < prepared.turn_ranges[number][1]:
        return number
    return None


# How references read as text: one line per reference, "[12] “words”", or "[12] " and the turn's whole
# text (whitespace collapsed) when no words are given, or "[12]" alone for a turn the transcript lacks.
_REFERENCE_LINE = re.compile(r"\[(\d{1,9})\](?: (.*))?")
_WORDS_OPEN, _WORDS_CLOSE = "“", "”"


def references_text(references: Sequence[Reference], transcript: str) -> str:
    """What a supervisor reads for references to ``transcript``'s turns: the cited words, each line
    headed by its turn number; for a whole turn, that turn's words."""
    turns = parse_turns(transcript)
    lines = []
    for reference in references:
        words = " ".join(reference.words.split())
        if words:
            lines.append(f"[{reference.turn}] {_WORDS_OPEN}{words}{_WORDS_CLOSE}")
        elif 1 <= reference.turn <= len(turns):
            lines.append(f"[{reference.turn}] {' '.join(turns[reference.turn - 1].text.split())}")
        else:
            lines.append(f"[{reference.turn}]")
    return "\n".join(lines)


def references_parse(text: str) -> list[Reference] | None:
    """The references ``references_text`` wrote, or None when ``text`` is not such a text (a quote)."""
    references = []
    for line in text.split("\n") if text else ():
        match = _REFERENCE_LINE.fullmatch(line)
        if match is None:
            return None
        rest = match.group(2) or ""
        quoted = len(rest) >= 2 and rest.startswith(_WORDS_OPEN) and rest.endswith(_WORDS_CLOSE)
        references.append(Reference(int(match.group(1)), rest[1:-1] if quoted else ""))
    return references or None


def parse_turns(transcript: str) -> list[Turn]:
    """Split ``SPEAKER: text`` lines (ending in \\n or \\r\\n) into turns.

    A line without a label continues the previous turn; text before the first label is a turn
    without speaker; blank turns are left out.
    """
    return [Turn(speaker, transcript[start:end], start, end) for speaker, start, end in _turn_ranges(transcript)]


def _turn_ranges(transcript: str) -> list[tuple[str | None, int, int]]:
    """(label as written, start, end) of each non-blank turn's text, label excluded."""
    ranges: list[tuple[str | None, int, int]] = []
    for speaker, start, end in _bodies(transcript):
        text = transcript[start:end]
        stripped = text.strip()
        if stripped:
            first = start + len(text) - len(text.lstrip())
            ranges.append((" ".join(speaker.split()) if speaker else None, first, first + len(stripped)))
    return ranges


def _bodies(transcript: str) -> Iterator[tuple[str | None, int, int]]:
    """(label as written, start, end) of the text after each label up to the next one, blank or not;
    the text before the first label comes first, without label."""
    speaker: str | None = None
    body = 0
    first = _FIRST_LABEL.match(transcript)
    if first:
        speaker, body = first.group(1), first.end()
    for label in _LINE_LABEL.finditer(transcript, body):
        yield speaker, body, label.start()
        speaker, body = label.group(1), label.end()
    yield speaker, body, len(transcript)


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


# --- Normalising a whole transcript at C speed
#
# ``_normalize_word`` (casefold, NFKD, drop combining marks and apostrophes) works character by
# character, so for a text in Latin-1 (Spanish, English, most Western European text, once typographic
# punctuation is set aside) it is a 256-entry byte table: each letter or digit to its normalised byte,
# every other character to a space, the apostrophe kept. ``bytes.translate`` applies it to the whole
# transcript; deleting apostrophes and splitting on spaces then gives exactly ``_TOKEN``'s words,
# normalised. The few characters for which this would not hold send the transcript down the general
# path (``_TOKEN`` plus ``_normalize_word`` per word): a Latin-1 letter that normalises to something
# else than one Latin-1 character ("ß" -> "ss", "µ" -> "μ", "½"), the acute accent used as an
# apostrophe (NFKD turns it into a space and a mark), two apostrophes in a row (``_TOKEN`` joins words
# across one only), and outside Latin-1 any letter, digit or combining mark.

_BODY_BREAK = "\x1d"  # joins the turns' texts to normalise them in one go; kept by the table
_SLOW = 1  # table value: this byte needs the general path (an input \x01 is not a word and maps to a space)


def _latin1_table() -> bytes:
    table = bytearray(b" " * 256)
    for code in range(256):
        char = chr(code)
        if char in ("'", _BODY_BREAK):
            table[code] = code
        elif char.isalnum():
            folded = _normalize_word(char)
            table[code] = ord(folded) if len(folded) == 1 and ord(folded) < 256 else _SLOW
        elif char in _APOSTROPHE_CHARS:
            table[code] = _SLOW
    return bytes(table)


_LATIN1_TABLE = _latin1_table()


class _NotLatin1(ValueError):
    pass


def _latin1_replacement(error: UnicodeError) -> tuple[str, int]:
    """Encoding error handler: typographic punctuation outside Latin-1 stands for what it separates."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    replacement = []
    for char in error.object[error.start : error.end]:
        if char == "’":
            replacement.append("'")
        elif char.isalnum() or unicodedata.combining(char) or char in _APOSTROPHE_CHARS:
            raise _NotLatin1(char)
        else:
            replacement.append(" ")
    return "".join(replacement), error.end


_LATIN1_ERRORS = "qa.evidence.latin1"
codecs.register_error(_LATIN1_ERRORS, _latin1_replacement)


def _normalized(bodies: list[str]) -> tuple[str, list[str]]:
    """The words of all bodies, normalised: as ``_Prepared.plain``, and per body framed by separators
    ("\\nw1\\nw2\\n", or "\\n" for a body without words)."""
    # Newlines around the break: an ASR tag never spans a line, so it must not span two bodies.
    joined = f"\n{_BODY_BREAK}\n".join(bodies)
    if joined.count(_BODY_BREAK) != len(bodies) - 1:  # the transcript has its own (a separator, not a word)
        joined = f"\n{_BODY_BREAK}\n".join(body.replace(_BODY_BREAK, " ") for body in bodies)
    if "[" in joined or "<" in joined:
        joined = _TAG.sub(" ", joined)
    try:
        table = joined.encode("latin-1", _LATIN1_ERRORS).translate(_LATIN1_TABLE)
    except _NotLatin1:
        table = None
    if table is not None and _SLOW not in table and b"''" not in table:
        # The breaks stand alone between spaces, so they come out of split() as words of their own.
        tokens = table.replace(b"'", b"").split()
        stream = _SEP + b"\n".join(tokens).decode("latin-1") + _SEP if tokens else _SEP
    else:
        words: list[str] = []
        for body in joined.split(_BODY_BREAK):
            words += map(_normalize_word, _TOKEN.findall(body))
            words.append(_BODY_BREAK)
        del words[-1]
        stream = _SEP + _SEP.join(words) + _SEP if words else _SEP  # a word may normalise to "" ("ʼ")
    return stream.replace(_SEP + _BODY_BREAK, ""), stream.split(_BODY_BREAK)


@functools.lru_cache(maxsize=_PREPARED_CACHE_SIZE)
def _prepare(transcript: str) -> _Prepared:
    # Hot path. Per character, only C-level string operations (re.split, bytes.translate, split, join);
    # per turn, C-level iteration (map, accumulate, compress) and one short loop; per word, nothing in
    # Python (the word list and its index are built later, only if a quote needs them).
    first = _FIRST_LABEL.match(transcript)
    body = first.end() if first else 0
    parts = _LINE_LABEL_PARTS.split(transcript[body:]) if body else _LINE_LABEL_PARTS.split(transcript)
    bodies = parts[0::3]  # re.split gives: body, whole label, label text, body, ...
    labels = [first.group(1) if first else None, *parts[2::3]]
    del parts[2::3]
    starts = list(itertools.accumulate(map(len, parts), initial=body))[0::2]
    plain, pieces = _normalized(bodies)

    has_words = [len(piece) > 1 for piece in pieces]
    keys_by_label = {label: _label_key(label) for label in set(labels) if label}
    keys = list(map(keys_by_label.get, labels))
    speakers = list(itertools.compress(keys, has_words))
    turn_ranges = list(itertools.compress(zip(starts, map(add, starts, map(len, bodies))), has_words))
    # A label counts when it has a non-blank turn, with words or not ("CLIENTE: [noise]").
    known = set(filter(None, speakers))
    if unseen := set(filter(None, keys_by_label.values())) - known:
        known.update(key for key, text in zip(keys, bodies) if key in unseen and not text.isspace() and text)

    kept = list(itertools.compress(pieces, has_words))
    turn_offsets = list(itertools.accumulate(map(add, map(len, kept), itertools.repeat(-1)), initial=1))
    turn_starts = list(itertools.accumulate(map(add, map(methodcaller("count", _SEP), kept), itertools.repeat(-1)), initial=0))
    run_ends = [offset - 1 for offset in turn_offsets[1:]]  # the separator after each turn's last word...
    for turn in range(len(kept) - 2, -1, -1):  # ... or after its run's, the turns of one speaker in a row
        if speakers[turn] == speakers[turn + 1]:
            run_ends[turn] = run_ends[turn + 1]
    return _Prepared(
        transcript=transcript,
        plain=plain,
        turn_offsets=turn_offsets[:-1],
        turn_starts=turn_starts[:-1],
        turn_ranges=turn_ranges,
        speakers=speakers,
        run_ends=run_ends,
        labels=frozenset(known),
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


# --- Locating a quote
#
# A judge's quote is bounded by the answer schema, and every answer is checked against the bound
# (``qa.answer``: at most 160 characters, so at most about 40 fragments: "a b…" is four). Within it,
# checking a quote costs a small constant number of passes over the transcript (n words), whatever
# the text repeats:
#
# 1. A verified quote is an ordered chain: each fragment at its first attributed occurrence at or after
#    the end of the previous one (greedy is enough for existence). Fragment k is searched from where
#    fragment k-1 ended, so the stretches of ``plain`` that the chain scans are disjoint: one pass over
#    the transcript in all, plus each needle once (the quote).
# 2. An occurrence whose labels do not hold is not retried one word later: ``_next_possible`` says
#    where the next candidate can start at the earliest (past the run of the wrong or too-short speaker,
#    or at the next turn for an inner label), so each retry crosses a run or turn boundary and costs a
#    search of the fragment. The one case beyond a pass is a long fragment whose labels fail at each
#    of many tiny turns (turns x fragment length), which the bound on the quote keeps small.
# 3. An unverified quote needs, per distinct fragment, its first occurrence (one scan) and its first
#    attributed one (item 2): about one pass per distinct fragment, at most about 40. A quote past the
#    bound (the verifier itself takes any text) gets the same answers at that cost per fragment: a
#    multi-pattern pass for thousands of fragments served no quote a judge can give, and was removed.
# 4. The closest passage (unverified quotes only) looks at a bounded number of seed occurrences and
#    windows of the first missing fragment's first 100 words.


def _locate(fragments: list[_Fragment], prepared: _Prepared, subject: str = ANY) -> EvidenceCheck:
    chain = _chain(fragments, prepared)
    if chain is not None:
        turns = prepared.subject_turns(subject) if subject != ANY else None
        if turns is None or any(_touches(fragment, found, turns, prepared) for fragment, found in zip(fragments, chain)):
            return EvidenceCheck(Status.VERIFIED, _spans(list(zip(fragments, chain)), prepared))
        if (other := _subject_chain(fragments, chain, turns, prepared)) is not None:
            return EvidenceCheck(Status.VERIFIED, _spans(list(zip(fragments, other)), prepared))
        # Literally there, in order, labels holding: only never in the subject's words.
        return EvidenceCheck(Status.WRONG_SUBJECT, _spans(list(zip(fragments, chain)), prepared))

    literal, attributed = _first_occurrences(list(dict.fromkeys(fragments)), prepared)
    # Show what exists (preferring a correctly attributed occurrence) for the reviewer.
    found_at = [
        (fragment, literal[fragment] if attributed[fragment] is None else attributed[fragment])
        for fragment in fragments
        if literal[fragment] is not None
    ]
    spans = _spans(found_at, prepared)
    missing = next((fragment for fragment in fragments if literal[fragment] is None), None)
    closest = _closest(missing.words, prepared) if missing else None

    if any(literal[fragment] is not None and attributed[fragment] is None for fragment in fragments):
        status = Status.WRONG_SPEAKER
    elif all(attributed[fragment] is not None for fragment in fragments):
        status = Status.OUT_OF_ORDER
    elif any(attributed[fragment] is not None for fragment in fragments):
        status = Status.PARTIAL
    elif closest and closest.similarity >= PARAPHRASE_THRESHOLD:
        status = Status.PARAPHRASE
    else:
        status = Status.NOT_FOUND
    return EvidenceCheck(status, spans, closest)


def _chain(fragments: list[_Fragment], prepared: _Prepared, position: int = 1, chain: tuple[int, ...] = ()) -> list[int] | None:
    """Offsets of the fragments' first attributed occurrences in order without overlap (each from
    where the previous ended; ``position`` 1 is the first word), after the ``chain`` given; None if
    one is missing."""
    found_at = list(chain)
    for fragment in fragments:
        found = _first_attributed(fragment, prepared, position)
        if found is None:
            return None
        found_at.append(found)
        position = found + len(fragment.needle) - 1
    return found_at


def _touches(fragment: _Fragment, offset: int, turns: list[int], prepared: _Prepared) -> bool:
    """Whether the occurrence at ``offset`` has a word in one of ``turns`` (ascending)."""
    first, last = prepared.turn_at(offset), prepared.turn_at(offset + len(fragment.needle) - 3)
    at = bisect.bisect_left(turns, first)
    return at < len(turns) and turns[at] <= last


def _subject_chain(fragments: list[_Fragment], greedy: list[int], turns: list[int], prepared: _Prepared) -> list[int] | None:
    """A chain in which some fragment has words in ``turns``, or None if there is none.

    The greedy chain ends each fragment as early as possible, so if any chain puts fragment k in the
    subject's turns, one does that takes the greedy prefix before k, then k's first attributed
    occurrence in those turns after it, then the greedy rest. Tried for each k: a few scans each,
    for a quote the schema bounds."""
    for number, fragment in enumerate(fragments):
        position = 1 if number == 0 else greedy[number - 1] + len(fragments[number - 1].needle) - 1
        found = _first_attributed_in(fragment, prepared, position, turns)
        if found is None:
            continue
        rest = _chain(fragments[number + 1 :], prepared, found + len(fragment.needle) - 1, (*greedy[:number], found))
        if rest is not None:
            return rest
    return None


def _first_attributed_in(fragment: _Fragment, prepared: _Prepared, start: int, turns: list[int]) -> int | None:
    """Offset of the first attributed occurrence at or after ``start`` with a word in ``turns``."""
    span = len(fragment.needle) - 2  # the occurrence's characters in ``plain``
    while (found := _first_attributed(fragment, prepared, start)) is not None:
        if _touches(fragment, found, turns, prepared):
            return found
        # Every turn it covers is outside ``turns``: the next candidate must reach the next turn in it.
        at = bisect.bisect_right(turns, prepared.turn_at(found + span - 1))
        if at == len(turns):
            return None
        start = max(found + 1, prepared.turn_offsets[turns[at]] - span + 1)
    return None


def _first_attributed(fragment: _Fragment, prepared: _Prepared, start: int) -> int | None:
    """Offset of the first occurrence at or after ``start`` whose labels hold, or None."""
    needle, plain = fragment.needle, prepared.plain
    found = plain.find(needle, start - 1)
    while found >= 0:
        offset = found + 1
        later = _next_possible(fragment, offset, prepared)
        if later is None:
            return offset
        found = plain.find(needle, max(offset + 1, later) - 1)
    return None


def _next_possible(fragment: _Fragment, offset: int, prepared: _Prepared) -> int | None:
    """None if the fragment's labels hold for its occurrence at ``offset``; otherwise the earliest
    offset where an occurrence could hold them. Constant time per label (bisection over turns)."""
    for check in fragment.checks:
        start = offset + check.start
        turn = prepared.turn_at(start)
        run_end = prepared.run_ends[turn]
        if prepared.speakers[turn] != check.label or run_end < offset + check.end:
            # Any later start in this run has the same wrong speaker or even less room: skip the run.
            return run_end + 1 - check.start
        if check.opens_turn and prepared.turn_offsets[turn] != start:
            following = turn + 1
            next_turn = prepared.turn_offsets[following] if following < len(prepared.turn_offsets) else len(prepared.plain)
            return next_turn - check.start
    return None


def _first_occurrences(
    fragments: list[_Fragment], prepared: _Prepared
) -> tuple[dict[_Fragment, int | None], dict[_Fragment, int | None]]:
    """Per distinct fragment: offset of its first occurrence, and of its first attributed one (None: none)."""
    literal: dict[_Fragment, int | None] = {}
    attributed: dict[_Fragment, int | None] = {}
    for fragment in fragments:
        found = prepared.plain.find(fragment.needle)
        literal[fragment] = None if found < 0 else found + 1
    for fragment in fragments:
        if fragment not in attributed:
            first = literal[fragment]
            attributed[fragment] = first if first is None or not fragment.checks else _first_attributed(fragment, prepared, first)
    return literal, attributed


def _spans(found: list[tuple[_Fragment, int]], prepared: _Prepared) -> tuple[tuple[int, int], ...]:
    """Transcript character ranges of fragments found at the given offsets in ``plain``."""
    firsts = [offset for _, offset in found]
    # A one-word fragment (a reference's words may be one) has no separator inside: it ends where it starts.
    lasts = [max(offset, prepared.plain.rfind(_SEP, offset, offset + len(fragment.needle) - 2) + 1) for fragment, offset in found]
    places = _places(firsts + lasts, prepared)
    characters = _characters(set(places.values()), prepared)
    return tuple((characters[places[first]][0], characters[places[last]][1]) for first, last in zip(firsts, lasts))


def _places(offsets: list[int], prepared: _Prepared) -> dict[int, tuple[int, int]]:
    """(turn, word number within the turn) of words given by offset in ``plain``; the separators are
    counted once per turn in ascending order, so many offsets in one long turn cost one pass over it."""
    places: dict[int, tuple[int, int]] = {}
    previous_turn, previous_offset, words_before = -1, 0, 0
    for offset in sorted(set(offsets)):
        turn = prepared.turn_at(offset)
        if turn != previous_turn:
            previous_turn, previous_offset, words_before = turn, prepared.turn_offsets[turn], 0
        words_before += prepared.plain.count(_SEP, previous_offset, offset)
        previous_offset = offset
        places[offset] = (turn, words_before)
    return places


def _characters(places: Iterable[tuple[int, int]], prepared: _Prepared) -> dict[tuple[int, int], tuple[int, int]]:
    """Transcript character range of each (turn, word number) word, re-tokenizing each turn involved once
    (a quote of many fragments in one long turn must not re-read the turn per fragment)."""
    by_turn: dict[int, set[int]] = {}
    for turn, number in places:
        by_turn.setdefault(turn, set()).add(number)
    characters: dict[tuple[int, int], tuple[int, int]] = {}
    for turn, wanted in by_turn.items():
        start, end = prepared.turn_ranges[turn]
        tokens = itertools.islice(_TOKEN.finditer(_blank_tags(prepared.transcript[start:end])), max(wanted) + 1)
        for number, match in enumerate(tokens):
            if number in wanted:
                characters[(turn, number)] = (start + match.start(), start + match.end())
    return characters


def _char_range(first: int, last: int, prepared: _Prepared) -> tuple[int, int]:
    """Characters from the start of the word at position ``first`` to the end of the word at ``last``."""
    places = []
    for position in (first, last):
        turn = bisect.bisect_right(prepared.turn_starts, position) - 1
        places.append((turn, position - prepared.turn_starts[turn]))
    characters = _characters(places, prepared)
    return characters[places[0]][0], characters[places[1]][1]


def _turn_bounds(position: int, prepared: _Prepared) -> tuple[int, int]:
    """Word positions [first, past-the-end) of the turn holding ``position``."""
    at = bisect.bisect_right(prepared.turn_starts, position)
    end = prepared.turn_starts[at] if at < len(prepared.turn_starts) else len(prepared.words)
    return prepared.turn_starts[at - 1], end


def _closest(words: tuple[str, ...], prepared: _Prepared) -> Closest | None:
    """Nearest passage to ``words``: windows voted for by the quote's rarer words, scored by difflib."""
    words = words[:_CLOSEST_MAX_WORDS]
    starts: list[int] = []
    for offset, word in _seeds(words, prepared):
        starts += map((-offset).__add__, prepared.index[word])  # window start = position - offset
    votes = Counter(starts)
    slack = len(words) // 2 + 2  # room for words the quote dropped or added
    quoted = Counter(words)
    best: tuple[float, int, int] | None = None
    tried: list[int] = []
    for start, _ in votes.most_common():
        if len(tried) == _CANDIDATE_WINDOWS:
            break
        if any(abs(start - other) <= slack for other in tried):
            continue  # nearly the same window as one already scored
        tried.append(start)
        low, high = max(0, start - slack), start + len(words) + slack
        if best is not None:
            # difflib is the cost here: skip a window that cannot score better. At most ``shared`` words
            # match, and the passage spans at least the matched words, so the ratio is at most this.
            shared = (quoted & Counter(prepared.words[low:high])).total()
            if round(2 * shared / (len(words) + shared), 3) <= best[0]:
                continue
        scored = _score_window(words, prepared, low, high)
        if best is None or scored[0] > best[0]:
            best = scored
    if best is None:
        return None
    similarity, first, last = best
    char_start, char_end = _char_range(first, last, prepared)
    return Closest(prepared.transcript[char_start:char_end], char_start, char_end, similarity)


def _seeds(words: tuple[str, ...], prepared: _Prepared) -> list[tuple[int, str]]:
    """(offset, word) pairs of the quote's rarest words, up to ``_SEED_BUDGET`` transcript occurrences."""
    index = prepared.index
    present = sorted((len(index[word]), offset, word) for offset, word in enumerate(words) if word in index)
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
