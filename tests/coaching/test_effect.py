"""The "did it work" statistics (coaching.effect): a worked example computed independently (NumPy and SciPy's t),
and the coverage of the 95% intervals over 1,000 simulated coachings with a fixed seed, with and without a true
effect, a seasonal shift of the whole team in both."""

import math
import time

import numpy as np
import pytest
from scipy import stats as scipy_stats

from coaching.effect import READABLE_HALF_WIDTH, Difference, criterion_effect, difference, mean_difference, more_audited_for
from reviews.figures.stats import MIN_AUDITED, CellSample, Moments, Pairs, StratumSample


def cell(judge, human, audited) -> CellSample:
    """A plain-stratum cell: every judge value verified; the `audited` calls reviewed (their human value
    known and paired with the judge's), the rest estimated from the judge."""
    judge, human, audited = np.asarray(judge, float), np.asarray(human, float), np.asarray(audited, bool)
    j, h, jn = judge[audited], human[audited], judge[~audited]

    def moments(x):
        return Moments(len(x), float(x.sum()), float((x**2).sum()))

    return CellSample(
        plain=StratumSample(
            judged=moments(judge), known=moments(h), estimated=moments(jn), human=moments(h),
            audit=Pairs(len(j), float(h.sum()), float(j.sum()), float((h**2).sum()), float((j**2).sum()), float((h * j).sum())),
        )
    )  # fmt: skip


def by_hand(judge, human, audited):
    """The estimator written out for one plain stratum: known humans plus PPI on the rest; its variance."""
    judge, human, audited = np.asarray(judge, float), np.asarray(human, float), np.asarray(audited, bool)
    resid = human[audited] - judge[audited]
    m, n = (~audited).sum(), audited.sum()
    calls = len(judge)
    estimate = (human[audited].sum() + m * (judge[~audited].mean() + resid.mean())) / calls
    variance = (m / calls) ** 2 * resid.var(ddof=1) * (1 / n + 1 / m)
    return estimate, variance, n - 1


def test_worked_example():
    # The agent before (12 calls, 10 audited as the first ten) and after (12, 10 audited); the rest of the team
    # before and after (14 calls each, 10 audited).
    rng = np.random.default_rng(7)
    sides = {}
    for name, n, shift in [("before", 12, 0.0), ("after", 12, 1.0), ("team_before", 14, 0.0), ("team_after", 14, 0.3)]:
        human = rng.integers(1, 6, n).astype(float) + shift
        judge = human + rng.normal(0.4, 0.7, n)
        audited = np.arange(n) < 10
        sides[name] = (judge, human, audited)
    effect = criterion_effect(**{name: cell(*data) for name, data in sides.items()}, scale=(1, 5))
    hand = {name: by_hand(*data) for name, data in sides.items()}
    assert effect.before.estimate == pytest.approx(hand["before"][0])
    assert effect.after.estimate == pytest.approx(hand["after"][0])
    assert effect.team_after.estimate == pytest.approx(hand["team_after"][0])

    def welch(names, signs):
        value = sum(s * hand[k][0] for k, s in zip(names, signs))
        variance = sum(hand[k][1] for k in names)
        df = variance**2 / sum(hand[k][1] ** 2 / hand[k][2] for k in names)
        # Welch–Satterthwaite's fractional df rounded down, the estimator's convention (a slightly wider interval).
        half = scipy_stats.t.ppf(0.975, math.floor(df)) * math.sqrt(variance)
        return value, (value - half, value + half)

    change, change_ci = welch(["after", "before"], [1, -1])
    assert effect.change.estimate == pytest.approx(change)
    assert effect.change.ci == pytest.approx(change_ci, rel=1e-9)
    did, did_ci = welch(["after", "before", "team_after", "team_before"], [1, -1, -1, 1])
    assert effect.effect.estimate == pytest.approx(did)
    assert effect.effect.ci == pytest.approx(did_ci, rel=1e-9)
    # 20 of the agent's 24 calls audited.
    assert effect.audited_share == pytest.approx(20 / 24)


def test_too_thin_says_how_many_more_audited_calls():
    rng = np.random.default_rng(1)
    human = rng.integers(1, 6, 30).astype(float)
    judge = human + 0.5
    few = np.arange(30) < 4  # 4 audited: no correction, and no team or rubric pool to borrow from
    team = cell(judge, human, np.arange(30) < 0)
    effect = criterion_effect(before=cell(judge, human, few), after=cell(judge, human, few), team_before=team, team_after=team)
    assert effect.too_thin and effect.before.ci is None and effect.change.ci is None
    assert effect.more_audited == 2 * (MIN_AUDITED - 4)


def test_more_audited_for_reaches_the_target_when_variance_falls_as_one_over_n():
    half, audited, target = 1.3, 20, 0.5
    more = more_audited_for(half, target, audited)
    # With variance ∝ 1/n, the half-width after `more` is half·sqrt(n/(n+more)): at most the target,
    # and one call fewer would not reach it.
    assert half * math.sqrt(audited / (audited + more)) <= target
    assert half * math.sqrt(audited / (audited + more - 1)) > target
    assert more_audited_for(0.4, target, audited) == 0


def test_a_difference_of_estimates_without_an_interval_has_none():
    empty = criterion_effect(before=CellSample(), after=CellSample(), team_before=CellSample(), team_after=CellSample())
    assert empty.change.estimate is None and empty.effect.ci is None and empty.too_thin
    assert difference(empty.after, empty.before).ci is None


def simulate(rng, coachings, effect, *, agent_calls=60, team_calls=300, audit_share=0.25):
    """`coachings` coachings at once: each agent's human values before and after (the after moved by `effect`
    and by a seasonal shift that moves the whole team), the judge's (biased by 0.4, noisy), a random audit."""
    shape_a, shape_t = (coachings, agent_calls), (coachings, team_calls)
    base = rng.normal(3.0, 0.5, (coachings, 1))  # each agent's own level
    season = rng.normal(0.0, 0.3, (coachings, 1))  # the team's shift between the periods

    def side(shape, level):
        human = np.clip(np.rint(level + rng.normal(0, 0.9, shape)), 1, 5)
        judge = np.clip(np.rint(human + 0.4 + rng.normal(0, 0.7, shape)), 1, 5)
        audited = rng.random(shape) < audit_share
        audited[:, :2] = True  # at least two pairs, so a variance exists
        return judge, human, audited

    return {
        "before": side(shape_a, base), "after": side(shape_a, base + season + effect),
        "team_before": side(shape_t, 3.0), "team_after": side(shape_t, 3.0 + season),
    }  # fmt: skip


@pytest.mark.parametrize("true_effect", [0.0, 0.5])
def test_coverage_of_the_95_intervals_over_1000_simulated_coachings(true_effect):
    started = time.monotonic()
    rng = np.random.default_rng(20261203 + int(true_effect * 10))
    sides = simulate(rng, 1000, true_effect)
    covered_change = covered_effect = readable = 0
    for i in range(1000):
        data = {name: (j[i], h[i], a[i]) for name, (j, h, a) in sides.items()}
        result = criterion_effect(**{name: cell(*d) for name, d in data.items()})
        truth = {name: d[1].mean() for name, d in data.items()}
        change = truth["after"] - truth["before"]
        did = change - (truth["team_after"] - truth["team_before"])
        covered_change += result.change.ci[0] <= change <= result.change.ci[1]
        covered_effect += result.effect.ci[0] <= did <= result.effect.ci[1]
        readable += not result.too_thin
    print(f"effect {true_effect}: change {covered_change / 10:.1f}%, did {covered_effect / 10:.1f}%, readable {readable}")
    assert 93.0 <= covered_change / 10 <= 97.0
    assert 93.0 <= covered_effect / 10 <= 97.0
    assert readable > 900  # 15 audited calls a period on a 1–5 scale: readable within ±1 (READABLE_HALF_WIDTH)
    assert READABLE_HALF_WIDTH == 0.25
    assert time.monotonic() - started < 20


def test_the_mean_of_several_sessions_effects():
    # Two sessions' effects: 1.0 with variance 0.04 on 9 df, 0.4 with variance 0.09 on 14 df (worked by hand:
    # mean 0.7, variance (0.04 + 0.09)/4 = 0.0325, df 0.13²/(0.04²/9 + 0.09²/14) = 22.88, rounded down to 22).
    a = Difference(1.0, (0.0, 2.0), ((0.04, 9.0),))
    b = Difference(0.4, (0.0, 1.0), ((0.09, 14.0),))
    mean = mean_difference([a, b, Difference(None, None)])
    half = scipy_stats.t.ppf(0.975, 22) * math.sqrt(0.0325)
    assert mean.estimate == pytest.approx(0.7)
    assert mean.ci == pytest.approx((0.7 - half, 0.7 + half), rel=1e-9)
    assert mean_difference([Difference(None, None)]).ci is None
