"""The scorecard estimator against ppi-python (the authors' package for prediction-powered inference), a test
extra: where the two are the same estimator they must give the same numbers."""

from __future__ import annotations

import numpy as np
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from reviews.figures.stats import (
    POWER_TUNING_FROM,
    Z_95,
    CellSample,
    power_tuning,
    ppi_mean,
    scorecard_estimate,
)
from tests.scorecards.test_estimator import moments, pairs, stratum

LEVELS = np.array([1, 2, 3, 4, 5])
PROBABILITIES = np.array([0.10, 0.15, 0.25, 0.30, 0.20])


def _calls(rng: np.random.Generator, calls: int, audited: int, noise: float = 1.0):
    human = rng.choice(LEVELS, size=calls, p=PROBABILITIES).astype(float)
    judge = np.clip(np.round(human + rng.normal(0.4, noise, size=calls)), 1, 5)
    chosen = np.zeros(calls, dtype=bool)
    chosen[rng.choice(calls, size=audited, replace=False)] = True
    return human, judge, chosen


def test_one_stratum_reviewed_only_by_the_audit_is_ppi_with_lambda_n_minus_n_over_n():
    """With the audit's calls known and the rest estimated, the estimate is ppi-python's with
    λ = (N − n)/N, and the former unstratified estimator's (judge mean over every call plus the audit's
    mean difference), on 2,000 simulated cells."""
    rng = np.random.default_rng(2000)
    worst = 0.0
    for _ in range(2000):
        calls = int(rng.integers(40, 600))
        n = int(rng.integers(10, min(POWER_TUNING_FROM, calls - 2)))
        human, judge, audited = _calls(rng, calls, n)
        cell = CellSample(
            plain=stratum(audit=zip(human[audited], judge[audited], strict=True), estimated=judge[~audited])
        )
        mine = scorecard_estimate(cell).estimate
        lam = (calls - n) / calls
        low, high = ppi_mean_ci(human[audited], judge[audited], judge[~audited], alpha=0.05, lam=lam)
        theirs = ppi_mean_pointestimate(human[audited], judge[audited], judge[~audited], lam=lam)
        former = judge.mean() + (human[audited] - judge[audited]).mean()
        worst = max(worst, abs(mine - theirs[0]), abs(mine - (low[0] + high[0]) / 2), abs(mine - former))
    print(f"largest difference from ppi-python's estimate over 2000 cells: {worst:.1e}")
    assert worst < 1e-12


@pytest.mark.parametrize("tuned", [False, True])
def test_ppi_mean_is_ppi_pythons_for_the_same_lambda(tuned):
    """The prediction-powered mean and its interval, plain (λ = 1) or with our power tuning's λ; the
    interval is the same up to the variances' denominators (n − 1 here, n there)."""
    rng = np.random.default_rng(11 + tuned)
    for _ in range(200):
        calls = int(rng.integers(400, 3000))
        n = int(rng.integers(POWER_TUNING_FROM, 300)) if tuned else int(rng.integers(10, 100))
        human, judge, audited = _calls(rng, calls, n, noise=1.5)
        labeled = pairs(zip(human[audited], judge[audited], strict=True))
        lam = power_tuning(labeled) if tuned else 1.0
        assert lam is not None and 0 <= lam <= 1
        mean, parts = ppi_mean(moments(judge[~audited]), labeled, lam)
        half_width = Z_95 * np.sqrt(sum(variance for variance, _ in parts))
        low, high = ppi_mean_ci(human[audited], judge[audited], judge[~audited], alpha=0.05, lam=lam)
        assert mean == pytest.approx((low[0] + high[0]) / 2, abs=1e-12)
        assert half_width == pytest.approx((high[0] - low[0]) / 2, rel=1 / n)


def test_our_power_tuning_matches_ppi_pythons():
    """ppi-python tunes λ itself (Cov(human, judge) / ((1 + n/N) Var(judge)), the judge's variance over all
    calls); ours is the audit's slope. With an audit of a few hundred among thousands the two intervals
    agree to within 1% of their width, and their centres, whose λ differ by the sampling of the judge's
    variance and the factor 1 + n/N, by a fifth of its half-width at most (17% when measured): the same
    estimator with a slightly different λ, where for the same λ the two are equal (above)."""
    rng = np.random.default_rng(100)
    widths, centres = [], []
    for _ in range(100):
        calls = int(rng.integers(3000, 8000))
        n = int(rng.integers(150, 400))
        human, judge, audited = _calls(rng, calls, n, noise=1.8)
        labeled = pairs(zip(human[audited], judge[audited], strict=True))
        lam = power_tuning(labeled)
        assert lam < 0.9  # a noisy judge: tuning matters
        mean, parts = ppi_mean(moments(judge[~audited]), labeled, lam)
        half_width = Z_95 * np.sqrt(sum(variance for variance, _ in parts))
        low, high = ppi_mean_ci(human[audited], judge[audited], judge[~audited], alpha=0.05)
        widths.append(abs(half_width / ((high[0] - low[0]) / 2) - 1))
        centres.append(abs(mean - (low[0] + high[0]) / 2) / half_width)
    print(f"PPI++ against ppi-python's: widths within {max(widths):.2%}, centres within {max(centres):.1%} of it")
    assert max(widths) < 0.01
    assert max(centres) < 0.2
