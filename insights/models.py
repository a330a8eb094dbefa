"""The rollups the figures read, each kept in its own package; registered here as this app's models."""

from insights.reports.models import CriterionDay, CriterionPairDay, CriterionPairWeek, CriterionWeek
from insights.scorecards.models import ScorecardDay, ScorecardWeek

__all__ = ["CriterionDay", "CriterionPairDay", "CriterionPairWeek", "CriterionWeek", "ScorecardDay", "ScorecardWeek"]
