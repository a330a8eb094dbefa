"""Experiments: a frozen set of reviewed recordings judged again by other arms
(a rubric version and a judge), compared with the supervisors' values.

Nothing here is a production row: an experiment's judgments are items and
item scores of its own, which no queue, routing, report or recording status reads.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from access.querysets import ScopedManager, ScopePaths
from access.models import ApiKey, Workspace, default_workspace_id
from qa.models import Judge, Recording
from rubrics.models import Criterion, Rubric


class Experiment(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        FINISHED = "finished", _("Finished")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    # Its rubric's workspace (a slug family lives in one): the scope filters experiments by it.
    workspace = models.ForeignKey(
        Workspace, on_delete=models.PROTECT, related_name="experiments", editable=False
    )
    rubric_slug = models.SlugField(_("rubric"), max_length=100)
    group = models.CharField(_("group"), max_length=20, default="all")
    date_from = models.DateField(_("since"), null=True, blank=True)
    date_to = models.DateField(_("until"), null=True, blank=True)
    limit = models.PositiveIntegerField(_("limit"), null=True, blank=True)
    seed = models.IntegerField(_("seed"), default=0)
    # Frozen when the experiment is created: later reviews never change what it compares.
    recording_ids = models.JSONField(_("recordings"), default=list)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(_("error"), blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True)
    created_by_key = models.ForeignKey(ApiKey, on_delete=models.PROTECT, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    # What its rows show of a workspace to whom: Model.objects.visible_to(scope) (access.querysets).
    scope_paths = ScopePaths(workspace="workspace")
    objects = ScopedManager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("experiment")
        verbose_name_plural = _("experiments")

    def __str__(self) -> str:
        return f"experiment {self.pk} on {self.rubric_slug}"

    def save(self, *args, **kwargs) -> None:
        if self.workspace_id is None:  # experiment_create sets its rubric's; a test or a shell may not
            self.workspace_id = default_workspace_id()
        super().save(*args, **kwargs)

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE


class Arm(models.Model):
    """One way of judging the set: the baseline (first) or a candidate."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="arms")
    order = models.PositiveSmallIntegerField(default=0)
    label = models.CharField(_("label"), max_length=200)
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="+")
    # None: the environment's judge.
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    # The baseline as production stored it: the scores each recording's review saw, no LLM call.
    stored = models.BooleanField(_("production scores as stored"), default=False)
    samples = models.PositiveSmallIntegerField(_("samples"), default=1)
    # The question the arm tests, fixed when the experiment is created: every
    # item is asked exactly it (one built per worker process, a draft included)
    # or fails, and a draft edited since cannot be published on this
    # experiment's word. Blank for the stored baseline, which asks nothing.
    prompt_version = models.CharField(_("prompt version"), max_length=64, blank=True)

    class Meta:
        # By the column, not the relation: ordering by `experiment` would join it (and its own ordering) into every query.
        ordering = ["experiment_id", "order"]
        constraints = [models.UniqueConstraint(fields=["experiment", "order"], name="arm_order_unique")]

    def __str__(self) -> str:
        return self.label

    @property
    def is_baseline(self) -> bool:
        return self.order == 0

    @property
    def display_name(self) -> str:
        """The arm's name on the pages, in the reader's language; `label` stays the API's identifier."""
        if self.stored:
            return str(_("Production scores as stored"))
        version = f"v{self.rubric.version}"
        if self.rubric.is_draft:
            version = str(_("v%(version)s, draft") % {"version": self.rubric.version})
        judge = self.judge.name if self.judge else _("the default judge")
        name = f"{version} · {judge}"
        return name + " " + str(_("×%(samples)s samples") % {"samples": self.samples}) if self.samples > 1 else name


class Item(models.Model):
    """One recording judged by one arm: claimed, retried and finished like a production run."""

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        SUCCEEDED = "succeeded", _("Succeeded")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    arm = models.ForeignKey(Arm, on_delete=models.CASCADE, related_name="items")
    recording = models.ForeignKey(Recording, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    leased_until = models.DateTimeField(null=True, blank=True)  # the claim's lease (core.jobs)
    finished_at = models.DateTimeField(null=True, blank=True)
    backend = models.CharField(max_length=50, blank=True)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=64, blank=True)
    llm_duration_ms = models.PositiveIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)  # of prompt_tokens, read from the server's cache
    raw_output = models.TextField(blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["arm", "recording"], name="item_once_per_arm")]
        indexes = [models.Index(fields=["status", "started_at"])]


class ItemScore(models.Model):
    """The fields of a production Score, for an experiment's judgment."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="scores")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")
    value = models.SmallIntegerField(null=True, blank=True)
    confidence = models.FloatField()
    model_confidence = models.FloatField()
    evidence = models.TextField(blank=True)
    evidence_verified = models.BooleanField(default=False)
    verification_status = models.CharField(max_length=20)
    verification_spans = models.JSONField(default=list, blank=True)
    verification_closest = models.JSONField(null=True, blank=True)
    verifier_version = models.CharField(max_length=20)
    rationale = models.TextField(blank=True)
    sample_values = models.JSONField(null=True, blank=True)
    unstable = models.BooleanField(default=False)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["item", "criterion"], name="item_score_once_per_criterion")]


class Promotion(models.Model):
    """A change an experiment justified: its candidate's draft published, or its judge made the default."""

    class Action(models.TextChoices):
        PUBLISH_RUBRIC = "publish_rubric", _("Published the candidate's rubric version")
        DEFAULT_JUDGE = "default_judge", _("Made the candidate's judge the default")

    experiment = models.ForeignKey(Experiment, on_delete=models.PROTECT, related_name="promotions")
    arm = models.ForeignKey(Arm, on_delete=models.PROTECT, related_name="+")
    action = models.CharField(max_length=20, choices=Action.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["arm", "action"], name="promotion_once")]
