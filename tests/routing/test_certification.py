"""The certification's statistics (routing.certification): the exact bound against its closed forms, a bisection
written here from the binomial tail, and scipy's binomtest; the fixed-sequence test on a worked example; and the
guarantee itself by fixed-seed simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from routing.certification import certify, clopper_pearson_lower, pairs_to_certify, values_agree


def tail_at_least(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))


def bisected_lower(k: int, n: int, risk: float) -> float:
    """The p where P(X ≥ k) = risk, by bisection on the binomial tail (which rises with p)."""
    low, high = 0.0, 1.0
    for _ in range(100):
        middle = (low + high) / 2
        if tail_at_least(k, n, middle) < risk:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def test_all_agreeing_has_the_closed_form_risk_to_the_one_over_n():
    # n of n: P(X ≥ n) = p^n = δ, so the bound is δ^(1/n); 20 of 20 at 95%: 0.05^(1/20) = 0.8609.
    assert clopper_pearson_lower(20, 20, 0.05) == pytest.approx(0.860891659, abs=1e-9)
    for n in (1, 5, 22, 100):
        assert clopper_pearson_lower(n, n, 0.1) == pytest.approx(0.1 ** (1 / n), rel=1e-12)


def test_one_success_has_the_closed_form():
    # 1 of n: P(X ≥ 1) = 1 − (1 − p)^n = δ, so p = 1 − (1 − δ)^(1/n).
    assert clopper_pearson_lower(1, 10, 0.1) == pytest.approx(1 - 0.9 ** (1 / 10), rel=1e-12)
    assert clopper_pearson_lower(0, 10, 0.1) == 0.0


@pytest.mark.parametrize(("k", "n", "risk"), [(18, 20, 0.1), (45, 50, 0.05), (7, 30, 0.1), (199, 210, 0.2)])
def test_the_bound_matches_a_bisection_of_the_tail_and_scipys_binomtest(k, n, risk):
    bound = clopper_pearson_lower(k, n, risk)
    assert bound == pytest.approx(bisected_lower(k, n, risk), abs=1e-10)
    # scipy: the one-sided exact interval [low, 1] at confidence 1 − δ.
    scipy_low = binomtest(k, n, alternative="greater").proportion_ci(confidence_level=1 - risk, method="exact").low
    assert bound == pytest.approx(scipy_low, abs=1e-12)
    # and the two-sided interval at 1 − 2δ has the same lower end.
    assert bound == pytest.approx(binomtest(k, n).proportion_ci(confidence_level=1 - 2 * risk, method="exact").low, abs=1e-12)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="successes"):
        clopper_pearson_lower(5, 4, 0.1)
    with pytest.raises(ValueError, match="risk"):
        clopper_pearson_lower(1, 4, 0.0)
    with pytest.raises(ValueError, match="target"):
        pairs_to_certify(target=1.0, risk=0.1)
    with pytest.raises(ValueError, match="one agreement per confidence"):
        certify([0.5], [], target=0.9, risk=0.1)


def test_the_fewest_pairs_that_can_certify():
    # 0.9^21 = 0.109 > 0.1, 0.9^22 = 0.098 ≤ 0.1: 22 pairs, all agreeing, at the defaults.
    assert pairs_to_certify(target=0.9, risk=0.1) == 22
    assert pairs_to_certify(target=0.8, risk=0.05) == 14  # 0.8^13 = 0.055, 0.8^14 = 0.044
    assert pairs_to_certify(target=0.5, risk=0.5) == 1


def test_a_worked_example_of_the_fixed_sequence():
    """30 audited pairs at the defaults (α 0.9, δ 0.1; 22 pairs before anything is tested). Confidences 0.99 down
    to 0.70 by 0.01; the supervisor disagreed at 0.85 (16th from the top), 0.75 (26th) and 0.74 (27th).

    - 0.99 … 0.79: fewer than 22 pairs (21 at 0.79), untested;
    - 0.78: 22 pairs, 21 agree: bound = the p with P(X ≥ 21 | 22, p) = 22 p^21 (1 − p) + p^22 = 0.1, which is
      0.8344 (22 × 0.8344^21 × 0.1656 + 0.8344^22 = 0.0813 + 0.0186) < 0.9: fails, the sequence stops.

    Nothing certified. With the disagreement at 0.85 moved to 0.72 (the 28th):
    - 0.78: 22 of 22 → 0.1^(1/22) = 0.9006 ≥ 0.9, passes; 0.77: 23 of 23 → 0.9048, 0.76: 24 of 24 → 0.9085;
    - 0.75: 24 of 25 → 0.8531 < 0.9, fails: the certified threshold is 0.76, keeping 24 of the 30 (coverage 0.8).
    """
    confidences = [round(0.99 - 0.01 * i, 2) for i in range(30)]
    disagree = {0.85, 0.75, 0.74}
    result = certify(confidences, [c not in disagree for c in confidences], target=0.9, risk=0.1)
    assert not result.certified
    assert [(s.threshold, s.pairs, s.agreeing) for s in result.steps] == [(0.78, 22, 21)]
    assert result.steps[0].lower_bound == pytest.approx(bisected_lower(21, 22, 0.1), abs=1e-10)
    assert result.steps[0].lower_bound == pytest.approx(0.8344, abs=1e-4)
    assert result.more_pairs_needed == 0 and result.coverage == 0.0

    disagree = {0.72, 0.75, 0.74}
    result = certify(confidences, [c not in disagree for c in confidences], target=0.9, risk=0.1)
    assert [(s.threshold, s.pairs, s.agreeing, s.passed) for s in result.steps] == [
        (0.78, 22, 22, True), (0.77, 23, 23, True), (0.76, 24, 24, True), (0.75, 25, 24, False),
    ]  # fmt: skip
    assert result.steps[0].lower_bound == pytest.approx(0.1 ** (1 / 22))
    assert result.steps[-1].lower_bound == pytest.approx(0.8531, abs=1e-4)
    assert result.threshold == 0.76 and result.kept == 24 and result.agreeing == 24
    assert result.coverage == pytest.approx(0.8)
    assert result.lower_bound == pytest.approx(0.1 ** (1 / 24))


def test_too_few_pairs_says_how_many_more():
    result = certify([0.9] * 15, [True] * 15, target=0.9, risk=0.1)
    assert not result.certified and result.more_pairs_needed == 7 and result.steps == ()
    assert certify([], [], target=0.9, risk=0.1).more_pairs_needed == 22


def test_ties_enter_together():
    # 30 pairs all at one confidence: one candidate, all 30 pairs, 29 agreeing: the bound 0.8764 < 0.9.
    result = certify([0.8] * 30, [True] * 29 + [False], target=0.9, risk=0.1)
    assert [(s.threshold, s.pairs, s.agreeing) for s in result.steps] == [(0.8, 30, 29)]
    assert result.steps[0].lower_bound == pytest.approx(0.8764, abs=1e-4)
    assert not result.certified


def test_agreement_by_tolerance():
    assert values_agree(3, 3, within_one=False) and not values_agree(3, 4, within_one=False)
    assert values_agree(3, 4, within_one=True) and not values_agree(3, 5, within_one=True)
    assert values_agree(None, None, within_one=False)
    assert not values_agree(None, 1, within_one=True) and not values_agree(1, None, within_one=True)


def test_the_bound_covers_at_its_level_by_simulation():
    """At the true agreement p, the bound exceeds p in at most δ of samples (exact: at most, conservatively)."""
    rng = np.random.default_rng(40)
    for n, p, risk in [(30, 0.9, 0.1), (200, 0.85, 0.05)]:
        draws = rng.binomial(n, p, size=4000)
        misses = np.mean([clopper_pearson_lower(int(k), n, risk) > p for k in draws])
        assert misses <= risk + 3 * math.sqrt(risk * (1 - risk) / 4000)


def test_the_guarantee_holds_for_an_overconfident_judge_by_simulation():
    """A judge whose agreement rises with its confidence c as 0.5 + 0.5 c^2 (so values above 0.75 agree 78-100%).
    Certify on 400 audited values, measure on 20,000 fresh ones: the kept values agree at 0.9 or more in at least
    90% of 400 repetitions (fixed seed), and the fixed 0.75 rule's kept values do not (they agree about 88%)."""
    rng = np.random.default_rng(2026)
    target, risk = 0.9, 0.1

    def draw(size):
        confidence = rng.uniform(0, 1, size)
        return confidence, rng.uniform(0, 1, size) < 0.5 + 0.5 * confidence**2

    held = fixed_held = 0
    repetitions = 400
    for _ in range(repetitions):
        confidence, agrees = draw(400)
        result = certify(confidence.tolist(), agrees.tolist(), target=target, risk=risk)
        fresh_confidence, fresh_agrees = draw(20_000)
        if result.certified:
            kept = fresh_confidence >= result.threshold
            held += fresh_agrees[kept].mean() >= target
        else:
            held += 1  # nothing kept: every value reviewed, nothing unreviewed can disagree
        fixed_held += fresh_agrees[fresh_confidence >= 0.75].mean() >= target
    assert held / repetitions >= 1 - risk
    assert fixed_held / repetitions < 0.05
