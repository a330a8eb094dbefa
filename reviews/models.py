from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from qa.models import ApiKey, JudgeRun, Recording
from rubrics.models import Criterion, Rubric


class Review(models.Model):
    """A supervisor's decision on a judged recording. Append-only: a later
    review supersedes an earlier one for reporting, and all are kept."""

    # Labels name the outcome ("Approved"), as lists and reports show it; the page's buttons say the verb.
    class Decision(models.TextChoices):
        APPROVE = "approve", pgettext_lazy("a review", "Approved")
        REJECT = "reject", pgettext_lazy("a review", "Rejected")
        NEEDS_REVIEW = "needs_review", pgettext_lazy("a review", "Needs another review")

    class RejectReason(models.TextChoices):
        """What was wrong overall, optional beside the criteria marked wrong (which a reject must have)."""

        WRONG_SCORE = "wrong_score", _("Wrong score")
        UNSUPPORTED_QUOTE = "unsupported_quote", _("The quote doesn't support the score")
        CRITERION_DOES_NOT_APPLY = "criterion_does_not_apply", _("The criterion doesn't apply")
        TRANSCRIPT_PROBLEM = "transcript_problem", _("Transcript problem")

    recording = models.ForeignKey(Recording, on_delete=models.CASCADE, related_name="reviews")
    run = models.ForeignKey(JudgeRun, on_delete=models.PROTECT, related_name="reviews")
    reviewer = models.CharField(_("reviewer"), max_length=150)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True)
    api_key = models.ForeignKey(ApiKey, on_delete=models.PROTECT, null=True, blank=True)
    decision = models.CharField(_("decision"), max_length=20, choices=Decision.choices)
    # db_default too: bulk loaders writing SQL (the benchmarks) need not know the column.
    reject_reason = models.CharField(
        _("reject reason"),
        max_length=32,
        choices=RejectReason.choices,
        blank=True,
        default="",
        db_default="",
        help_text=_("Only on a reject."),
    )
    adjusted_mean = models.FloatField(_("adjusted mean"), null=True, blank=True)
    comment = models.TextField(_("comment"), blank=True)
    blind = models.BooleanField(
        _("blind audit"), default=False, help_text=_("The reviewer entered values before seeing the model's.")
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # The human value per criterion key the review gives (`reviews.selectors.review_values`; criteria
    # without a number left out), set when it is made: the scorecards read these rather than join the
    # scores and criterion entries of every audited call (bench/scorecards/README.md).
    human_values = models.JSONField(_("human values"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("review")
        verbose_name_plural = _("reviews")
        indexes = [models.Index(fields=["recording", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_decision_display()} by {self.reviewer} on {self.recording_id}"

    @property
    def is_final(self) -> bool:
        """Approve and reject are a human's judgement; "needs another review" only passes the call on."""
        return self.decision != self.Decision.NEEDS_REVIEW


class CriterionReview(models.Model):
    """The supervisor's word on one criterion: their value, or `not_applicable`
    (the criterion does not apply to the call); with neither, the model's value stands."""

    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="criteria")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="reviews")
    adjusted_value = models.SmallIntegerField(_("adjusted value"), null=True, blank=True)
    not_applicable = models.BooleanField(
        _("not applicable"),
        default=False,
        help_text=_("The supervisor finds this criterion does not apply to the call."),
    )
    rejected = models.BooleanField(_("rejected"), default=False, help_text=_("The judge got this criterion wrong."))
    comment = models.TextField(_("comment"), blank=True)

    class Meta:
        ordering = ["criterion__order", "criterion_id"]
        verbose_name = _("criterion review")
        verbose_name_plural = _("criterion reviews")
        constraints = [
            models.UniqueConstraint(fields=["review", "criterion"], name="criterion_review_once_per_review"),
            # A value and "does not apply" contradict each other; review_create refuses it with a message.
            models.CheckConstraint(
                condition=models.Q(adjusted_value__isnull=True) | models.Q(not_applicable=False),
                name="criterion_review_value_or_not_applicable",
            ),
        ]


class ReviewClaim(models.Model):
    """A supervisor working on a recording, so two don't review the same call at once."""

    recording = models.OneToOneField(Recording, on_delete=models.CASCADE, related_name="claim")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_claims")
    expires_at = models.DateTimeField()

    class Meta:
        verbose_name = _("review claim")
        verbose_name_plural = _("review claims")


class CalibrationSession(models.Model):
    """A QA lead's session: participants score the same calls blind, then the lead
    closes it, reads how far they sit from each other and records agreed values."""

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        CLOSED = "closed", _("Closed")

    name = models.CharField(_("name"), max_length=200)
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="calibration_sessions")
    lead = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="led_calibrations")
    participants = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="calibrations")
    due_date = models.DateField(_("due date"), null=True, blank=True)
    # How the calls were chosen (filters, sample size and seed, or ids), so the draw can be repeated.
    selection = models.JSONField(_("selection"), default=dict, blank=True)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("calibration session")
        verbose_name_plural = _("calibration sessions")
        permissions = [("run_calibration", _("Can create and close calibration sessions"))]

    def __str__(self) -> str:
        return self.name

    @property
    def is_open(self) -> bool:
        return self.status == self.Status.OPEN


class CalibrationCall(models.Model):
    """A call in a session, with the judgment the participants' values are set beside."""

    session = models.ForeignKey(CalibrationSession, on_delete=models.CASCADE, related_name="calls")
    recording = models.ForeignKey(Recording, on_delete=models.PROTECT, related_name="calibration_calls")
    run = models.ForeignKey(JudgeRun, on_delete=models.PROTECT, related_name="calibration_calls")

    class Meta:
        ordering = ["session_id", "id"]
        verbose_name = _("calibration call")
        verbose_name_plural = _("calibration calls")
        constraints = [models.UniqueConstraint(fields=["session", "recording"], name="calibration_call_once")]


class CalibrationEntry(models.Model):
    """One participant's scoring of one call. Not a review: it leaves the review queue alone.
    Its author may change it until the session closes."""

    call = models.ForeignKey(CalibrationCall, on_delete=models.CASCADE, related_name="entries")
    participant = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="calibration_entries"
    )
    comment = models.TextField(_("comment"), blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("calibration entry")
        verbose_name_plural = _("calibration entries")
        constraints = [
            models.UniqueConstraint(fields=["call", "participant"], name="calibration_entry_once_per_participant")
        ]


def _value_or_not_applicable(name: str) -> models.CheckConstraint:
    # Exactly one of the two: a number, or "does not apply".
    return models.CheckConstraint(
        condition=(
            models.Q(value__isnull=True, not_applicable=True) | models.Q(value__isnull=False, not_applicable=False)
        ),
        name=name,
    )


class CalibrationValue(models.Model):
    entry = models.ForeignKey(CalibrationEntry, on_delete=models.CASCADE, related_name="values")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="calibration_values")
    value = models.SmallIntegerField(_("value"), null=True, blank=True)
    not_applicable = models.BooleanField(_("not applicable"), default=False)

    class Meta:
        verbose_name = _("calibration value")
        verbose_name_plural = _("calibration values")
        constraints = [
            models.UniqueConstraint(fields=["entry", "criterion"], name="calibration_value_once_per_entry"),
            _value_or_not_applicable("calibration_value_value_or_not_applicable"),
        ]


class AgreedValue(models.Model):
    """The value the lead records for a call and criterion after discussing a closed
    session: the best human reference there is."""

    call = models.ForeignKey(CalibrationCall, on_delete=models.CASCADE, related_name="agreed_values")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="agreed_values")
    value = models.SmallIntegerField(_("agreed value"), null=True, blank=True)
    not_applicable = models.BooleanField(_("not applicable"), default=False)
    note = models.TextField(_("note"), blank=True)
    agreed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("agreed value")
        verbose_name_plural = _("agreed values")
        constraints = [
            models.UniqueConstraint(fields=["call", "criterion"], name="agreed_value_once_per_call"),
            _value_or_not_applicable("agreed_value_value_or_not_applicable"),
        ]


class ScorecardWeek(models.Model):
    """The scorecard estimator's sums (`reviews.reports.stats.StratumSample`) of one agent's calls in one team,
    week and stratum (flagged or plain), for one column: a criterion's key, or "overall". A cache of the
    calls, so that a scorecard sums about 70,000 of these rather than 100,000 calls (bench/scorecards/README.md);
    kept up to date from the calls marked `Recording.rollup_stale` by
    `reviews.scorecards.services.scorecard_weeks_refresh`, which Celery beat and a scorecard read run
    (`reviews.scorecards.selectors.period_samples`). Never edited by hand: delete the rows and mark the calls
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
        constraints = [
            models.UniqueConstraint(
                fields=["rubric", "week", "agent_id", "team", "column_key", "flagged"],
                name="scorecard_week_once",
            )
        ]
