"""The scorecards' weekly rollup (app `reviews`; reviews/models.py imports it so Django registers it)."""

from __future__ import annotations

from django.db import models

from rubrics.models import Rubric


class ScorecardWeek(models.Model):
    """The scorecard estimator's sums (`reviews.figures.stats.StratumSample`) of one agent's calls in one team,
    week and stratum (flagged or plain), for one column: a criterion's key, or "overall". A cache of the
    calls, so that a scorecard sums about 70,000 of these rather than 100,000 calls (bench/scorecards/README.md);
    kept up to date from the calls marked `Recording.rollup_stale` by
    `insights.scorecards.services.scorecard_weeks_refresh`, which Celery beat and a scorecard read run
    (`insights.scorecards.selectors.period_samples`). Never edited by hand: delete the rows and mark the calls
    to rebuild."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="+")
    week = models.DateField(null=True)  # its Monday in the project's time zone; null: calls with no time
    team = models.CharField(max_length=100)
    agent_id = models.CharField(max_length=100)
    agent_name = models.CharField(max_length=200)  # the greatest of the week's, as the scorecard shows one
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
        db_table = "reviews_scorecardweek"  # the table it had in reviews, kept: the move changed no row
        constraints = [
            models.UniqueConstraint(
                fields=["rubric", "week", "agent_id", "team", "column_key", "flagged"],
                name="scorecard_week_once",
            )
        ]
