"""core.memory.collector_paused: the cycle collector is off inside, and back as it was after."""

from __future__ import annotations

import gc

import pytest

from core.memory import collector_paused


def test_the_collector_is_off_inside_and_on_again_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the outer pause holds
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_turns_it_back_on():
    with pytest.raises(ValueError), collector_paused():
        raise ValueError
    assert gc.isenabled()


def test_a_collector_already_off_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.django_db
def test_a_scorecard_is_estimated_with_it_paused(monkeypatch):
    """The scorecard's thousands of sums and estimates are built with the collector off
    (bench/scorecards/README.md), and it is on again for the rest of the request."""
    from insights.scorecards import selectors
    from reviews.filters import ReportFilters
    from tests.factories import published_rubric

    seen = []
    estimate = selectors.scorecard_estimate

    def recording_estimate(*args, **kwargs):
        seen.append(gc.isenabled())
        return estimate(*args, **kwargs)

    monkeypatch.setattr(selectors, "scorecard_estimate", recording_estimate)
    selectors.scorecard(ReportFilters(rubric=published_rubric(criteria=2)))
    assert seen and not any(seen)
    assert gc.isenabled()
