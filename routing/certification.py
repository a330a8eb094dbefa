"""Certifying a confidence threshold: fixed-sequence testing with an exact binomial (Clopper–Pearson) bound.

Pure module (no Django; numpy, and scipy's beta quantile). The method is "Trust or Escalate" (Jung et al., ICLR 2025), after
Bauer (1991) and Angelopoulos et al.'s Learn-then-Test (2021): for each candidate threshold λ, from the highest
down, test the null hypothesis "among values with confidence ≥ λ, agreement with the supervisor is below α" with
the one-sided exact binomial lower bound at level δ; stop at the first λ whose bound falls below α. Because the
candidates are tested in an order fixed before any agreement is looked at, the family-wise error is at most δ
with no correction: with probability at least 1 − δ over the audited sample, the certified threshold's kept
values agree at a rate of at least α.

The candidates are the distinct confidences of the audited pairs, above the point where even perfect agreement
could not pass: both depend only on the confidences, never on whether a pair agreed, so conditional on the
confidences the sequence is fixed and the guarantee holds as stated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta


def clopper_pearson_lower(successes: int, trials: int, risk: float) -> float:
    """The exact one-sided lower bound at confidence 1 − `risk` for a binomial proportion: the p at which
    seeing `successes` or more out of `trials` has probability `risk`. 0 with no trials or no successes."""
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be between 0 and trials, got {successes} of {trials}")
    if not 0 < risk < 1:
        raise ValueError(f"risk must be in (0, 1), got {risk}")
    if successes == 0:
        return 0.0
    return float(beta.ppf(risk, successes, trials - successes + 1))


def pairs_to_certify(*, target: float, risk: float) -> int:
    """The fewest pairs that can certify anything: n all agreeing passes when target ** n ≤ risk (the lower
    bound of n out of n is risk ** (1 / n)). 22 for a target of 0.9 at a risk of 0.1."""
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target}")
    if not 0 < risk < 1:
        raise ValueError(f"risk must be in (0, 1), got {risk}")
    n = math.ceil(math.log(risk) / math.log(target))
    # Floating point may land a hair either side of an integer ratio: the bound itself decides.
    while n > 1 and clopper_pearson_lower(n - 1, n - 1, risk) >= target:
        n -= 1
    while clopper_pearson_lower(n, n, risk) < target:
        n += 1
    return n


@dataclass(frozen=True)
class Step:
    """One candidate of the sequence: its threshold, the pairs at or above it, how many agree, their bound."""

    threshold: float
    pairs: int
    agreeing: int
    lower_bound: float
    passed: bool


@dataclass(frozen=True)
class Certificate:
    """What the audit supports for one criterion.

    `threshold` is None when nothing is certified: the criterion keeps the fixed threshold. `kept`, `agreeing`
    and `lower_bound` are the certified threshold's own (the audited values it would keep, how many agreed, the
    exact bound on their agreement, at least `target`); `coverage` is the share of audited values it keeps.
    `more_pairs_needed` is how many more audited pairs it takes before even perfect agreement could certify
    anything (0 once there are enough; more may still be needed if the judge disagrees often)."""

    target: float
    risk: float
    pairs: int
    threshold: float | None
    kept: int
    agreeing: int
    lower_bound: float | None
    coverage: float
    more_pairs_needed: int
    steps: tuple[Step, ...]

    @property
    def certified(self) -> bool:
        return self.threshold is not None


def certify(
    confidences: Sequence[float], agrees: Sequence[bool], *, target: float, risk: float
) -> Certificate:
    """Fixed-sequence testing of the thresholds, from the highest confidence down (module docstring).

    `confidences[i]` is the judge's confidence in an audited value and `agrees[i]` whether the supervisor agreed
    with it (by the rubric's tolerance)."""
    if len(confidences) != len(agrees):
        raise ValueError("one agreement per confidence")
    needed = pairs_to_certify(target=target, risk=risk)
    n = len(confidences)
    order = np.argsort(-np.asarray(confidences, dtype=float), kind="stable")
    ranked = np.asarray(confidences, dtype=float)[order]
    agreeing_so_far = np.cumsum(np.asarray(agrees, dtype=bool)[order])
    # Each distinct confidence is a candidate, with every pair at or above it (ties enter together): the last
    # index of each run of equal confidences.
    last = np.flatnonzero(np.append(ranked[1:] != ranked[:-1], True)) if n else np.array([], dtype=int)
    kept = last + 1
    # Fewer pairs than even perfect agreement needs: decided by the confidences alone, so left untested.
    last, kept = last[kept >= needed], kept[kept >= needed]
    agreeing = agreeing_so_far[last]
    # The bounds of every candidate at once (scipy's beta quantile is vectorised); 0 where nothing agreed.
    bounds = np.where(agreeing > 0, beta.ppf(risk, np.maximum(agreeing, 1), kept - agreeing + 1), 0.0)
    failures = np.flatnonzero(bounds < target)
    # The sequence stops at its first failure: that is what spends δ only once.
    tested = failures[0] + 1 if failures.size else len(kept)
    steps = tuple(
        Step(
            threshold=float(ranked[last[i]]),
            pairs=int(kept[i]),
            agreeing=int(agreeing[i]),
            lower_bound=float(bounds[i]),
            passed=bool(bounds[i] >= target),
        )
        for i in range(tested)
    )
    passed = [step for step in steps if step.passed]
    best = passed[-1] if passed else None
    return Certificate(
        target=target,
        risk=risk,
        pairs=n,
        threshold=best.threshold if best else None,
        kept=best.pairs if best else 0,
        agreeing=best.agreeing if best else 0,
        lower_bound=best.lower_bound if best else None,
        coverage=(best.pairs / n) if best and n else 0.0,
        more_pairs_needed=max(0, needed - n),
        steps=tuple(steps),
    )


def values_agree(judge: int | None, human: int | None, *, within_one: bool) -> bool:
    """Whether a supervisor agrees with a judge's value: the same value (or within one point, when the rubric
    says so); "does not apply" (None) agrees only with "does not apply"."""
    if judge is None or human is None:
        return judge is None and human is None
    return abs(judge - human) <= (1 if within_one else 0)
