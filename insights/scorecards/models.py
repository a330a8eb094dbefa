"""The scorecards' rollups, per agent-week and per agent-day (app `insights`: insights/models.py imports them)."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models

from rubrics.models import Rubric


class ScorecardSums(models.Model):
    """The scorecard estimator's sums (`reviews.figures.stats.StratumSample`) of one agent's calls in one team
    and stratum (flagged or plain), for one column: a criterion's key, or "overall"."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="+")
    team = models.CharField(max_length=100)
    agent_id = models.CharField(max_length=100)
    agent_name = models.CharField(max_length=200)  # the greatest of the calls', as the scorecard shows one
    column_key = models.CharField(max_length=64)
    flagged = models.BooleanField(default=False)  # the stratum: routed for a doubt, or with an unverified score
    judged_n = models.IntegerField()
    judged_total = models.FloatField()
    judged_squares = models.FloatField()
    unverified_n = models.IntegerField()
    known_n = models.IntegerField()
    known_total = models.FloatField()
    known_squares = models.FloatField()
    estimated_n = models.IntegerField()
    estimated_total = models.FloatField()
    estimated_squares = models.FloatField()
    waiting_n = models.IntegerField()
    human_n = models.IntegerField()
    human_total = models.FloatField()
    human_squares = models.FloatField()
    audit_n = models.IntegerField()
    audit_human = models.FloatField()
    audit_judge = models.FloatField()
    audit_human_squares = models.FloatField()
    audit_judge_squares = models.FloatField()
    audit_products = models.FloatField()

    class Meta:
        abstract = True


class ScorecardWeek(ScorecardSums):
    """The sums of one agent-week. A cache of the calls, so that a scorecard sums about 70,000 of these rather
    than 100,000 calls (bench/scorecards/README.md); kept up to date from the calls marked
    `Recording.rollup_stale` by `insights.scorecards.services.scorecard_weeks_refresh`, which Celery beat and a
    scorecard read run (`insights.scorecards.selectors.period_samples`), as the sum of the week's
    `ScorecardDay` rows. Never edited by hand: delete the rows and mark the calls to rebuild."""

    week = models.DateField(null=True)  # its Monday in the project's time zone; null: calls with no time

    class Meta:
        db_table = "reviews_scorecardweek"  # the table it had in reviews, kept: the move changed no row
        constraints = [
            models.UniqueConstraint(
                fields=["rubric", "week", "agent_id", "team", "column_key", "flagged"],
                name="scorecard_week_once",
            )
        ]


class ScorecardDay(ScorecardSums):
    """The sums of one agent-day: what a period's days at either end of its whole weeks are read from, instead
    of their calls (a second for five days at a million scores; bench/scorecards/README.md). Kept with
    `ScorecardWeek`, by the same refresh. Calls with no time have no day: no period's edge counts them."""

    day = models.DateField()  # in the project's time zone

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["rubric", "day", "agent_id", "team", "column_key", "flagged"], name="scorecard_day_once"
            )
        ]


class RollupClock(models.Model):
    """When Celery beat last brought every rubric's rollups up to date (`scorecard_weeks_refresh_all`): one row.
    While it keeps doing so, a page reads the rollups as of that moment instead of refreshing them itself
    (`insights.scorecards.services.rollups_readable`); the embedded first run, with no beat, has no row."""

    started_at = models.DateTimeField()  # every change committed before it is in the rollups

    ONE = 1  # the row's id

    def keeping_up(self, *, now) -> bool:
        """Whether beat's refreshes are recent enough for a page to read the rollups as they are: its last whole
        pass started within three of its intervals (one missed tick and a slow pass tolerated). Past that the
        beat is stopped or far behind, and pages bring the rollups up to date themselves again."""
        return now - self.started_at <= timedelta(seconds=3 * settings.QA_ROLLUP_REFRESH_INTERVAL)
