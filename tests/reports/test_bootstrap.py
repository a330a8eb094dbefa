"""The paired bootstrap: a worked case small enough to enumerate by hand, and
its intervals' coverage by simulation with a fixed seed."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from reviews.figures.stats import bootstrap_resamples, paired_bootstrap, quadratic_weighted_kappa


def test_two_recordings_worked_by_hand():
    # Recording A: both arms agree with the human (|b-h| = |c-h| = 0, difference 0).
    # Recording B: baseline 3, candidate 1, human 1 (difference |1-1| - |3-1| = -2).
    # Resampling two recordings: B drawn 0, 1 or 2 times with probability 1/4, 1/2, 1/4,
    # so the MAE delta is 0, -1 or -2 with those probabilities, and the observed one is -1.
    triples = {(1, 1, 1): 1, (3, 1, 1): 1}
    draws = bootstrap_resamples([1, 1], resamples=4000, seed=7)
    frequency = Counter(draws[:, 1].tolist())
    assert {k: round(v / 4000, 2) for k, v in frequency.items()} == pytest.approx({0: 0.25, 1: 0.5, 2: 0.25}, abs=0.02)

    delta = paired_bootstrap(triples, resamples=4000, seed=7)

    assert delta.n == 2 and delta.mae_delta == -1.0
    # 2.5 % and 97.5 % of a distribution with a quarter of its mass at each end: the ends themselves.
    assert delta.mae_delta_ci == (-2.0, 0.0)


def test_qwk_delta_matches_the_module_kappa_and_identical_arms_give_zero():
    triples = {(1, 2, 1): 3, (2, 2, 2): 4, (3, 3, 4): 2, (4, 5, 5): 3, (5, 4, 5): 1}
    baseline = Counter()
    candidate = Counter()
    for (b, c, h), count in triples.items():
        baseline[(b, h)] += count
        candidate[(c, h)] += count

    delta = paired_bootstrap(triples)

    assert delta.qwk_delta == pytest.approx(quadratic_weighted_kappa(candidate) - quadratic_weighted_kappa(baseline))
    same = paired_bootstrap({(b, b, h): count for (b, _, h), count in triples.items()})
    assert same.mae_delta == 0 and same.mae_delta_ci == (0.0, 0.0)
    assert same.qwk_delta == 0 and same.qwk_delta_ci == (0.0, 0.0)


def test_the_vectorised_kappa_is_the_module_kappa_on_every_resample():
    from reviews.figures.stats import _qwk

    rng = random.Random(3)
    cells = [(rng.randint(1, 5), rng.randint(1, 5)) for _ in range(12)]
    draws = bootstrap_resamples([rng.randint(1, 6) for _ in cells], resamples=50, seed=1)
    model = np.array([m for m, _ in cells], dtype=float)
    human = np.array([h for _, h in cells], dtype=float)
    for row, kappa in zip(draws, _qwk(draws, model, human), strict=True):
        matrix = Counter()
        for (m, h), count in zip(cells, row, strict=True):
            matrix[(m, h)] += int(count)
        expected = quadratic_weighted_kappa(matrix)
        assert (np.isnan(kappa) and expected is None) or kappa == pytest.approx(expected)


def _population(rng: random.Random, n: int) -> Counter:
    """Human values uniform on 1..5; the baseline is one point off half the time,
    the candidate 30 % of the time (always towards the middle, so never off the scale)."""
    triples: Counter = Counter()
    for _ in range(n):
        human = rng.randint(1, 5)
        step = 1 if human < 3 else -1

        def off(rate: float) -> int:
            return human + step if rng.random() < rate else human

        triples[(off(0.5), off(0.3), human)] += 1
    return triples


def test_the_intervals_cover_the_true_delta_about_95_percent_of_the_time():
    rng = random.Random(20261130)
    # The truth: the MAE delta is -0.2 by construction; the QWK delta's truth is taken from a huge sample.
    truth = paired_bootstrap(_population(rng, 400_000), resamples=10)
    assert truth.mae_delta == pytest.approx(-0.2, abs=0.005)
    experiments, mae_covered, qwk_covered = 300, 0, 0
    for index in range(experiments):
        delta = paired_bootstrap(_population(rng, 120), resamples=1000, seed=index)
        mae_covered += delta.mae_delta_ci[0] <= -0.2 <= delta.mae_delta_ci[1]
        qwk_covered += delta.qwk_delta_ci[0] <= truth.qwk_delta <= delta.qwk_delta_ci[1]
    # 95 % nominal; with 300 experiments the binomial spread is about ±2.5 points.
    assert 0.90 <= mae_covered / experiments <= 0.99
    assert 0.90 <= qwk_covered / experiments <= 0.99


def test_no_pairs_no_figures():
    delta = paired_bootstrap({})
    assert delta.n == 0 and delta.mae_delta is None and delta.mae_delta_ci is None and delta.qwk_delta_ci is None
