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
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from functools import lru_cache
from itertools import combinations
from statistics import NormalDist, median

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
# A cell (an agent or a team on a criterion) estimates the mean value a supervisor gives its calls. The
# calls are split by routing into two strata: flagged (routed for a doubt; every call with an unverified
# score is one) and plain. In each stratum:
# - a call with a human value (the human reference: a final review, a calibration's agreed value) counts
#   with it. It is known, not estimated;
# - a call without one whose judge value exists (its quote verified) is estimated by prediction-powered
#   inference (Angelopoulos et al., "Prediction-powered inference", Science 2023): the judge's values of
#   those calls, corrected by the random-audit calls of the same stratum, which the audit's hash draw
#   makes a uniform sample of it: mean = λ·mean(judge) + mean over the audit of (human − λ·judge);
# - a call without a human value whose judge value does not exist (unverified) has no value at all: it
#   waits for a review, is counted apart, and the estimate leaves it out.
# The strata combine by their counts: estimate = (Σ known + Σ_s M_s · mean_s) / N, over the N calls known
# or estimated. What is estimated is the mean of these calls themselves, so a known value is what it is and
# the variance is the estimated parts' alone. For M_s calls estimated from an audit of n_s, the error is the
# audit's mean residual (human − λ·judge) minus the M_s calls' own, so its variance is
# Var(human − λ·judge) · (1/n_s + 1/M_s), read on the audit; the strata's parts add, weighted (M_s/N)².
# (PPI's own interval, `ppi_mean`, is for the mean of the population the calls come from, and charges
# λ² Var(judge)/M for the calls' judge values instead: wider here, and it covered 97.5% in the simulation.)
# The interval takes a Student-t quantile on Welch–Satterthwaite's degrees of freedom (n − 1 for a single
# audit): a small audit's variance is itself uncertain, and the normal quantile covered too seldom. λ is 1
# (plain PPI) below POWER_TUNING_FROM audited calls; from there it is the slope of human on judge over the
# audit, clipped to [0, 1] (PPI++, Angelopoulos, Duchi & Zrnic 2023), which minimises that variance: a
# noisy judge then counts for less.
# Stratifying matters because flagged calls are the ones the judge gets wrong most, and most of them are
# reviewed: one correction for all calls would apply their error to the plain calls it estimates.

# Below this many pairs (or calls rated by two or more) an agreement figure is shown greyed and marked as too
# few, on the reports and on a calibration's results alike: QWK 0.00 from one pair says nothing.
MIN_N = 10
MIN_AUDITED = 10  # audited calls a correction needs; fewer and the stratum borrows one, else the cell is uncorrected
POWER_TUNING_FROM = 100  # audited calls from which the correction is power-tuned (PPI++)
Z_95 = 1.959963984540054


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs three times as much, and a page
# makes a hundred thousand of these
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


@dataclass(slots=True)  # not frozen, as Moments
class Pairs:
    """Sums over (human, judge) pairs: their means, the variance of human − λ·judge, the slope; additive."""

    n: int = 0
    human: float = 0.0
    judge: float = 0.0
    human_squares: float = 0.0
    judge_squares: float = 0.0
    products: float = 0.0

    def __add__(self, other: Pairs) -> Pairs:
        # Written out: a scorecard adds tens of thousands of these, and a loop over fields() cost a second.
        return Pairs(
            self.n + other.n,
            self.human + other.human,
            self.judge + other.judge,
            self.human_squares + other.human_squares,
            self.judge_squares + other.judge_squares,
            self.products + other.products,
        )

    @property
    def judge_moments(self) -> Moments:
        return Moments(self.n, self.judge, self.judge_squares)

    def residual(self, lam: float) -> Moments:
        """The moments of human − lam · judge over the pairs."""
        return Moments(
            self.n,
            self.human - lam * self.judge,
            self.human_squares - 2 * lam * self.products + lam**2 * self.judge_squares,
        )

    @property
    def slope(self) -> float | None:
        """The least-squares slope of human on judge; None below two pairs or with a single judge value."""
        if self.n < 2:
            return None
        judge_spread = self.judge_squares - self.judge**2 / self.n
        if judge_spread <= 1e-12 * max(self.judge_squares, 1.0):
            return None
        return (self.products - self.human * self.judge / self.n) / judge_spread


@dataclass(slots=True)  # not frozen, as Moments
class StratumSample:
    """What the estimator needs to know about one stratum of a cell's calls, as additive sums."""

    judged: Moments = field(default_factory=Moments)  # the verified judge values of every call: the judge's mean
    unverified_n: int = 0  # judge values whose quote did not verify: no value, counted apart
    known: Moments = field(default_factory=Moments)  # the human values of the calls that have one
    estimated: Moments = field(default_factory=Moments)  # the verified judge values of the calls without one
    waiting_n: int = 0  # calls without a human value whose judge value is unverified: left out
    human: Moments = field(default_factory=Moments)  # the human values of the random-audit calls: the audit-only mean
    audit: Pairs = field(default_factory=Pairs)  # audited calls with a human value and a verified judge value of that run

    def __add__(self, other: StratumSample) -> StratumSample:
        return StratumSample(
            self.judged + other.judged,
            self.unverified_n + other.unverified_n,
            self.known + other.known,
            self.estimated + other.estimated,
            self.waiting_n + other.waiting_n,
            self.human + other.human,
            self.audit + other.audit,
        )


class Stratum(StrEnum):
    PLAIN = "plain"  # routed for no doubt: not reviewed, or only audited or in a warm-up
    FLAGGED = "flagged"  # routed for low confidence (every unverified score), unknown speakers or instability


@dataclass(slots=True)  # not frozen, as Moments
class CellSample:
    plain: StratumSample = field(default_factory=StratumSample)
    flagged: StratumSample = field(default_factory=StratumSample)

    def __add__(self, other: CellSample) -> CellSample:
        return CellSample(self.plain + other.plain, self.flagged + other.flagged)

    def of(self, stratum: Stratum) -> StratumSample:
        return getattr(self, stratum.value)

    @property
    def whole(self) -> StratumSample:
        return self.plain + self.flagged


class CorrectionLevel(StrEnum):
    CELL = "cell"  # the cell's own audited calls
    TEAM = "team"  # the team's, for an agent with too few
    RUBRIC = "rubric"  # every audited call of the rubric in the period


@dataclass(frozen=True)
class Estimate:
    """One scorecard cell: the three numbers side by side, the estimate, its interval and what is behind it.

    Uncorrected (a stratum with calls to estimate and no correction with MIN_AUDITED calls, even pooled):
    `estimate` is the known values with the judge's values as they are, and there is no interval, since
    none would be honest. Every call known: the estimate is exact, its interval a point.
    """

    judged_n: int  # verified judge values: the judge's mean is over these
    unverified_n: int  # unverified judge values, never counted as the judge's
    known_n: int  # calls counted with their human value
    estimated_n: int  # calls estimated from their verified judge value
    waiting_n: int  # calls with an unverified judge value and no human value yet: left out
    audited_n: int  # the cell's own audited calls with a human value
    judge_mean: float | None
    human_audit_mean: float | None
    estimate: float | None
    ci: tuple[float, float] | None
    corrected: bool
    correction_level: CorrectionLevel | None  # the widest pool a stratum's correction came from
    correction_n: int  # the audited calls the corrections come from (the pools' when pooled)
    power_tuned: bool  # a correction was power-tuned (PPI++); else plain PPI with a t interval
    # The interval's variance as independent parts (variance, degrees of freedom), for a difference of two
    # estimates (coaching's before and after): their parts add, and Welch–Satterthwaite gives the df.
    variance_parts: tuple[tuple[float, float], ...] = ()

    @property
    def lower(self) -> float | None:
        return self.ci[0] if self.ci else None


def ppi_mean(unlabeled: Moments, labeled: Pairs, lam: float = 1.0) -> tuple[float, list[tuple[float, float]]]:
    """The prediction-powered mean of the human value in the population that calls of which only the
    judge's values (`unlabeled`) are known come from, corrected by `labeled` pairs drawn from it:
    λ·mean(judge) + mean(human − λ·judge) (Angelopoulos et al. 2023; PPI++ for λ ≠ 1), as ppi-python's
    `ppi_mean_ci` gives it (the tests check it).

    Returns the mean and its variance as parts (variance, degrees of freedom):
    λ² Var(judge)/M on M − 1 and Var(human − λ·judge)/n on n − 1. With a single unlabeled call its
    judge variance is read on the labeled pairs. The scorecard takes the mean; its variance is for
    these calls' own mean (see above).
    """
    residual = labeled.residual(lam)
    if unlabeled.n >= 2:
        judge_variance, judge_df = unlabeled.variance, unlabeled.n - 1
    else:
        judge_variance, judge_df = labeled.judge_moments.variance or 0.0, max(labeled.n - 1, 1)
    parts = [
        (lam**2 * judge_variance / unlabeled.n, judge_df),
        ((residual.variance or 0.0) / residual.n, residual.n - 1),
    ]
    return lam * unlabeled.mean + residual.mean, parts


def power_tuning(audit: Pairs) -> float | None:
    """PPI++'s λ from POWER_TUNING_FROM pairs on: the slope of human on judge, clipped to [0, 1] (1 where
    the judge gave one value on every pair); None below, for plain PPI."""
    if audit.n < POWER_TUNING_FROM:
        return None
    slope = audit.slope
    return 1.0 if slope is None else min(max(slope, 0.0), 1.0)


def satterthwaite(parts: Sequence[tuple[float, float]]) -> float:
    """Welch–Satterthwaite's degrees of freedom of a sum of independent variance estimates
    (variance, degrees of freedom); infinite for a sum of zeros."""
    total = sum(variance for variance, _ in parts)
    spread = sum(variance**2 / df for variance, df in parts if variance > 0)
    return total**2 / spread if spread > 0 else math.inf


def _correction(
    stratum: Stratum, sample: StratumSample, pools: Sequence[tuple[CorrectionLevel, CellSample]]
) -> tuple[CorrectionLevel, Pairs] | None:
    if sample.audit.n >= MIN_AUDITED:
        return CorrectionLevel.CELL, sample.audit
    for level, pool in pools:
        if pool.of(stratum).audit.n >= MIN_AUDITED:
            return level, pool.of(stratum).audit
    return None


_LEVEL_ORDER = list(CorrectionLevel)


def scorecard_estimate(cell: CellSample, pools: Sequence[tuple[CorrectionLevel, CellSample]] = ()) -> Estimate:
    """The cell's stratified estimate (see above). Each stratum with calls to estimate is corrected by the
    first audit with MIN_AUDITED pairs of that stratum: the cell's own, else each of `pools` in order
    (the team's, then the rubric's). A pool's audit is (almost all) other calls, so its variance simply adds."""
    whole = cell.whole
    calls = whole.known.n + whole.estimated.n
    base = {
        "judged_n": whole.judged.n,
        "unverified_n": whole.unverified_n,
        "known_n": whole.known.n,
        "estimated_n": whole.estimated.n,
        "waiting_n": whole.waiting_n,
        "audited_n": whole.human.n,
        "judge_mean": whole.judged.mean,
        "human_audit_mean": whole.human.mean,
    }
    if calls == 0:
        return Estimate(
            **base, estimate=None, ci=None, corrected=False, correction_level=None, correction_n=0, power_tuned=False
        )
    total, parts, levels, correction_n, tuned = whole.known.total, [], [], 0, False
    for stratum in Stratum:
        sample = cell.of(stratum)
        if sample.estimated.n == 0:
            continue
        found = _correction(stratum, sample, pools)
        if found is None:
            return Estimate(
                **base,
                estimate=(whole.known.total + whole.estimated.total) / calls,
                ci=None,
                corrected=False,
                correction_level=None,
                correction_n=0,
                power_tuned=False,
            )
        level, audit = found
        lam = power_tuning(audit)
        lam_value = 1.0 if lam is None else lam
        mean, _ = ppi_mean(sample.estimated, audit, lam_value)
        residual = audit.residual(lam_value)
        share = sample.estimated.n / calls
        total += sample.estimated.n * mean
        parts.append((share**2 * residual.variance * (1 / residual.n + 1 / sample.estimated.n), residual.n - 1))
        levels.append(level)
        correction_n += audit.n
        tuned |= lam is not None
    estimate = total / calls
    variance = sum(variance for variance, _ in parts)
    half_width = t_quantile(0.975, satterthwaite(parts)) * math.sqrt(variance) if variance > 0 else 0.0
    return Estimate(
        **base,
        estimate=estimate,
        ci=(estimate - half_width, estimate + half_width),
        corrected=True,
        correction_level=max(levels, key=_LEVEL_ORDER.index) if levels else None,
        correction_n=correction_n,
        power_tuned=tuned,
        variance_parts=tuple(parts),
    )


# Student's t, for the intervals of small audits: pure, so the statistics need no SciPy at run time (the
# tests check it against SciPy's).


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (Numerical Recipes, 6.4), by
    the modified Lentz method."""
    tiny, epsilon = 1e-300, 1e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < epsilon:
            break
    return result


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def t_upper_tail(t: float, df: float) -> float:
    """P(T > t) for t ≥ 0 under Student's t with `df` degrees of freedom."""
    return 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p: float, df: float) -> float:
    """The p-quantile (p ≥ 1/2) of Student's t with `df` degrees of freedom, rounded down to a whole number
    below LARGE_DF (fewer degrees of freedom, a slightly wider interval: the usual convention for
    Welch–Satterthwaite's fractional ones), so that each is computed once a process; from LARGE_DF on, the
    Cornish–Fisher expansion (Abramowitz & Stegun 26.7.5), exact there to 1e-12; the normal's for an
    infinite df."""
    if math.isinf(df):
        return _normal_quantile(p)
    if df < LARGE_DF:
        return _t_quantile_exact(p, max(math.floor(df), 1))
    return _cornish_fisher(p, df)


LARGE_DF = 1000


def _cornish_fisher(p: float, df: float) -> float:
    z = _normal_quantile(p)
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * df**4)
    )


@lru_cache(maxsize=4096)
def _t_quantile_exact(p: float, df: int) -> float:
    """Newton's method on the upper tail from the Cornish–Fisher value, to 1e-12."""
    t = max(_cornish_fisher(p, df), _normal_quantile(p))
    log_scale = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(100):
        density = math.exp(log_scale - (df + 1) / 2 * math.log1p(t * t / df))
        step = (t_upper_tail(t, df) - (1 - p)) / density
        t = max(t + step, t / 2)
        if abs(step) < 1e-12 * max(t, 1.0):
            break
    return t


def _normal_quantile(p: float) -> float:
    return Z_95 if p == 0.975 else NormalDist().inv_cdf(p)


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
