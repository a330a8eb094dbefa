"""The rollups the figures read, each kept in its own package, and the agents' self-reviews; registered here as
this app's models."""

from insights.reports.models import CriterionPairWeek, CriterionWeek
from insights.scorecards.models import ScorecardWeek
from insights.selfreview.models import SelfReview, SelfReviewValue

__all__ = ["CriterionPairWeek", "CriterionWeek", "ScorecardWeek", "SelfReview", "SelfReviewValue"]
