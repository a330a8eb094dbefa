"""Did the coaching work? Pure statistics, no database: per coached criterion, the agent's estimate before and
after the session (the scorecards' estimator, reviews.figures.stats.scorecard_estimate: the known human values
and the judge's verified values corrected by the random audit, with its interval), their difference with an
interval, the same difference for the rest of the agent's team over the same dates, and the difference of the
two (a simple difference-in-differences: a rubric change or a seasonal shift moves the team too, so it does
not count as coaching).

What is estimated: as for a scorecard cell, the mean human value of the calls in each period (the human value a
supervisor would give each call). Before and after are different calls, and the rest of the team's are other
agents' calls, so the variances of the four estimates add, each as the parts the estimator reports
(`Estimate.variance_parts`), with Welch–Satterthwaite's degrees of freedom for the t quantile. Where a pool
corrects both the agent and the rest of the team (an agent with fewer than MIN_AUDITED audited calls of their
own borrows the team's audit), the two share audit pairs; the interval then ignores that covariance, which the
simulation in tests/coaching/test_effect.py measures.

Too thin: either of the agent's estimates has no interval (no calls, or too few audited calls to correct the
judge even pooled), or the difference-in-differences is wider than READABLE_HALF_WIDTH of the criterion's scale
either way. Then `more_audited` says about how many more audited calls (randomly drawn and reviewed) of the
agent would make it readable: the MIN_AUDITED a correction needs, or, for a wide interval, the audit that would
narrow it to the readable width if its variance fell as one over the number of audited calls.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from reviews.figures.stats import (
    MIN_AUDITED,
    CellSample,
    CorrectionLevel,
    Estimate,
    satterthwaite,
    scorecard_estimate,
    t_quantile,
)

READABLE_HALF_WIDTH = 0.25  # of the criterion's scale (max − min): a difference known to within a quarter of it


@dataclass(frozen=True)
class Difference:
    """later − earlier, with its 95% interval; None where either side has no interval."""

    estimate: float | None
    ci: tuple[float, float] | None
    variance_parts: tuple[tuple[float, float], ...] = ()

    @property
    def half_width(self) -> float | None:
        return None if self.ci is None else (self.ci[1] - self.ci[0]) / 2


def _parts(item: Estimate | Difference) -> tuple[tuple[float, float], ...]:
    return item.variance_parts


def difference(later: Estimate | Difference, earlier: Estimate | Difference) -> Difference:
    """The difference of two independent estimates (or differences) with their variances added."""
    if later.estimate is None or earlier.estimate is None or later.ci is None or earlier.ci is None:
        return Difference(None, None)
    parts = _parts(later) + _parts(earlier)
    value = later.estimate - earlier.estimate
    variance = sum(v for v, _ in parts)
    half = t_quantile(0.975, satterthwaite(parts)) * math.sqrt(variance) if variance > 0 else 0.0
    return Difference(value, (value - half, value + half), parts)


@dataclass(frozen=True)
class CriterionEffect:
    before: Estimate
    after: Estimate
    change: Difference  # the agent's after − before
    team_before: Estimate  # the rest of the team (the agent's calls left out)
    team_after: Estimate
    team_change: Difference
    effect: Difference  # change − team_change: the difference-in-differences
    audited_share: float | None  # of the agent's calls behind before and after, the share audited
    too_thin: bool
    more_audited: int  # about how many more audited calls would make it readable; 0 when readable


def criterion_effect(
    *,
    before: CellSample,
    after: CellSample,
    team_before: CellSample,
    team_after: CellSample,
    rubric_before: CellSample | None = None,
    rubric_after: CellSample | None = None,
    scale: tuple[int, int] = (1, 5),
) -> CriterionEffect:
    """The effect on one criterion. `before`/`after`: the agent's calls in each period; `team_*`: the rest of
    the agent's team's; `rubric_*`: every call of the rubric in the period (the last pool a correction may
    borrow from, as on a scorecard). The agent's estimate is corrected as a scorecard corrects an agent's
    cell: its own audit, else the team's (the agent's and the rest's), else the rubric's."""

    def estimates(agent: CellSample, rest: CellSample, rubric: CellSample | None) -> tuple[Estimate, Estimate]:
        rubric_pool = [(CorrectionLevel.RUBRIC, rubric)] if rubric is not None else []
        team = agent + rest
        return (
            scorecard_estimate(agent, [(CorrectionLevel.TEAM, team), *rubric_pool]),
            scorecard_estimate(rest, rubric_pool),
        )

    agent_before, rest_before = estimates(before, team_before, rubric_before)
    agent_after, rest_after = estimates(after, team_after, rubric_after)
    change = difference(agent_after, agent_before)
    team_change = difference(rest_after, rest_before)
    effect = difference(change, team_change)
    calls = sum(e.known_n + e.estimated_n for e in (agent_before, agent_after))
    audited = agent_before.audited_n + agent_after.audited_n
    share = audited / calls if calls else None
    too_thin, more = _readability(agent_before, agent_after, effect, scale)
    return CriterionEffect(
        before=agent_before, after=agent_after, change=change, team_before=rest_before, team_after=rest_after,
        team_change=team_change, effect=effect, audited_share=share, too_thin=too_thin, more_audited=more,
    )  # fmt: skip


def more_audited_for(half_width: float, target: float, audited: int) -> int:
    """How many more audited calls would bring an interval of `half_width`, resting on `audited` audited calls,
    to `target`, if its variance fell as 1/audited: audited·((half_width/target)² − 1), rounded up."""
    if half_width <= target:
        return 0
    return max(1, math.ceil(max(audited, 1) * ((half_width / target) ** 2 - 1)))


def _readability(before: Estimate, after: Estimate, effect: Difference, scale: tuple[int, int]) -> tuple[bool, int]:
    target = READABLE_HALF_WIDTH * (scale[1] - scale[0])
    missing = [max(MIN_AUDITED - e.audited_n, 1) for e in (before, after) if e.ci is None]
    if missing:
        return True, sum(missing)
    if effect.ci is None:  # the team's side has no interval: the agent's own audit cannot fix that
        return True, 0
    audited = before.correction_n + after.correction_n
    more = more_audited_for(effect.half_width, target, audited)
    return more > 0, more


def pooled(samples: Sequence[CellSample]) -> CellSample:
    total = CellSample()
    for sample in samples:
        total += sample
    return total


def mean_difference(differences: Sequence[Difference]) -> Difference:
    """The mean of independent differences (the effects of several sessions: different agents, or one agent's
    sessions over different dates), with its interval: each variance part scaled by 1/k², Welch–Satterthwaite's
    degrees of freedom over all of them. Those without an interval are left out; none: no mean."""
    usable = [d for d in differences if d.estimate is not None and d.ci is not None]
    if not usable:
        return Difference(None, None)
    k = len(usable)
    parts = tuple((variance / k**2, df) for d in usable for variance, df in d.variance_parts)
    value = sum(d.estimate for d in usable) / k
    variance = sum(v for v, _ in parts)
    half = t_quantile(0.975, satterthwaite(parts)) * math.sqrt(variance) if variance > 0 else 0.0
    return Difference(value, (value - half, value + half), parts)
