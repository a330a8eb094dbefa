"""The rollups the figures read, each kept in its own package; registered here as this app's models."""

from insights.reports.models import CriterionPairWeek, CriterionWeek
from insights.scorecards.models import ScorecardWeek

__all__ = ["CriterionPairWeek", "CriterionWeek", "ScorecardWeek"]
