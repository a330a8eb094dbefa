"""The scorecard's cells from the database: pooling, N/A, flagged calls, overall, queries."""

from __future__ import annotations

import pytest

from reviews.reports.selectors import ReportFilters
from reviews.reports.stats import CorrectionLevel
from reviews.scorecards.selectors import scorecard

pytestmark = pytest.mark.django_db


def cells(card, column: str = "c1") -> dict[tuple[str, str | None], object]:
    index = [c.key for c in card.columns].index(column)
    return {(row.team, row.agent_id): row.cells[index] for row in card.rows}


def test_pooling_team_then_rubric_and_flagged_calls_never_correct(teams_data):
    by_row = cells(scorecard(ReportFilters(rubric=teams_data)))
    a1, a2, a3 = by_row[("north", "a1")], by_row[("north", "a2")], by_row[("south", "a3")]
    assert (a1.judged_n, a1.audited_n, a1.judge_mean, a1.human_audit_mean) == (20, 10, 3.0, 3.5)
    assert a1.estimate == pytest.approx(2.5) and a1.correction_level == CorrectionLevel.CELL
    assert (a2.judged_n, a2.audited_n, a2.correction_level, a2.correction_n) == (6, 4, CorrectionLevel.TEAM, 14)
    assert a2.estimate == pytest.approx(3.5)
    assert (a3.judged_n, a3.audited_n, a3.correction_level, a3.correction_n) == (4, 0, CorrectionLevel.RUBRIC, 14)
    assert a3.estimate == pytest.approx(2.0)
