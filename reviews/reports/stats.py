"""Agreement figures between the judge and the supervisors, computed from counts.

Pure module (no Django). The database does the heavy part: it counts how many
(model value, human value, rejected) combinations there are per criterion.
Everything here works on those few counted cells, so the cost does not grow
with the number of scores.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class PairCount:
    """`count` reviewed scores with the same model value, human value and rejection."""

    model: int | None  # None: the judge found the criterion not applicable
    human: int | None  # None: the review gave no human value for this criterion, or found it not applicable
    rejected: bool
    count: int
    human_not_applicable: bool = False  # the supervisor found the criterion not applicable (human is None)


@dataclass(frozen=True)
class Agreement:
    """How one criterion's model values compare with the supervisors' values.

    The means, bias, mae and shares are over the `n` pairs that have a human
    value; `reviewed` and `rejected` count every final review of a recording
    scored on the criterion, with or without a human value.
    `not_applicable_disputed` counts the reviewed scores where one side found
    the criterion not applicable and the other gave it a value: disagreements
    the numeric figures cannot show, since such a pair has no difference.
    """

    n: int
    model_mean: float | None
    human_mean: float | None
    bias: float | None
    mae: float | None
    exact_agreement: float | None
    within_one: float | None
    qwk: float | None
    reviewed: int
    rejected: int
    rejection_rate: float | None
    not_applicable_disputed: int


@dataclass(frozen=True)
class Tally:
    """Scores and how many of them have an unverified quote; `rate` is None without scores."""

    total: int = 0
    unverified: int = 0

    @property
    def rate(self) -> float | None:
        return share(self.unverified, self.total)

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.total + other.total, self.unverified + other.unverified)


def share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def agreement(pairs: Iterable[PairCount]) -> Agreement:
    matrix: Counter[tuple[int, int]] = Counter()
    reviewed = rejected = disputed = 0
    for pair in pairs:
        reviewed += pair.count
        rejected += pair.count if pair.rejected else 0
        if (pair.model is None and pair.human is not None) or (pair.model is not None and pair.human_not_applicable):
            disputed += pair.count
        # A criterion left "not applicable" by either side has no numeric difference to measure.
        if pair.human is not None and pair.model is not None:
            matrix[(pair.model, pair.human)] += pair.count
    n = sum(matrix.values())
    if n == 0:
        return Agreement(
            0, None, None, None, None, None, None, None, reviewed, rejected, share(rejected, reviewed), disputed
        )
    sum_model = sum(model * count for (model, _), count in matrix.items())
    sum_human = sum(human * count for (_, human), count in matrix.items())
    return Agreement(
        n=n,
        model_mean=sum_model / n,
        human_mean=sum_human / n,
        bias=(sum_model - sum_human) / n,
        mae=sum(abs(model - human) * count for (model, human), count in matrix.items()) / n,
        exact_agreement=sum(count for (model, human), count in matrix.items() if model == human) / n,
        within_one=sum(count for (model, human), count in matrix.items() if abs(model - human) <= 1) / n,
        qwk=quadratic_weighted_kappa(matrix),
        reviewed=reviewed,
        rejected=rejected,
        rejection_rate=share(rejected, reviewed),
        not_applicable_disputed=disputed,
    )


def quadratic_weighted_kappa(matrix: Mapping[tuple[int, int], int]) -> float | None:
    """Cohen's kappa with quadratic weights, from counts keyed by (model, human).

    Textbook form: weights w_ij = (i - j)² / (k - 1)² over the criterion's k
    scale points, kappa = 1 - Σ w·observed / Σ w·expected, expected_ij =
    model_total_i · human_total_j / n. The (k - 1)² factor cancels between the
    two sums and scale points nobody used add zero to both, so the value only
    depends on the pairs: the scale need not be passed. The tests check this
    against a full k×k textbook computation.

    None when undefined: no pairs, or every pair is the same value v on both
    sides (expected disagreement 0, kappa is 0/0). Exact agreement is then 1
    and says what there is to say; reporting kappa 1 would claim agreement
    beyond chance that a single-valued sample cannot show.
    """
    n = sum(matrix.values())
    if n == 0:
        return None
    model_totals: Counter[int] = Counter()
    human_totals: Counter[int] = Counter()
    for (model, human), count in matrix.items():
        model_totals[model] += count
        human_totals[human] += count
    observed = sum(count * (model - human) ** 2 for (model, human), count in matrix.items())
    # n times the expected weighted disagreement, kept in integers.
    expected_times_n = sum(
        model_count * human_count * (model - human) ** 2
        for model, model_count in model_totals.items()
        for human, human_count in human_totals.items()
    )
    if expected_times_n == 0:
        return None
    # Exact rational arithmetic, rounded once, so equal inputs give equal floats everywhere.
    return float(1 - Fraction(observed * n, expected_times_n))
