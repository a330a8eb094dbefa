"""The judge-quality figures, from (call, criterion) pairs: pure functions, no Django.

A pair has the first labelling's value (an integer, or None for "n/a") and what the judge answered.
Only an answer whose evidence verified is a judge value (for "n/a" too: the product verifies its quote
as well); an unverified answer, or none at all (the call failed), leaves the pair without a judge value.
Agreement is computed on the judged pairs (those with a judge value), and `coverage` says which share of
the labelled pairs they are, so a judge that verifies little cannot look good on the few it kept.
See README.md beside this file for what each figure means.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from reviews.figures.stats import quadratic_weighted_kappa

NOT_APPLICABLE = "n/a"
# The confidence bands of the judging rules (qa.prompt, rule 3), each closed below and open above but
# the last: under 0.3 almost no evidence, 0.3-0.6 partial, 0.6-0.9 another reading possible, 0.9-1.0 direct.
BANDS: tuple[tuple[float, float], ...] = ((0.0, 0.3), (0.3, 0.6), (0.6, 0.9), (0.9, 1.0))


@dataclass(frozen=True)
class Pair:
    """One (call, criterion): the label and the judge's answer, if any."""

    external_id: str
    criterion: str
    label: int | None  # None: the label is n/a
    label_turn: int | None
    answered: bool = False  # the judge returned a score for it (its call did not fail)
    value: int | None = None  # the judge's value; None: n/a (or no answer)
    verified: bool = False
    status: str = ""  # the verifier's status
    confidence: float | None = None  # the model's own confidence
    in_deciding_turn: bool | None = None  # its verified evidence touches the labelled turn (None: not asked)

    @property
    def judged(self) -> bool:
        return self.answered and self.verified


def agrees(first: int | None, second: int | None) -> bool:
    return first == second


def within_one(first: int | None, second: int | None) -> bool:
    """n/a agrees only with n/a; two values agree within one scale point."""
    if first is None or second is None:
        return first is None and second is None
    return abs(first - second) <= 1


def ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def agreement(pairs: Sequence[tuple[int | None, int | None]]) -> dict[str, float | int | None]:
    """`exact`, `within_one` and `qwk` of (one side, other side) pairs, None standing for n/a.

    QWK is the project's (reviews.figures.stats), over the pairs where both sides gave a number:
    kappa has no place for "n/a", which exact and within_one count."""
    numeric = Counter((a, b) for a, b in pairs if a is not None and b is not None)
    return {
        "n": len(pairs),
        "exact": ratio(sum(agrees(a, b) for a, b in pairs), len(pairs)),
        "within_one": ratio(sum(within_one(a, b) for a, b in pairs), len(pairs)),
        "qwk": quadratic_weighted_kappa(numeric),
    }


def band_of(confidence: float) -> int:
    for index, (low, high) in enumerate(BANDS):
        if low <= confidence < high:
            return index
    return len(BANDS) - 1  # 1.0 itself


def calibration(items: Iterable[tuple[float, bool]]) -> tuple[list[dict[str, object]], float | None]:
    """Agreement by confidence band, and the expected calibration error over (confidence, exact) items.

    ECE = sum over bands of (n_band / n) * |exact agreement in the band - mean confidence in the band|:
    a judge whose 0.9 answers agree with the label 90% of the time, and so on, has ECE 0."""
    members: list[list[tuple[float, bool]]] = [[] for _ in BANDS]
    for confidence, exact in items:
        members[band_of(confidence)].append((confidence, exact))
    total = sum(len(band) for band in members)
    bands, ece = [], 0.0
    for (low, high), band in zip(BANDS, members, strict=True):
        exact = ratio(sum(hit for _, hit in band), len(band))
        mean = ratio(sum(confidence for confidence, _ in band), len(band))  # type: ignore[arg-type]
        bands.append({"band": f"{low:.1f}-{high:.1f}", "n": len(band), "mean_confidence": mean, "exact": exact})
        if band:
            ece += len(band) / total * abs(exact - mean)  # type: ignore[operator]
    return bands, (ece if total else None)


def figures(pairs: Sequence[Pair]) -> dict[str, object]:
    """The judge's figures over `pairs` (one criterion's, or all of them)."""
    judged = [pair for pair in pairs if pair.judged]
    answered = [pair for pair in pairs if pair.answered]
    verified = [pair for pair in answered if pair.verified]
    asked_turn = [pair for pair in verified if pair.in_deciding_turn is not None]
    bands, ece = calibration((pair.confidence or 0.0, agrees(pair.value, pair.label)) for pair in judged)
    return {
        "pairs": len(pairs),
        "judged": len(judged),
        "coverage": ratio(len(judged), len(pairs)),
        **{key: value for key, value in agreement([(pair.value, pair.label) for pair in judged]).items() if key != "n"},
        "answered": len(answered),
        "verified": ratio(len(verified), len(answered)),
        "wrong_subject": ratio(sum(pair.status == "wrong_subject" for pair in answered), len(answered)),
        "deciding_turn": ratio(sum(bool(pair.in_deciding_turn) for pair in asked_turn), len(asked_turn)),
        "confidence_bands": bands,
        "ece": ece,
    }


Labels = Mapping[str, Mapping[str, int | None]]  # external id -> criterion -> value (None: n/a)


def ceiling(first: Labels, second: Labels) -> tuple[dict[str, object], dict[str, dict[str, object]]]:
    """The human ceiling: agreement between two labellings on the (call, criterion) pairs both labelled,
    overall and by criterion."""
    by_criterion: dict[str, list[tuple[int | None, int | None]]] = {}
    for external_id, values in second.items():
        for criterion, value in values.items():
            if criterion in first.get(external_id, {}):
                by_criterion.setdefault(criterion, []).append((value, first[external_id][criterion]))
    everything = [pair for pairs in by_criterion.values() for pair in pairs]
    return agreement(everything), {criterion: agreement(pairs) for criterion, pairs in by_criterion.items()}
