"""Agreement between human raters: Krippendorff's alpha against Krippendorff's own
worked example, pairwise QWK against the textbook computation, bias by hand."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from reviews.figures.stats import (
    krippendorff_alpha_ordinal,
    pooled_pair_matrix,
    quadratic_weighted_kappa,
    rater_agreement,
)
from tests.reports.test_stats import textbook_qwk

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example
# with four observers, twelve units and missing values (None). Published results:
# nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
KRIPPENDORFF_DATA = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def by_unit(data: dict[str, list[int | None]]) -> dict[int, dict[str, int]]:
    units: dict[int, dict[str, int]] = {}
    for rater, values in data.items():
        for unit, value in enumerate(values):
            if value is not None:
                units.setdefault(unit, {})[rater] = value
    return units


def test_alpha_ordinal_matches_krippendorffs_worked_example():
    assert round(krippendorff_alpha_ordinal(by_unit(KRIPPENDORFF_DATA)), 3) == 0.815


def test_alpha_is_one_for_perfect_agreement_and_undefined_without_variation_or_pairs():
    assert krippendorff_alpha_ordinal({1: {"a": 1, "b": 1}, 2: {"a": 3, "b": 3, "c": 3}}) == 1.0
    assert krippendorff_alpha_ordinal({1: {"a": 2, "b": 2}, 2: {"a": 2, "b": 2}}) is None
    assert krippendorff_alpha_ordinal({1: {"a": 2}, 2: {"b": 4}}) is None  # no unit with two values


def test_a_unit_with_a_single_value_changes_nothing():
    units = by_unit(KRIPPENDORFF_DATA)
    assert krippendorff_alpha_ordinal({**units, 99: {"A": 5}}) == krippendorff_alpha_ordinal(units)


def test_mean_pairwise_qwk_is_the_mean_of_the_textbook_qwk_of_every_pair_of_raters():
    rng = random.Random(15)
    raters = ["ana", "ben", "eva"]
    units = {unit: {rater: rng.randint(1, 5) for rater in raters if rng.random() > 0.15} for unit in range(40)}
    expected = []
    for a, b in combinations(raters, 2):
        pairs = [(values[a], values[b]) for values in units.values() if a in values and b in values]
        expected.append(textbook_qwk(pairs, 1, 5))
    result = rater_agreement(units)
    assert result.mean_pairwise_qwk == pytest.approx(sum(expected) / len(expected), abs=1e-12)


def test_exact_within_one_and_bias_worked_by_hand():
    units = {
        "call-1": {"ana": 4, "ben": 4, "eva": 2},  # median 4: ana 0, ben 0, eva -2
        "call-2": {"ana": 5, "ben": 3},  # median 4: ana +1, ben -1
        "call-3": {"eva": 1},  # one value: no pair, no median
    }
    result = rater_agreement(units)
    # Pairs: (4,4) (4,2) (4,2) (5,3): one exact, one within one.
    assert (result.n_units, result.n_raters, result.pairs) == (2, 3, 4)
    assert (result.exact_agreement, result.within_one) == (0.25, 0.25)
    assert result.bias == {"ana": 0.5, "ben": -0.5, "eva": -2.0}


def test_pooled_pairs_do_not_depend_on_the_order_raters_are_listed_in():
    forward = {1: {"a": 1, "b": 3}, 2: {"a": 2, "b": 2}, 3: {"a": 5, "b": 4}}
    backward = {unit: dict(reversed(list(values.items()))) for unit, values in forward.items()}
    assert pooled_pair_matrix(forward) == pooled_pair_matrix(backward)
    assert quadratic_weighted_kappa(pooled_pair_matrix(forward)) == quadratic_weighted_kappa(
        pooled_pair_matrix(backward)
    )
