"""The rollups the figures read, each kept in its own package, and the agents' self-reviews; registered here as
this app's models."""

from insights.reports.models import (
    CriterionDay, CriterionPairDay, CriterionPairWeek, CriterionWeek, DeviationDay, DeviationWeek,
)  # fmt: skip
from insights.scorecards.models import RollupClock, ScorecardDay, ScorecardWeek
from insights.selfreview.models import SelfReview, SelfReviewValue

__all__ = [
    "CriterionDay", "CriterionPairDay", "CriterionPairWeek", "CriterionWeek", "DeviationDay", "DeviationWeek",
    "RollupClock", "ScorecardDay", "ScorecardWeek",
    "SelfReview", "SelfReviewValue",
]  # fmt: skip
