"""The scorecard estimator: a hand-worked example, pooling, and its coverage by simulation."""

from __future__ import annotations

import math
import random

import pytest

from reviews.reports.stats import (
    MIN_AUDITED,
    Z_95,
    CellSample,
    CorrectionLevel,
    Moments,
    scorecard_estimate,
)


def moments(values: list[float]) -> Moments:
    return Moments(len(values), float(sum(values)), float(sum(v * v for v in values)))


def sample(judged: list[int], audited: list[tuple[int, int | None]]) -> CellSample:
    """`audited`: (judge, human) of the audited calls, which are among `judged`; human None: no value."""
    pairs = [(judge, human) for judge, human in audited if human is not None]
    return CellSample(
        judged=moments(judged),
        human=moments([human for _, human in pairs]),
        difference=moments([human - judge for judge, human in pairs]),
        paired_human=moments([human for _, human in pairs]),
    )


def test_moments_give_the_textbook_mean_and_sample_variance():
    m = moments([2, 4, 4, 4, 5, 5, 7, 9])
    assert m.mean == 5.0
    assert m.variance == pytest.approx(32 / 7)
    assert Moments().mean is None and moments([3]).variance is None
    assert moments([1, 2]) + moments([3]) == moments([1, 2, 3])


def test_a_hand_worked_cell():
    """20 judged calls, 4 ten times and 2 ten times (judge mean 3); 10 of the 4s audited, the supervisor
    gave 3 on five and 4 on five: differences −1 ×5, 0 ×5 (mean −0.5, variance 2.5/9), human values
    3 ×5, 4 ×5 (mean 3.5, variance 2.5/9).

    estimate = 3 − 0.5 = 2.5
    variance = Var(human)/N + Var(diff)·(1/n − 1/N) = (2.5/9)/20 + (2.5/9)·(1/10 − 1/20) = 1/36
    interval = 2.5 ± 1.96 · 1/6
    """
    cell = sample([4] * 10 + [2] * 10, [(4, 3)] * 5 + [(4, 4)] * 5)
    got = scorecard_estimate(cell)
    assert (got.judged_n, got.audited_n, got.judge_mean, got.human_audit_mean) == (20, 10, 3.0, 3.5)
    assert got.estimate == pytest.approx(2.5)
    assert got.ci == pytest.approx((2.5 - Z_95 / 6, 2.5 + Z_95 / 6))
    assert (got.corrected, got.correction_level, got.correction_n) == (True, CorrectionLevel.CELL, 10)


def test_too_few_audited_calls_pool_at_the_team_then_the_rubric_else_stay_uncorrected():
    cell = sample([5] * 6, [(5, 1)] * 4)  # 4 audited: too few on its own
    team = sample([5] * 12, [(5, 1)] * 4 + [(5, 5)] * 6)  # 10 audited, mean difference −1.6
    small_team = sample([5] * 6, [(5, 1)] * 4)
    rubric = sample([5] * 6 + [3] * 30, [(5, 1)] * 4 + [(3, 3)] * 12)  # 16 audited, mean difference −1

    pooled = scorecard_estimate(cell, [(CorrectionLevel.TEAM, team), (CorrectionLevel.RUBRIC, rubric)])
    assert (pooled.correction_level, pooled.correction_n) == (CorrectionLevel.TEAM, 10)
    assert pooled.estimate == pytest.approx(3.4)
    assert pooled.audited_n == 4 and pooled.human_audit_mean == 1.0
    # Pooled: the pool's audit is other calls, so the two variances add.
    # Var(judge) is 0 (all 5s); the pool's differences, four −4 and six 0: mean −1.6, sum of squares 64,
    # variance (64 − 10 · 1.6²) / 9 = 38.4 / 9, over its 10 calls.
    half_width = Z_95 * math.sqrt(38.4 / 9 / 10)
    assert pooled.ci == pytest.approx((3.4 - half_width, 3.4 + half_width))

    to_rubric = scorecard_estimate(cell, [(CorrectionLevel.TEAM, small_team), (CorrectionLevel.RUBRIC, rubric)])
    assert (to_rubric.estimate, to_rubric.correction_level, to_rubric.correction_n) == (4.0, CorrectionLevel.RUBRIC, 16)

    alone = scorecard_estimate(cell, [(CorrectionLevel.TEAM, small_team)])
    assert (alone.estimate, alone.ci, alone.corrected, alone.correction_level) == (5.0, None, False, None)


def test_the_correction_needs_exactly_min_audited_calls():
    judged = [3] * 30
    assert not scorecard_estimate(sample(judged, [(3, 2)] * (MIN_AUDITED - 1))).corrected
    assert scorecard_estimate(sample(judged, [(3, 2)] * MIN_AUDITED)).corrected


def test_an_empty_cell_has_no_numbers():
    got = scorecard_estimate(CellSample())
    assert (got.judged_n, got.judge_mean, got.estimate, got.ci, got.corrected) == (0, None, None, None, False)


def simulate(rng: random.Random, datasets: int) -> tuple[float, float]:
    """Coverage of the corrected and of the naive judge-mean intervals over `datasets` synthetic agents.

    Each agent's calls have human values on 1–5 drawn with known probabilities (so a known true
    mean); the judge adds a bias (+1 on 60% of calls) and noise (±1 on half), clipped to the scale;
    each call is audited with probability 0.2.
    """
    levels, probabilities = [1, 2, 3, 4, 5], [0.10, 0.15, 0.25, 0.30, 0.20]
    true_mean = sum(level * p for level, p in zip(levels, probabilities, strict=True))
    corrected = naive = 0
    for _ in range(datasets):
        calls = rng.randint(150, 400)
        humans = rng.choices(levels, probabilities, k=calls)
        judges = [
            min(5, max(1, human + (rng.random() < 0.6) + rng.choice((-1, 0, 0, 1)))) for human in humans
        ]
        audited = [(judge, human) for judge, human in zip(judges, humans, strict=True) if rng.random() < 0.2]
        got = scorecard_estimate(sample(judges, audited))
        corrected += got.ci[0] <= true_mean <= got.ci[1]
        judged = moments(judges)
        half_width = Z_95 * math.sqrt(judged.variance / judged.n)
        naive += abs(judged.mean - true_mean) <= half_width
    return corrected / datasets, naive / datasets


def test_the_corrected_interval_covers_the_true_mean_and_the_naive_one_does_not():
    corrected, naive = simulate(random.Random(16), datasets=2000)
    print(f"coverage of the true mean over 2000 simulated agents: corrected {corrected:.1%}, naive {naive:.1%}")
    assert 0.93 <= corrected <= 0.97
    assert naive < 0.05  # almost never: it carries the judge's bias
