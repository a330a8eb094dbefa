from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from access.querysets import ScopedManager, ScopePaths
from access.models import Workspace, default_workspace_id


class RubricFrozenError(ValidationError):
    """Raised on any attempt to change a rubric version that is no longer a draft.

    Every score points at the exact rubric version it was judged with, so a
    published version must never change underneath those scores.
    """


class Rubric(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        PUBLISHED = "published", _("Published")
        ARCHIVED = "archived", _("Archived")

    # A rubric's slug family lives in one workspace, and a slug names one family across workspaces, so
    # every URL, filter, CSV and API that names a rubric by slug stays unambiguous (rubric_import refuses
    # a slug another workspace holds; `move_rubric` moves a whole family).
    workspace = models.ForeignKey(
        Workspace, on_delete=models.PROTECT, related_name="rubrics", verbose_name=_("workspace")
    )  # fmt: skip
    name = models.CharField(_("name"), max_length=200)
    slug = models.SlugField(_("slug"), max_length=100)
    language = models.CharField(_("language"), max_length=10, default="es")
    version = models.PositiveIntegerField(_("version"), default=1)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.DRAFT)
    description = models.TextField(_("description"), blank=True)
    review_confidence_threshold = models.FloatField(
        _("review confidence threshold"),
        default=0.75,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=_("Scores with a confidence below this go to the review queue."),
    )
    audit_rate = models.FloatField(
        _("random audit rate"),
        default=0.20,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=_("Share of the judged recordings drawn for review as a random audit."),
    )
    warm_up_judgments = models.PositiveIntegerField(
        _("warm-up judgments"),
        default=50,
        db_default=50,
        help_text=_(
            "The first judgments of this version, of a new prompt version or of a new judge model all go to review."
        ),
    )
    # Routing with a guarantee (the routing app certifies, per criterion, the lowest confidence threshold whose kept
    # values agree with the supervisors at least `agreement_target` of the time, with probability 1 - risk).
    class AgreementTolerance(models.TextChoices):
        EXACT = "exact", _("The same value")
        WITHIN_ONE = "within_one", _("Within one point")

    agreement_target = models.FloatField(
        _("agreement target"),
        default=0.9,
        db_default=0.9,
        validators=[MinValueValidator(0.01), MaxValueValidator(0.99)],
        help_text=_("The share of unreviewed values that must agree with a supervisor (α), once a threshold is certified."),
    )
    agreement_risk = models.FloatField(
        _("agreement risk"),
        default=0.1,
        db_default=0.1,
        validators=[MinValueValidator(0.01), MaxValueValidator(0.5)],
        help_text=_("The chance the certified threshold misses the agreement target (δ)."),
    )
    agreement_tolerance = models.CharField(
        _("agreement tolerance"),
        max_length=10,
        choices=AgreementTolerance.choices,
        default=AgreementTolerance.EXACT,
        db_default=AgreementTolerance.EXACT,
        help_text=_("What counts as a supervisor agreeing with the judge's value."),
    )
    # The quality score's policy (rubrics.quality): what a critical criterion's failure does to the call,
    # and whether a criterion that does not apply counts as met or leaves the weights.
    class AutoFail(models.TextChoices):
        ZERO = "zero", _("Zero the call's score")
        FLAG = "flag", _("Flag the call and keep the computed score")

    class NotApplicableRule(models.TextChoices):
        EXCLUDE = "exclude", _("Leave it out of the weights")
        MET = "met", _("Count it as met")

    auto_fail = models.CharField(
        _("auto-fail"),
        max_length=10,
        choices=AutoFail.choices,
        default=AutoFail.ZERO,
        db_default=AutoFail.ZERO,
        help_text=_("What a critical criterion at or below its fail value does to the call's quality score."),
    )
    not_applicable = models.CharField(
        _("not applicable criteria"),
        max_length=10,
        choices=NotApplicableRule.choices,
        default=NotApplicableRule.EXCLUDE,
        db_default=NotApplicableRule.EXCLUDE,
        help_text=_("How a criterion that does not apply to the call counts in its quality score."),
    )
    route_auto_fail = models.BooleanField(
        _("review auto-failed calls"),
        default=True,
        db_default=True,
        help_text=_("Judged calls whose critical criterion fails go to the review queue."),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    published_at = models.DateTimeField(_("published at"), null=True, blank=True)

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths(workspace="workspace")
    objects = ScopedManager()

    class Meta:
        ordering = ["slug", "-version"]
        verbose_name = _("rubric")
        verbose_name_plural = _("rubrics")
        constraints = [
            models.UniqueConstraint(fields=["slug", "version"], name="rubric_slug_version_unique"),
            models.UniqueConstraint(
                fields=["slug"], condition=Q(status="draft"), name="rubric_one_draft_per_slug"
            ),
            models.CheckConstraint(
                condition=Q(review_confidence_threshold__gte=0, review_confidence_threshold__lte=1),
                name="rubric_threshold_in_unit_interval",
            ),
            models.CheckConstraint(
                condition=Q(audit_rate__gte=0, audit_rate__lte=1), name="rubric_audit_rate_in_unit_interval"
            ),
            models.CheckConstraint(
                condition=Q(agreement_target__gt=0, agreement_target__lt=1, agreement_risk__gt=0, agreement_risk__lt=1),
                name="rubric_agreement_in_open_unit_interval",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version} ({self.get_status_display()})"

    @property
    def label(self) -> str:
        """Its name and version, for a command's English output: str() adds the status in the site's
        language ("Published Customer care (banking) v1 (Publicada).")."""
        return f"{self.name} v{self.version}"

    @property
    def is_draft(self) -> bool:
        return self.status == self.Status.DRAFT

    def previous_version(self) -> Rubric | None:
        """The version this one follows (what a diff or a `replaces` key refers to)."""
        return Rubric.objects.filter(slug=self.slug, version__lt=self.version).order_by("-version").first()

    def ensure_editable(self) -> None:
        """Refuse changes unless the stored row is still a draft.

        Read from the database, not from this instance, so that a stale
        in-memory copy cannot overwrite a version published meanwhile.
        """
        if self.pk is None:
            return
        stored = Rubric.objects.filter(pk=self.pk).values_list("status", flat=True).first()
        if stored is not None and stored != self.Status.DRAFT:
            raise RubricFrozenError(
                _("Rubric %(slug)s v%(version)s is %(status)s and cannot be changed; create a new version.")
                % {"slug": self.slug, "version": self.version, "status": stored}
            )

    # Saving and deleting are guarded here, not in a service, because the
    # invariant must hold for every code path (admin, shell, imports).
    def save(self, *args, **kwargs) -> None:
        self.ensure_editable()
        if self.workspace_id is None:  # made without naming one (a shell, a test): a first install's only one
            self.workspace_id = default_workspace_id()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self.ensure_editable()
        return super().delete(*args, **kwargs)


class Section(models.Model):
    """A part of a rubric: its criteria's weighted mean counts in the call's quality score with the section's
    weight (rubrics.quality). Frozen with its rubric, as criteria are."""

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="sections")
    key = models.SlugField(_("key"), max_length=64, help_text=_("Stable identifier, unique in its rubric."))
    title = models.CharField(_("title"), max_length=200)
    weight = models.FloatField(_("weight"), default=1.0, validators=[MinValueValidator(0.0)])
    order = models.PositiveIntegerField(_("order"), default=0)

    class Meta:
        ordering = ["order", "id"]
        verbose_name = _("section")
        verbose_name_plural = _("sections")
        constraints = [
            models.UniqueConstraint(fields=["rubric", "key"], name="section_key_unique_in_rubric"),
            models.CheckConstraint(condition=Q(weight__gte=0), name="section_weight_non_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.title}"

    def save(self, *args, **kwargs) -> None:
        self.rubric.ensure_editable()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self.rubric.ensure_editable()
        return super().delete(*args, **kwargs)


class Criterion(models.Model):
    class Subject(models.TextChoices):
        """Whose behaviour the criterion judges: a quote must include words of a turn of that speaker
        (qa.evidence). `any`, the default, checks no speaker, as every criterion did before."""

        AGENT = "agent", _("Agent")
        CUSTOMER = "customer", _("Customer")
        ANY = "any", _("Anyone in the call")

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="criteria")
    key = models.SlugField(_("key"), max_length=64, help_text=_("Stable identifier, unique in its rubric."))
    title = models.CharField(_("title"), max_length=200)
    description = models.TextField(_("description"), help_text=_("One observable behaviour."))
    evidence_guidance = models.TextField(_("evidence guidance"), blank=True, help_text=_("What to quote."))
    scale_min = models.SmallIntegerField(_("scale minimum"), default=1)
    scale_max = models.SmallIntegerField(_("scale maximum"), default=5)
    weight = models.FloatField(_("weight"), default=1.0, validators=[MinValueValidator(0.0)])
    order = models.PositiveIntegerField(_("order"), default=0)
    section = models.ForeignKey(
        Section,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="criteria",
        verbose_name=_("section"),
        help_text=_("The part of the rubric it counts in; none: the rubric has no sections."),
    )
    critical = models.BooleanField(
        _("critical"),
        default=False,
        db_default=False,
        help_text=_("A value at or below its fail value fails the whole call (the rubric's auto-fail)."),
    )
    fail_at = models.SmallIntegerField(
        _("fails at"),
        null=True,
        blank=True,
        help_text=_("For a critical criterion: the value at or below which the call fails."),
    )
    subject = models.CharField(
        _("whose behaviour"),
        max_length=10,
        choices=Subject.choices,
        default=Subject.ANY,
        db_default=Subject.ANY,
        help_text=_("Whose words the evidence must include: a quote of only the other speaker's words is not verified."),
    )
    # The version comparison continues this criterion's line from the one it
    # replaces (a split or renamed criterion), so a change of wording can be
    # followed across versions.
    replaces = models.SlugField(
        _("replaces"),
        max_length=64,
        blank=True,
        default="",
        db_default="",
        help_text=_("Key of the previous version's criterion this one replaces, if its key changed."),
    )

    class Meta:
        ordering = ["order", "id"]
        verbose_name = _("criterion")
        verbose_name_plural = _("criteria")
        constraints = [
            models.UniqueConstraint(fields=["rubric", "key"], name="criterion_key_unique_in_rubric"),
            models.CheckConstraint(condition=Q(scale_min__lt=models.F("scale_max")), name="criterion_scale_ordered"),
            models.CheckConstraint(condition=Q(weight__gte=0), name="criterion_weight_non_negative"),
            models.CheckConstraint(
                condition=Q(critical=False) | Q(fail_at__isnull=False), name="criterion_critical_fails_at_a_value"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.title}"

    def clean(self) -> None:
        if self.scale_min is not None and self.scale_max is not None and self.scale_min >= self.scale_max:
            raise ValidationError({"scale_max": _("The scale maximum must be greater than the minimum.")})
        if self.critical and self.fail_at is None:
            raise ValidationError({"fail_at": _("A critical criterion needs the value at or below which the call fails.")})
        if self.fail_at is not None and None not in (self.scale_min, self.scale_max):
            if not self.scale_min <= self.fail_at < self.scale_max:
                raise ValidationError(
                    {"fail_at": _("The fail value must be on the scale and below its maximum.")}
                )
        if self.section_id is not None and self.rubric_id is not None and self.section.rubric_id != self.rubric_id:
            raise ValidationError({"section": _("The section must be one of this rubric's.")})

    def in_scale(self, value: float) -> bool:
        return self.scale_min <= value <= self.scale_max

    def allows_not_applicable(self) -> bool:
        """Only a criterion with a written "not applicable" exception may be left unscored (N/A).

        Reads `exceptions.all()`, so a prefetch of the exceptions serves it without a query.
        """
        return any(e.outcome == CriterionException.Outcome.NOT_APPLICABLE for e in self.exceptions.all())

    def save(self, *args, **kwargs) -> None:
        self.rubric.ensure_editable()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self.rubric.ensure_editable()
        return super().delete(*args, **kwargs)


class CriterionException(models.Model):
    class Outcome(models.TextChoices):
        NOT_APPLICABLE = "not_applicable", _("Not applicable")
        MET = "met", _("Counts as met")
        NOT_MET = "not_met", _("Counts as not met")

    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="exceptions")
    text = models.TextField(_("when"), help_text=_("The situation, e.g. 'the agent transfers the call'."))
    outcome = models.CharField(_("outcome"), max_length=20, choices=Outcome.choices)
    order = models.PositiveIntegerField(_("order"), default=0)

    class Meta:
        ordering = ["order", "id"]
        verbose_name = _("criterion exception")
        verbose_name_plural = _("criterion exceptions")

    def __str__(self) -> str:
        return f"{self.text} → {self.get_outcome_display()}"

    def save(self, *args, **kwargs) -> None:
        self.criterion.rubric.ensure_editable()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self.criterion.rubric.ensure_editable()
        return super().delete(*args, **kwargs)
