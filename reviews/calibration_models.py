"""Calibration sessions' rows, kept in the kernel (app `reviews`; reviews/models.py imports them so Django
registers them) although the calibration pages are their own app: the review core reads them. An open
session blinds its participants to the judge (reviews.selectors.blind_recordings_for), and a closed
session's agreed value is the human reference (reviews.reference)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from access.querysets import ScopedManager, ScopePaths
from qa.models import JudgeRun, Recording
from rubrics.models import Criterion, Rubric


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

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths(workspace="rubric__workspace")
    objects = ScopedManager()

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

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths.of_calls("recording__")
    objects = ScopedManager()

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
