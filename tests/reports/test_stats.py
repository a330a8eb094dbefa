"""QWK against a textbook computation over the criterion's full k×k scale."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from reviews.figures.stats import PairCount, agreement, quadratic_weighted_kappa


def textbook_qwk(pairs: list[tuple[int, int]], scale_min: int, scale_max: int) -> float:
    """Cohen (1968) as usually taught: full matrices, normalized weights, no shortcuts."""
    k = scale_max - scale_min + 1
    observed = [[0.0] * k for _ in range(k)]
    for model, human in pairs:
        observed[model - scale_min][human - scale_min] += 1
    n = len(pairs)
    rows = [sum(observed[i]) for i in range(k)]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    weights = [[(i - j) ** 2 / (k - 1) ** 2 for j in range(k)] for i in range(k)]
    numerator = sum(weights[i][j] * observed[i][j] for i in range(k) for j in range(k))
    denominator = sum(weights[i][j] * rows[i] * cols[j] / n for i in range(k) for j in range(k))
    return 1 - numerator / denominator


scale = st.tuples(st.integers(-2, 3), st.integers(1, 6)).map(lambda t: (t[0], t[0] + t[1]))


@given(
    scale.flatmap(lambda s: st.tuples(st.just(s), st.lists(st.tuples(st.integers(*s), st.integers(*s)), min_size=1)))
)
def test_qwk_matches_the_textbook_computation(case):
    (low, high), pairs = case
    got = quadratic_weighted_kappa(Counter(pairs))
    if len(set(pairs)) == 1 and pairs[0][0] == pairs[0][1]:
        assert got is None  # one value on both sides: 0/0
    else:
        assert abs(got - textbook_qwk(pairs, low, high)) < 1e-9


def test_qwk_known_values():
    # Perfect agreement with variation, chance-level (constant model), and total reversal.
    assert quadratic_weighted_kappa(Counter({(1, 1): 2, (3, 3): 1})) == 1.0
    assert quadratic_weighted_kappa(Counter({(3, 1): 1, (3, 5): 1})) == 0.0
    assert quadratic_weighted_kappa(Counter({(1, 5): 1, (5, 1): 1})) == -1.0
    assert quadratic_weighted_kappa(Counter()) is None


def test_agreement_without_human_values_still_counts_rejections():
    result = agreement([PairCount(model=3, human=None, rejected=True, count=2), PairCount(3, None, False, 1)])
    assert (result.n, result.model_mean, result.qwk, result.reviewed, result.rejected) == (0, None, None, 3, 2)
    assert result.rejection_rate == 2 / 3


def test_a_criterion_the_judge_left_not_applicable_has_no_difference_to_measure():
    result = agreement([PairCount(model=None, human=2, rejected=True, count=1), PairCount(4, 3, False, 2)])
    assert (result.n, result.model_mean, result.human_mean, result.mae) == (2, 4, 3, 1)
    assert (result.reviewed, result.rejected) == (3, 1)


def test_not_applicable_on_one_side_only_is_a_dispute():
    result = agreement(
        [
            PairCount(model=None, human=3, rejected=False, count=2),  # the judge said N/A, the supervisor a value
            PairCount(model=4, human=None, rejected=False, count=1, human_not_applicable=True),  # the other way
            PairCount(model=None, human=None, rejected=False, count=5),  # both N/A: they agree
            PairCount(model=4, human=None, rejected=True, count=3),  # rejected without a value: no claim either way
            PairCount(model=4, human=4, rejected=False, count=7),
        ]
    )
    assert (result.not_applicable_disputed, result.reviewed, result.n) == (3, 18, 7)
