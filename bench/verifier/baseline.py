"""The plain approach the verifier is measured against: normalised substring search.

NFKD, strip accents, lower-case, straighten smart quotes, collapse whitespace; split the quote on
ellipses; every fragment, trimmed of surrounding quote marks and punctuation, must be a substring
of the normalised transcript. Like ``verify_evidence`` it is a plain function of (evidence,
transcript), so called once per quote it normalises the transcript once per quote.
"""

from __future__ import annotations

import re
import unicodedata

_SMART_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‘": "'", "’": "'"})
_ELLIPSIS = re.compile(r"\[\.\.\.\]|\(\.\.\.\)|\.\.\.")  # NFKD has already turned "…" into "..."
_EDGES = " \"'.,;:!?¿¡"


def normalize(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join(stripped.lower().translate(_SMART_QUOTES).split())


def fragments(evidence: str) -> list[str]:
    pieces = (piece.strip(_EDGES) for piece in _ELLIPSIS.split(normalize(evidence)))
    return [piece for piece in pieces if piece]


def verify_normalized(evidence: str | None, normalized_transcript: str) -> bool:
    parts = fragments(evidence or "")
    return bool(parts) and all(part in normalized_transcript for part in parts)


def baseline_verify(evidence: str | None, transcript: str) -> bool:
    return verify_normalized(evidence, normalize(transcript))
