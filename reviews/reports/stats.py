"""Agreement figures between the judge and the supervisors, computed from counts.

Pure module (no Django; numpy for the bootstrap's resamples). The database does the heavy part: it counts how many
(model value, human value, rejected) combinations there are per criterion.
Everything here works on those few counted cells, so the cost does not grow
with the number of scores.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from itertools import combinations
from statistics import median

import numpy as np


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


# The scorecard estimator ------------------------------------------------------
#
# Prediction-powered inference (Angelopoulos et al., "Prediction-powered
# inference", Science 2023) for the mean human value of a cell (an agent or a
# team on a criterion): the judge's mean over every judged call of the cell,
# plus the mean human − judge difference over the cell's randomly audited
# calls. The audit is a uniform random sample of the judged calls (the hash
# draw), so the difference's mean is an unbiased estimate of the judge's bias
# and the sum is unbiased for the human mean, with the judge's many values
# narrowing the interval that the audit alone would give.

MIN_AUDITED = 10  # audited calls a correction needs; fewer and the cell borrows one or shows the judge's mean
Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Moments:
    """Count, sum and sum of squares of a sample: its mean and variance, and additive across samples."""

    n: int = 0
    total: float = 0.0
    squares: float = 0.0

    def __add__(self, other: Moments) -> Moments:
        return Moments(self.n + other.n, self.total + other.total, self.squares + other.squares)

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    @property
    def variance(self) -> float | None:
        """The sample variance (n − 1 in the denominator); None below two values."""
        if self.n < 2:
            return None
        return max(self.squares - self.total**2 / self.n, 0.0) / (self.n - 1)


@dataclass(frozen=True)
class CellSample:
    """What the estimator needs to know about one cell's calls, as additive moments."""

    judged: Moments = Moments()  # the judge's values on every judged call with a value
    human: Moments = Moments()  # the human values of the audited calls: the audit-only mean
    difference: Moments = Moments()  # human − judge on the audited calls where both gave a value
    paired_human: Moments = Moments()  # the human values of those same calls

    def __add__(self, other: CellSample) -> CellSample:
        return CellSample(
            self.judged + other.judged,
            self.human + other.human,
            self.difference + other.difference,
            self.paired_human + other.paired_human,
        )


class CorrectionLevel(StrEnum):
    CELL = "cell"  # the cell's own audited calls
    TEAM = "team"  # the team's, for an agent with too few
    RUBRIC = "rubric"  # every audited call of the rubric in the period


@dataclass(frozen=True)
class Estimate:
    """One scorecard cell: the three numbers side by side and the interval of the corrected one.

    Uncorrected (no correction with MIN_AUDITED calls, even pooled): `estimate`
    is the judge's mean and there is no interval, since none would be honest.
    """

    judged_n: int
    audited_n: int  # the cell's own audited calls with a human value
    judge_mean: float | None
    human_audit_mean: float | None
    estimate: float | None
    ci: tuple[float, float] | None
    corrected: bool
    correction_level: CorrectionLevel | None
    correction_n: int  # the audited calls the correction comes from (the pool's when pooled)

    @property
    def lower(self) -> float | None:
        return self.ci[0] if self.ci else None


def scorecard_estimate(cell: CellSample, pools: Sequence[tuple[CorrectionLevel, CellSample]] = ()) -> Estimate:
    """The cell's prediction-powered estimate, correcting with the first sample that has MIN_AUDITED calls:
    the cell's own audited calls, else each of `pools` in order (the team's, then the rubric's).

    Own correction: the audited calls are among the judged ones, so the two parts covary;
    Var = Var(judge)/N + Var(diff)/n + 2 Cov(judge, diff)/N, and since judge + diff is the human
    value, Var(judge) + 2 Cov(judge, diff) = Var(human) − Var(diff), which gives
    Var = Var(human)/N + Var(diff) (1/n − 1/N), every term estimated on the audited calls. Dropping
    the covariance (which is negative when the judge is noisy) would make the interval too wide.
    Pooled correction: the pool's audit is (almost all) other calls, so the variances add:
    Var(judge)/N + Var(diff)/n.
    """
    judged, difference = cell.judged, cell.difference
    base = {
        "judged_n": judged.n,
        "audited_n": cell.human.n,
        "judge_mean": judged.mean,
        "human_audit_mean": cell.human.mean,
    }
    uncorrected = Estimate(
        **base, estimate=judged.mean, ci=None, corrected=False, correction_level=None, correction_n=0
    )
    if judged.n < 2:
        return uncorrected
    if difference.n >= MIN_AUDITED:
        level, correction = CorrectionLevel.CELL, difference
        variance = cell.paired_human.variance / judged.n + difference.variance * (1 / difference.n - 1 / judged.n)
    else:
        pooled = next(((level, pool) for level, pool in pools if pool.difference.n >= MIN_AUDITED), None)
        if pooled is None:
            return uncorrected
        level, correction = pooled[0], pooled[1].difference
        variance = judged.variance / judged.n + correction.variance / correction.n
    estimate = judged.mean + correction.mean
    half_width = Z_95 * math.sqrt(max(variance, 0.0))
    return Estimate(
        **base,
        estimate=estimate,
        ci=(estimate - half_width, estimate + half_width),
        corrected=True,
        correction_level=level,
        correction_n=correction.n,
    )


# ---------------------------------------------------------------------------
# Agreement between human raters: calibration sessions and the human ceiling.
# Units are calls (or any item rated); a rater's value is an int on the
# criterion's scale. "Does not apply" and a missing value are both left out:
# neither is a number to compare.
# ---------------------------------------------------------------------------

Ratings = Mapping[Hashable, Mapping[Hashable, int]]  # unit -> rater -> value


@dataclass(frozen=True)
class RaterAgreement:
    """How a group of raters agree on one criterion over a set of units.

    `exact_agreement` and `within_one` are shares of all rater pairs on a unit;
    `mean_pairwise_qwk` is the mean, over pairs of raters, of the QWK on the
    units both rated (pairs whose QWK is undefined are left out); `alpha` is
    Krippendorff's alpha with the ordinal metric; `bias` is each rater's mean
    of (own value − the unit's median of all raters), over units with two or
    more values: above 0 lenient, below 0 harsh.
    """

    n_units: int  # units with at least two values
    n_raters: int  # raters with a value on such a unit
    pairs: int
    exact_agreement: float | None
    within_one: float | None
    mean_pairwise_qwk: float | None
    alpha: float | None
    bias: dict[Hashable, float]


def rater_agreement(ratings: Ratings) -> RaterAgreement:
    units = {unit: dict(values) for unit, values in ratings.items() if len(values) >= 2}
    raters = sorted({rater for values in units.values() for rater in values}, key=str)
    pair_values = [
        (values[a], values[b]) for values in units.values() for a, b in combinations(sorted(values, key=str), 2)
    ]
    pairs = len(pair_values)
    qwks = []
    for a, b in combinations(raters, 2):
        matrix = Counter((values[a], values[b]) for values in units.values() if a in values and b in values)
        kappa = quadratic_weighted_kappa(matrix)
        if kappa is not None:
            qwks.append(kappa)
    deviations: defaultdict[Hashable, list[float]] = defaultdict(list)
    for values in units.values():
        middle = median(values.values())
        for rater, value in values.items():
            deviations[rater].append(value - middle)
    return RaterAgreement(
        n_units=len(units),
        n_raters=len(raters),
        pairs=pairs,
        exact_agreement=share(sum(a == b for a, b in pair_values), pairs),
        within_one=share(sum(abs(a - b) <= 1 for a, b in pair_values), pairs),
        mean_pairwise_qwk=sum(qwks) / len(qwks) if qwks else None,
        alpha=krippendorff_alpha_ordinal(units),
        bias={rater: sum(found) / len(found) for rater, found in deviations.items()},
    )


def pooled_pair_matrix(ratings: Ratings) -> Counter[tuple[int, int]]:
    """Every pair of raters on a unit, counted both ways round.

    Raters differ from unit to unit (whoever reviewed each call), so there is
    no "first" and "second" rater: the symmetric matrix makes the QWK of the
    pooled pairs independent of the order the raters happen to be listed in.
    """
    matrix: Counter[tuple[int, int]] = Counter()
    for values in ratings.values():
        for a, b in combinations(list(values.values()), 2):
            matrix[(a, b)] += 1
            matrix[(b, a)] += 1
    return matrix


def krippendorff_alpha_ordinal(ratings: Ratings) -> float | None:
    """Krippendorff's alpha, ordinal metric, with missing values.

    As in Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011):
    a coincidence matrix o_ck from every ordered pair of values within a unit,
    each unit's pairs weighted 1/(m_u − 1); only units with two or more values
    count. Ordinal distance δ²_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)² over the
    values' marginal totals n_g, and α = 1 − (n − 1)·Σ o·δ² / Σ n_c·n_k·δ².
    Exact rational arithmetic, rounded once.

    None when undefined: no pairable values, or every value the same (no
    expected disagreement).
    """
    coincidences: defaultdict[tuple[int, int], Fraction] = defaultdict(Fraction)
    for values in ratings.values():
        found = list(values.values())
        m = len(found)
        if m < 2:
            continue
        for i, c in enumerate(found):
            for j, k in enumerate(found):
                if i != j:
                    coincidences[(c, k)] += Fraction(1, m - 1)
    totals: defaultdict[int, Fraction] = defaultdict(Fraction)
    for (c, _), weight in coincidences.items():
        totals[c] += weight
    n = sum(totals.values())
    if n == 0:
        return None
    ordered = sorted(totals)
    cumulative = {}  # value -> Σ n_g for g up to and including it
    running = Fraction(0)
    for value in ordered:
        running += totals[value]
        cumulative[value] = running

    def distance(c: int, k: int) -> Fraction:
        low, high = min(c, k), max(c, k)
        between = cumulative[high] - cumulative[low] + totals[low]
        return (between - (totals[c] + totals[k]) / 2) ** 2

    observed = sum(weight * distance(c, k) for (c, k), weight in coincidences.items())
    expected = sum(totals[c] * totals[k] * distance(c, k) for c in ordered for k in ordered)
    if expected == 0:
        return None
    return float(1 - (n - 1) * observed / expected)


# --- Paired bootstrap: a candidate judge against a baseline, on the same recordings ---------------------------------

Triple = tuple[int, int, int]  # (baseline value, candidate value, human value) of one recording's criterion

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261130


@dataclass(frozen=True)
class PairedDelta:
    """Candidate minus baseline over `n` recordings with a value from both arms and the human,
    with percentile intervals from a paired bootstrap over those recordings."""

    n: int
    mae_delta: float | None
    mae_delta_ci: tuple[float, float] | None
    qwk_delta: float | None
    qwk_delta_ci: tuple[float, float] | None


def bootstrap_resamples(counts: Sequence[int], *, resamples: int, seed: int) -> np.ndarray:
    """Resample recordings with replacement, `resamples` times: how often each cell
    (a distinct triple of values) is drawn, one row per resample.

    Every figure compared here depends on a recording only through its triple
    of values, so drawing n recordings uniformly is drawing the cells with
    probability count / n: a multinomial. Its cost grows with the number of
    distinct triples (at most a few hundred), not with the recordings.
    """
    weights = np.asarray(counts, dtype=float)
    n = int(weights.sum())
    return np.random.default_rng(seed).multinomial(n, weights / n, size=resamples)


def _mae(draws: np.ndarray, model: np.ndarray, human: np.ndarray) -> np.ndarray:
    return draws @ np.abs(model - human) / draws.sum(axis=-1)


def _qwk(draws: np.ndarray, model: np.ndarray, human: np.ndarray) -> np.ndarray:
    """quadratic_weighted_kappa for each row of counts at once; NaN where it is undefined.

    Σ_i Σ_j M_i H_j (i - j)² expands to n·Σm² + n·Σh² - 2·Σm·Σh over the pairs,
    which is linear in the counts: one matrix product per term.
    """
    n = draws.sum(axis=-1)
    observed = draws @ (model - human) ** 2
    expected_times_n = n * (draws @ model**2) + n * (draws @ human**2) - 2 * (draws @ model) * (draws @ human)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected_times_n > 0, 1 - observed * n / expected_times_n, np.nan)


def _interval(deltas: np.ndarray, level: float) -> tuple[float, float] | None:
    deltas = deltas[~np.isnan(deltas)]
    if not len(deltas):
        return None
    low, high = np.percentile(deltas, [(1 - level) / 2 * 100, (1 + level) / 2 * 100])
    return float(low), float(high)


def paired_bootstrap(
    triples: Mapping[Triple, int],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> PairedDelta:
    """The candidate's MAE and QWK minus the baseline's, each with a percentile
    bootstrap interval (Efron & Tibshirani, ch. 13): the recordings are
    resampled together for both arms, so what the arms share cancels out.

    A negative MAE delta is a candidate closer to the supervisors; a positive
    QWK delta is a candidate agreeing with them more. The QWK interval leaves
    out resamples where either kappa is undefined (all one value).
    """
    cells = [(triple, count) for triple, count in triples.items() if count > 0]
    n = sum(count for _, count in cells)
    if n == 0:
        return PairedDelta(0, None, None, None, None)
    values = np.array([triple for triple, _ in cells], dtype=float)
    baseline, candidate, human = values[:, 0], values[:, 1], values[:, 2]
    draws = bootstrap_resamples([count for _, count in cells], resamples=resamples, seed=seed)
    mae_deltas = _mae(draws, candidate, human) - _mae(draws, baseline, human)
    qwk_deltas = _qwk(draws, candidate, human) - _qwk(draws, baseline, human)

    def matrix(arm: int) -> Counter[tuple[int, int]]:
        pairs: Counter[tuple[int, int]] = Counter()
        for triple, count in cells:
            pairs[(triple[arm], triple[2])] += count
        return pairs

    qwk_baseline, qwk_candidate = quadratic_weighted_kappa(matrix(0)), quadratic_weighted_kappa(matrix(1))
    defined = qwk_baseline is not None and qwk_candidate is not None
    return PairedDelta(
        n=n,
        mae_delta=sum((abs(c - h) - abs(b - h)) * count for (b, c, h), count in cells) / n,
        mae_delta_ci=_interval(mae_deltas, level),
        qwk_delta=qwk_candidate - qwk_baseline if defined else None,
        qwk_delta_ci=_interval(qwk_deltas, level) if defined else None,
    )


def mae_interval(
    pairs: Mapping[tuple[int, int], int], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float] | None:
    """A 95 % percentile bootstrap interval for one arm's MAE, from counts keyed by (model, human)."""
    cells = [(pair, count) for pair, count in pairs.items() if count > 0]
    if not cells:
        return None
    values = np.array([pair for pair, _ in cells], dtype=float)
    draws = bootstrap_resamples([count for _, count in cells], resamples=resamples, seed=seed)
    return _interval(_mae(draws, values[:, 0], values[:, 1]), 0.95)
