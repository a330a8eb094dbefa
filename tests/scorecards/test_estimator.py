"""The scorecard estimator: hand-worked examples, pooling, the t quantile, power tuning, and its coverage by
simulation, in the case that breaks a single correction for all calls."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from reviews.figures.stats import (
    MIN_AUDITED,
    POWER_TUNING_FROM,
    Z_95,
    CellSample,
    CorrectionLevel,
    Moments,
    Pairs,
    StratumSample,
    power_tuning,
    satterthwaite,
    scorecard_estimate,
    t_quantile,
)

T_975_9 = 2.262157162798205  # Student's t, 97.5% quantile, 9 degrees of freedom (any table: 2.262)
T_975_13 = 2.1603686564627913  # 13 degrees of freedom (2.160)


def moments(values) -> Moments:
    values = [float(v) for v in values]
    return Moments(len(values), sum(values), sum(v * v for v in values))


def pairs(items) -> Pairs:
    """`items`: (human, judge) of audited calls."""
    items = [(float(h), float(j)) for h, j in items]
    return Pairs(
        len(items),
        sum(h for h, _ in items),
        sum(j for _, j in items),
        sum(h * h for h, _ in items),
        sum(j * j for _, j in items),
        sum(h * j for h, j in items),
    )


def stratum(*, audit=(), known=(), estimated=(), waiting=0, unverified=0) -> StratumSample:
    """A stratum's calls: `audit` (human, judge) of its audited calls (reviewed, so known too), `known` the
    human values of its other reviewed calls, `estimated` the verified judge values of the calls without a
    human value, `waiting` calls with an unverified value and no human one."""
    audit = list(audit)
    return StratumSample(
        judged=moments([j for _, j in audit] + list(estimated)),
        unverified_n=unverified + waiting,
        known=moments([h for h, _ in audit] + list(known)),
        estimated=moments(estimated),
        waiting_n=waiting,
        human=moments([h for h, _ in audit]),
        audit=pairs(audit),
    )


def test_moments_and_pairs_give_the_textbook_figures():
    m = moments([2, 4, 4, 4, 5, 5, 7, 9])
    assert m.mean == 5.0
    assert m.variance == pytest.approx(32 / 7)
    assert Moments().mean is None and moments([3]).variance is None
    assert moments([1, 2]) + moments([3]) == moments([1, 2, 3])
    p = pairs([(1, 1), (2, 3), (4, 5)])  # judge 1, 3, 5 (mean 3); human 1, 2, 4
    assert p.slope == pytest.approx(np.polyfit([1, 3, 5], [1, 2, 4], 1)[0])  # 0.75
    assert p.residual(0.5) == moments([1 - 0.5, 2 - 1.5, 4 - 2.5])
    assert pairs([(1, 4), (2, 4)]).slope is None  # one judge value: no slope


def test_a_hand_worked_cell():
    """20 calls of one stratum: 10 audited, the judge said 4 and the supervisor 3 on five and 4 on five;
    10 not reviewed, the judge said 2. Known: 3·5 + 4·5 = 35. The audit's differences −1 ×5, 0 ×5 have
    mean −0.5 and variance 2.5/9, so the ten are estimated at 2 − 0.5 = 1.5 each.

    estimate = (35 + 10 · 1.5) / 20 = 2.5
    variance = (10/20)² · Var(diff) · (1/10 + 1/10) = 1/4 · 2.5/9 · 1/5 = 1/72, on 9 d.f.
    interval = 2.5 ± t(0.975, 9) / √72
    """
    cell = CellSample(plain=stratum(audit=[(3, 4)] * 5 + [(4, 4)] * 5, estimated=[2] * 10))
    got = scorecard_estimate(cell)
    assert (got.judged_n, got.audited_n, got.judge_mean, got.human_audit_mean) == (20, 10, 3.0, 3.5)
    assert (got.known_n, got.estimated_n, got.waiting_n) == (10, 10, 0)
    assert got.estimate == pytest.approx(2.5)
    assert got.ci == pytest.approx((2.5 - T_975_9 / math.sqrt(72), 2.5 + T_975_9 / math.sqrt(72)))
    assert (got.corrected, got.correction_level, got.correction_n, got.power_tuned) == (
        True, CorrectionLevel.CELL, 10, False,
    )  # fmt: skip


def test_two_strata_each_corrected_by_its_own_audit():
    """Plain: 10 audited (judge 4; human 3 ×5, 4 ×5: differences mean −0.5, variance 2.5/9) and 10 to
    estimate (judge 2 ×5, 4 ×5: mean 3, variance 10/9) → 2.5 each.
    Flagged: 10 audited (judge 5, human 2: difference −3, no spread), 5 more reviewed (human 1) and 5 to
    estimate (judge 5) → 2 each.
    Known: 35 + 20 + 5 = 60 over 25 calls; N = 40; estimate = (60 + 10 · 2.5 + 5 · 2) / 40 = 2.375.
    Variance: (10/40)² · (2.5/9) · (1/10 + 1/10) = 1/288 on 9 d.f.; the flagged part is 0 (no spread).
    One correction for both (mean difference −1.75 over the 20 audited) would give the plain calls
    3 − 1.75 = 1.25 each: the flagged calls' larger error applied to calls that do not have it.
    """
    cell = CellSample(
        plain=stratum(audit=[(3, 4)] * 5 + [(4, 4)] * 5, estimated=[2] * 5 + [4] * 5),
        flagged=stratum(audit=[(2, 5)] * 10, known=[1] * 5, estimated=[5] * 5),
    )
    got = scorecard_estimate(cell)
    assert (got.known_n, got.estimated_n, got.audited_n, got.correction_n) == (25, 15, 20, 20)
    assert got.estimate == pytest.approx(2.375)
    half_width = T_975_9 * math.sqrt(1 / 288)
    assert got.ci == pytest.approx((2.375 - half_width, 2.375 + half_width))


def test_welch_satterthwaite_degrees_of_freedom():
    """(1/144 + 1/576)² / (((1/144)² + (1/576)²) / 9) = (25/576²) / ((17/576²)/9) = 225/17 ≈ 13.2."""
    assert satterthwaite([(1 / 144, 9), (1 / 576, 9), (0.0, 4)]) == pytest.approx(225 / 17)
    assert t_quantile(0.975, 225 / 17) == pytest.approx(T_975_13)
    assert satterthwaite([(0.0, 9)]) == math.inf


def test_too_few_audited_calls_pool_per_stratum_at_the_team_then_the_rubric_else_stay_uncorrected():
    """The cell: 4 audited (judge 5, human 1) and 2 to estimate (judge 5). The team's audit: those 4 and
    10 more (judge 4; human 3 ×5, 4 ×5): 14 differences, −4 ×4, −1 ×5, 0 ×5, mean −1.5, sum of squares 69,
    variance (69 − 14 · 1.5²) / 13 = 37.5/13. The two are estimated at 5 − 1.5 = 3.5 each:
    estimate = (4 · 1 + 2 · 3.5) / 6 = 11/6; variance (2/6)² · 37.5/13 · (1/14 + 1/2), on 13 d.f."""
    cell = CellSample(plain=stratum(audit=[(1, 5)] * 4, estimated=[5, 5]))
    team = CellSample(plain=stratum(audit=[(1, 5)] * 4 + [(3, 4)] * 5 + [(4, 4)] * 5))
    small_team = CellSample(plain=stratum(audit=[(1, 5)] * 4))
    rubric = CellSample(plain=stratum(audit=[(1, 5)] * 4 + [(3, 3)] * 12))  # 16 audited, mean difference −1

    pooled = scorecard_estimate(cell, [(CorrectionLevel.TEAM, team), (CorrectionLevel.RUBRIC, rubric)])
    assert (pooled.correction_level, pooled.correction_n, pooled.audited_n) == (CorrectionLevel.TEAM, 14, 4)
    assert pooled.estimate == pytest.approx(11 / 6)
    half_width = T_975_13 * math.sqrt((1 / 9) * 37.5 / 13 * (1 / 14 + 1 / 2))
    assert pooled.ci == pytest.approx((11 / 6 - half_width, 11 / 6 + half_width))

    to_rubric = scorecard_estimate(cell, [(CorrectionLevel.TEAM, small_team), (CorrectionLevel.RUBRIC, rubric)])
    assert (to_rubric.estimate, to_rubric.correction_level) == (pytest.approx((4 + 2 * 4) / 6), CorrectionLevel.RUBRIC)

    # A flagged audit never corrects plain calls.
    flagged_pool = CellSample(flagged=stratum(audit=[(1, 5)] * 30))
    alone = scorecard_estimate(cell, [(CorrectionLevel.TEAM, small_team), (CorrectionLevel.RUBRIC, flagged_pool)])
    assert (alone.estimate, alone.ci, alone.corrected, alone.correction_level) == (
        pytest.approx((4 + 10) / 6), None, False, None,
    )  # fmt: skip


def test_the_correction_needs_exactly_min_audited_calls():
    def cell(audited: int) -> CellSample:
        return CellSample(plain=stratum(audit=[(2, 3)] * audited, estimated=[3] * 30))

    assert not scorecard_estimate(cell(MIN_AUDITED - 1)).corrected
    assert scorecard_estimate(cell(MIN_AUDITED)).corrected


def test_known_values_alone_are_exact_and_unverified_ones_are_no_value():
    reviewed = scorecard_estimate(CellSample(flagged=stratum(known=[3, 4, 4])))
    assert (reviewed.estimate, reviewed.ci, reviewed.corrected, reviewed.estimated_n) == (11 / 3, (11 / 3, 11 / 3), True, 0)
    # Every quote unverified, none reviewed: no judge mean, no estimate, three calls waiting.
    waiting = scorecard_estimate(CellSample(flagged=stratum(waiting=3)))
    assert (waiting.judged_n, waiting.judge_mean, waiting.estimate, waiting.ci) == (0, None, None, None)
    assert (waiting.unverified_n, waiting.waiting_n, waiting.corrected) == (3, 3, False)
    # Beside known values, waiting calls are left out and counted apart.
    both = scorecard_estimate(CellSample(flagged=stratum(known=[2], waiting=4)))
    assert (both.estimate, both.waiting_n, both.known_n) == (2.0, 4, 1)


def test_an_empty_cell_has_no_numbers():
    got = scorecard_estimate(CellSample())
    assert (got.judged_n, got.judge_mean, got.estimate, got.ci, got.corrected) == (0, None, None, None, False)


def test_power_tuning_from_100_audited_calls_with_the_slope_clipped():
    rng = np.random.default_rng(7)
    judge = rng.integers(1, 6, size=POWER_TUNING_FROM)
    human = np.clip(np.round(1.5 + 0.4 * judge + rng.normal(0, 0.8, size=judge.size)), 1, 5)
    audit = list(zip(human, judge, strict=True))
    slope = np.polyfit(judge, human, 1)[0]
    assert 0 < slope < 1
    assert power_tuning(pairs(audit)) == pytest.approx(slope)
    assert power_tuning(pairs(audit[:-1])) is None  # 99: plain PPI
    assert power_tuning(pairs([(6 - j, j) for _, j in audit])) == 0.0  # a negative slope clips to 0
    assert power_tuning(pairs([(2 * j, j) for _, j in audit])) == 1.0  # above 1 clips to 1

    estimated = [5, 4, 4, 3, 2, 1] * 20
    got = scorecard_estimate(CellSample(plain=stratum(audit=audit, estimated=estimated)))
    mean_estimated = slope * np.mean(estimated) + np.mean(human - slope * judge)
    expected = (human.sum() + len(estimated) * mean_estimated) / (len(audit) + len(estimated))
    assert got.power_tuned and got.estimate == pytest.approx(expected)


def test_the_t_quantile_is_students():
    for df in (1, 2, 3, 9, 10, 29, 99, 500, 999):
        assert t_quantile(0.975, df) == pytest.approx(scipy_stats.t.ppf(0.975, df), abs=1e-11)
    assert t_quantile(0.975, 9.8) == t_quantile(0.975, 9)  # fractional d.f. round down: a wider interval
    for df in (1000, 5000, 1e6):
        assert t_quantile(0.975, df) == pytest.approx(scipy_stats.t.ppf(0.975, df), abs=1e-11)
    assert t_quantile(0.975, math.inf) == Z_95
    assert t_quantile(0.9, 12) == pytest.approx(scipy_stats.t.ppf(0.9, 12), abs=1e-11)


# Coverage by simulation --------------------------------------------------------------------------------

LEVELS = np.array([1, 2, 3, 4, 5])
PROBABILITIES = np.array([0.10, 0.15, 0.25, 0.30, 0.20])


def _cell_of(human, judge, flagged, audited, reviewed) -> CellSample:
    """The estimator's sums for simulated calls (all verified): arrays of human and judge values, and
    booleans per call."""

    def part(mask) -> StratumSample:
        audit = mask & audited
        to_estimate = mask & ~reviewed
        return StratumSample(
            judged=moments(judge[mask]),
            known=moments(human[mask & reviewed]),
            estimated=moments(judge[to_estimate]),
            human=moments(human[audit]),
            audit=pairs(zip(human[audit], judge[audit], strict=True)),
        )

    return CellSample(plain=part(~flagged), flagged=part(flagged))


def _single_correction(human, judge, audited, reviewed) -> tuple[float, float]:
    """The naive version: the same known values, but one correction for every call to estimate, from the
    whole audit (as if the audit's mean difference were the judge's error on the calls left)."""
    to_estimate = ~reviewed
    difference = human[audited] - judge[audited]
    estimated, n_audit = to_estimate.sum(), audited.sum()
    mean = judge[to_estimate].mean() + difference.mean()
    share = estimated / human.size
    variance = share**2 * difference.var(ddof=1) * (1 / n_audit + 1 / estimated)
    estimate = (human[reviewed].sum() + estimated * mean) / human.size
    return estimate, t_quantile(0.975, n_audit - 1) * math.sqrt(variance)


def simulate_flagged_worse(seed: int, datasets: int) -> tuple[float, float, float]:
    """Cells of 150–400 calls; 30% are flagged, and on them the judge is much worse (+2 and noise ±2, where
    on the plain calls it is +1 on 40% and ±1 on half). Every flagged call is reviewed; the random audit
    draws 15% of all calls, uniformly, as the hash does. Coverage of the cell's true mean human value
    (over every call) by the stratified interval and by the naive one; and the share of cells corrected."""
    rng = np.random.default_rng(seed)
    covered = naive_covered = corrected = 0
    for _ in range(datasets):
        calls = int(rng.integers(150, 401))
        human = rng.choice(LEVELS, size=calls, p=PROBABILITIES).astype(float)
        flagged = rng.random(calls) < 0.3
        plain_error = (rng.random(calls) < 0.4) + rng.choice([-1, 0, 0, 1], size=calls)
        flagged_error = 2 + rng.choice([-2, -1, 0, 1, 2], size=calls)
        judge = np.clip(human + np.where(flagged, flagged_error, plain_error), 1, 5)
        audited = rng.random(calls) < 0.15
        reviewed = flagged | audited
        truth = human.mean()
        got = scorecard_estimate(_cell_of(human, judge, flagged, audited, reviewed))
        if not got.corrected:
            continue
        corrected += 1
        covered += got.ci[0] <= truth <= got.ci[1]
        estimate, half_width = _single_correction(human, judge, audited, reviewed)
        naive_covered += abs(estimate - truth) <= half_width
    return covered / corrected, naive_covered / corrected, corrected / datasets


def test_the_stratified_interval_covers_where_a_single_correction_does_not():
    coverage, naive, corrected = simulate_flagged_worse(seed=25, datasets=2000)
    print(f"flagged calls worse and all reviewed, 2000 cells: stratified {coverage:.1%}, single correction {naive:.1%}")
    assert corrected > 0.99
    assert 0.93 <= coverage <= 0.97
    assert naive < 0.85  # 73.8% when measured: it applies the flagged calls' error to the plain calls


def simulate_small_audits(seed: int, datasets: int) -> tuple[float, float, float]:
    """One stratum, 10–30 audited calls among 100–600 (the judge +1 on 60% and ±1 on half, as before);
    coverage of the true mean with the t interval, and with the normal quantile instead; and the mean
    audited calls."""
    rng = np.random.default_rng(seed)
    covered = normal_covered = 0
    audited_calls = []
    for _ in range(datasets):
        calls = int(rng.integers(100, 601))
        n = int(rng.integers(10, 31))
        human = rng.choice(LEVELS, size=calls, p=PROBABILITIES).astype(float)
        judge = np.clip(human + (rng.random(calls) < 0.6) + rng.choice([-1, 0, 0, 1], size=calls), 1, 5)
        audited = np.zeros(calls, dtype=bool)
        audited[rng.choice(calls, size=n, replace=False)] = True
        got = scorecard_estimate(_cell_of(human, judge, np.zeros(calls, dtype=bool), audited, audited))
        truth = human.mean()
        covered += got.ci[0] <= truth <= got.ci[1]
        half_width = (got.ci[1] - got.ci[0]) / 2
        normal_covered += abs(got.estimate - truth) <= half_width * Z_95 / t_quantile(0.975, n - 1)
        audited_calls.append(n)
    return covered / datasets, normal_covered / datasets, float(np.mean(audited_calls))


def test_small_audits_need_the_t_quantile():
    coverage, normal, audited = simulate_small_audits(seed=30, datasets=2000)
    print(f"10–30 audited calls (mean {audited:.1f}), 2000 cells: t {coverage:.1%}, normal quantile {normal:.1%}")
    assert 0.93 <= coverage <= 0.97
    assert normal < coverage


def simulate_noisy_judge(seed: int, datasets: int) -> tuple[float, float, float]:
    """One stratum of 1,500–3,000 calls, 120–200 of them audited, a noisy judge (the human value explains
    little of it: slope of human on judge about 0.4). Coverage of the power-tuned interval, the share of
    cells tuned, and its mean width against plain PPI's on the same calls."""
    rng = np.random.default_rng(seed)
    covered = tuned = 0
    ratios = []
    for _ in range(datasets):
        calls = int(rng.integers(1500, 3001))
        n = int(rng.integers(120, 201))
        human = rng.choice(LEVELS, size=calls, p=PROBABILITIES).astype(float)
        judge = np.clip(np.round(human + rng.normal(0.5, 1.6, size=calls)), 1, 5)
        audited = np.zeros(calls, dtype=bool)
        audited[rng.choice(calls, size=n, replace=False)] = True
        flagged = np.zeros(calls, dtype=bool)
        got = scorecard_estimate(_cell_of(human, judge, flagged, audited, audited))
        truth = human.mean()
        covered += got.ci[0] <= truth <= got.ci[1]
        tuned += got.power_tuned
        m = (~audited).sum()
        difference = human[audited] - judge[audited]
        plain = (m / calls) * math.sqrt(difference.var(ddof=1) * (1 / n + 1 / m))
        ratios.append((got.ci[1] - got.ci[0]) / 2 / (t_quantile(0.975, n - 1) * plain))
    return covered / datasets, tuned / datasets, float(np.mean(ratios))


def test_a_noisy_judge_counts_for_less_from_100_audited_calls():
    coverage, tuned, width = simulate_noisy_judge(seed=100, datasets=1000)
    print(f"noisy judge, 120–200 audited calls, 1000 cells: PPI++ {coverage:.1%}, width {width:.0%} of plain PPI's")
    assert tuned == 1.0
    assert 0.93 <= coverage <= 0.97
    assert width < 0.95
