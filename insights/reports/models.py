"""The reports' weekly rollup per criterion (app `reviews`; reviews/models.py imports it so Django registers it)."""

from __future__ import annotations

from django.db import models

from rubrics.models import Rubric


class CriterionWeek(models.Model):
    """One agent's calls in one team and week, counted for one criterion of the rubric version (or, with an
    empty `criterion_key`, the calls themselves): what the dashboard's and the reports' figures add up, so a
    page sums a few thousand of these rather than a million scores (bench/dashboard/README.md). Kept equal
    to the calls by `insights.reports.rollup.criterion_weeks_replace`, from the calls marked
    `Recording.rollup_stale`, with the scorecards' rollup and by the same refresh. Never edited by hand."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="+")
    week = models.DateField(null=True)  # its Monday in the project's time zone; null: calls with no time
    team = models.CharField(max_length=100)
    agent_id = models.CharField(max_length=100)
    criterion_key = models.CharField(max_length=64)  # "": the calls' own row
    calls = models.IntegerField(default=0)  # judged calls (the calls' row)
    scores = models.IntegerField(default=0)  # the judge's scores, every successful run: the evidence tally
    unverified = models.IntegerField(default=0)  # of those, with an unverified quote
    failed = models.IntegerField(default=0)  # current runs' values that exist at or below fail_at; calls' row: calls
    human_units = models.IntegerField(default=0)  # calls with values from two or more independent people

    class Meta:
        db_table = "reviews_criterionweek"  # the table it had in reviews, kept: the move changed no row
        constraints = [
            models.UniqueConstraint(
                fields=["rubric", "week", "agent_id", "team", "criterion_key"], name="criterion_week_once"
            )
        ]


class CriterionPairWeek(models.Model):
    """Pairs of values counted for one agent-week and criterion, as `CriterionWeek`: the judge beside the
    human reference (source `review` or `agreed`), or two supervisors who did not see each other's (source
    `human`, each pair both ways round). The human ceiling is their QWK (insights.reports.ceiling)."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="+")
    week = models.DateField(null=True)
    team = models.CharField(max_length=100)
    agent_id = models.CharField(max_length=100)
    criterion_key = models.CharField(max_length=64)
    source = models.CharField(max_length=16)
    first = models.IntegerField()  # the judge's value, or one supervisor's
    second = models.IntegerField()  # the reference's, or the other supervisor's
    n = models.IntegerField()

    class Meta:
        db_table = "reviews_criterionpairweek"  # the table it had in reviews, kept: the move changed no row
        indexes = [models.Index(fields=["rubric", "week"], name="criterion_pair_week")]
