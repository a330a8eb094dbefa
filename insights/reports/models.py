"""The reports' rollups per criterion, per agent-week and per agent-day (app `insights`: insights/models.py
imports them)."""

from __future__ import annotations

from django.db import models

from rubrics.models import Rubric


class CriterionCounts(models.Model):
    """One agent's calls in one team, counted for one criterion of the rubric version (or, with an empty
    `criterion_key`, the calls themselves): what the dashboard's and the reports' figures add up."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="+")
    team = models.CharField(max_length=100)
    agent_id = models.CharField(max_length=100)
    criterion_key = models.CharField(max_length=64)  # "": the calls' own row
    calls = models.IntegerField(default=0)  # judged calls (the calls' row)
    scores = models.IntegerField(default=0)  # the judge's scores, every successful run: the evidence tally
    unverified = models.IntegerField(default=0)  # of those, with an unverified quote
    failed = models.IntegerField(default=0)  # current runs' values that exist at or below fail_at; calls' row: calls
    human_units = models.IntegerField(default=0)  # calls with values from two or more independent people

    class Meta:
        abstract = True


class CriterionWeek(CriterionCounts):
    """The counts of one agent-week, so a page sums a few thousand of these rather than a million scores
    (bench/dashboard/README.md). Kept equal to the calls by `insights.reports.rollup.criterion_weeks_write`,
    as the sum of the week's `CriterionDay` rows, from the calls marked `Recording.rollup_stale`, with the
    scorecards' rollup and by the same refresh. Never edited by hand."""

    week = models.DateField(null=True)  # its Monday in the project's time zone; null: calls with no time

    class Meta:
        db_table = "reviews_criterionweek"  # the table it had in reviews, kept: the move changed no row
        constraints = [
            models.UniqueConstraint(
                fields=["rubric", "week", "agent_id", "team", "criterion_key"], name="criterion_week_once"
            )
        ]


class CriterionDay(CriterionCounts):
    """The counts of one agent-day: a period's days at either end of its whole weeks are read from these, not
    from their calls. Calls with no time have no day."""

    day = models.DateField()  # in the project's time zone

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rubric", "day", "agent_id", "team", "criterion_key"], name="criterion_day_once")
        ]


class CriterionPairs(models.Model):
    """Pairs of values counted for one agent and criterion: the judge beside the human reference (source
    `review` or `agreed`), or two supervisors who did not see each other's (source `human`, each pair both
    ways round). The human ceiling is their QWK (insights.reports.ceiling)."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="+")
    team = models.CharField(max_length=100)
    agent_id = models.CharField(max_length=100)
    criterion_key = models.CharField(max_length=64)
    source = models.CharField(max_length=16)
    first = models.IntegerField()  # the judge's value, or one supervisor's
    second = models.IntegerField()  # the reference's, or the other supervisor's
    n = models.IntegerField()

    class Meta:
        abstract = True


class CriterionPairWeek(CriterionPairs):
    """An agent-week's pairs, as `CriterionWeek`."""

    week = models.DateField(null=True)

    class Meta:
        db_table = "reviews_criterionpairweek"  # the table it had in reviews, kept: the move changed no row
        indexes = [models.Index(fields=["rubric", "week"], name="criterion_pair_week")]


class CriterionPairDay(CriterionPairs):
    """An agent-day's pairs, as `CriterionDay`."""

    day = models.DateField()

    class Meta:
        indexes = [models.Index(fields=["rubric", "day"], name="criterion_pair_day")]


class DeviationCounts(models.Model):
    """One agent's reviewed scores of one criterion, counted by what the deviation report's cube groups them
    by (`insights.reports.rollup.deviation_cube`): the scores of the run each call's latest review judged,
    when that review is final. The cube over all calls read every reviewed score, a join over a million
    scores (bench/reports/README.md); its rollup is a sum of these rows."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="+")
    team = models.CharField(max_length=100)
    agent_id = models.CharField(max_length=100)
    criterion_key = models.CharField(max_length=64)
    value = models.IntegerField(null=True)  # the judge's
    evidence_verified = models.BooleanField()  # the judge's quote
    human = models.IntegerField(null=True)  # reviews.reference.HUMAN_VALUE
    rejected = models.BooleanField()  # reviews.reference.IS_REJECTED
    human_not_applicable = models.BooleanField()  # the review's entry says "does not apply"
    reasons = models.JSONField(default=list)  # the call's review reasons as stored: its groups follow from them
    n = models.IntegerField()

    class Meta:
        abstract = True


class DeviationWeek(DeviationCounts):
    """An agent-week's reviewed scores, the sum of its `DeviationDay` rows; kept with `CriterionWeek`, from the
    same marked calls by the same refresh. Never edited by hand."""

    week = models.DateField(null=True)  # its Monday in the project's time zone; null: calls with no time

    class Meta:
        indexes = [models.Index(fields=["rubric", "week"], name="deviation_week")]


class DeviationDay(DeviationCounts):
    """An agent-day's reviewed scores: a period's days at either end of its whole weeks are read from these."""

    day = models.DateField()

    class Meta:
        indexes = [models.Index(fields=["rubric", "day"], name="deviation_day")]
