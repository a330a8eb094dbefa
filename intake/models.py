"""Where calls come in from besides the REST API: Twilio's recording callback and drop folders (a local
folder or an S3 bucket). Each recording or file to ingest is a job of the one executor (core.jobs):
claimed with a lease, so a worker that dies mid-file has it taken back by the sweep, and idempotent on
its identity (a Twilio RecordingSid; a file's name and checksum), so nothing is ingested twice."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from access.models import Workspace
from core.hosts import HostNotAllowed, url_target
from qa.audio import channel_number
from qa.models import Recording


def secret_variable_problem(field: str, name: str) -> dict[str, str]:
    """A field naming an environment variable that holds a secret: only one the operator listed in
    INTAKE_SECRET_VARIABLES (without the list, a workspace's admin could name SECRET_KEY and have it
    sent to a host of their choosing)."""
    if name and name not in settings.INTAKE_SECRET_VARIABLES:
        return {
            field: _(
                "%(name)s is not a variable the operator allowed: add it to INTAKE_SECRET_VARIABLES "
                "or pick one of: %(allowed)s."
            )
            % {"name": name, "allowed": ", ".join(settings.INTAKE_SECRET_VARIABLES) or "-"}
        }
    return {}


def secret_value(name: str) -> str:
    """The secret in variable `name`, only if the operator allowed it (checked again at every use)."""
    if not name or name not in settings.INTAKE_SECRET_VARIABLES:
        return ""
    return os.environ.get(name, "")


class Job(models.Model):
    """The fields core.jobs needs, and the recording a successful job ingested."""

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        RUNNING = "running", _("running")
        SUCCEEDED = "succeeded", _("succeeded")
        FAILED = "failed", _("failed")

    status = models.CharField(_("status"), max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    leased_until = models.DateTimeField(_("leased until"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    recording = models.ForeignKey(Recording, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        abstract = True


class IntakeSettings(models.Model):
    """What every intake has: its workspace, and how its calls are filed."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, verbose_name=_("workspace"))
    slug = models.SlugField(_("slug"), max_length=100, unique=True)
    rubric_slug = models.SlugField(_("rubric"), max_length=100, help_text=_("Its latest published version judges the calls."))
    source = models.CharField(_("source"), max_length=100, help_text=_("The source the calls are filed under."))
    agent_channel = models.CharField(_("agent channel"), max_length=10, default="right", blank=True)
    language = models.CharField(_("language"), max_length=10, blank=True)
    active = models.BooleanField(_("active"), default=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        if self.agent_channel and channel_number(self.agent_channel) is None:
            raise ValidationError({"agent_channel": _("'left', 'right' or a channel's number, from 1.")})


class TwilioAccount(IntakeSettings):
    """A Twilio account whose recordings come into one workspace. Its callback URL is
    /intake/twilio/<slug>/recording/; the auth token is read from the environment variable it names."""

    account_sid = models.CharField(_("account SID"), max_length=34)
    auth_token_variable = models.CharField(
        _("auth token variable"), max_length=100, help_text=_("The environment variable holding the auth token.")
    )

    class Meta:
        verbose_name = _("Twilio account")
        verbose_name_plural = _("Twilio accounts")

    def clean(self) -> None:
        super().clean()
        if problem := secret_variable_problem("auth_token_variable", self.auth_token_variable):
            raise ValidationError(problem)

    @property
    def auth_token(self) -> str:
        return secret_value(self.auth_token_variable)


class TwilioRecording(Job):
    """One recording Twilio said is ready: fetched and ingested once, whatever Twilio sends again."""

    account = models.ForeignKey(TwilioAccount, on_delete=models.CASCADE, related_name="recordings")
    recording_sid = models.CharField(_("recording SID"), max_length=34, unique=True)
    call_sid = models.CharField(_("call SID"), max_length=34, blank=True)
    recording_url = models.URLField(_("recording URL"), max_length=2000)
    channels = models.PositiveSmallIntegerField(_("channels"), default=2)
    started = models.DateTimeField(_("recording started"), null=True, blank=True)
    agent_id = models.CharField(_("agent"), max_length=200, blank=True)
    agent_name = models.CharField(_("agent name"), max_length=200, blank=True)
    team = models.CharField(_("team"), max_length=100, blank=True)

    class Meta:
        verbose_name = _("Twilio recording")
        verbose_name_plural = _("Twilio recordings")


class DropFolder(IntakeSettings):
    """A place where a contact center drops recordings with their manifest: a local folder (under one of
    INTAKE_FOLDER_ROOTS) or an S3 bucket and prefix (at an endpoint INTAKE_S3_ALLOWED_HOSTS allows)."""

    class Kind(models.TextChoices):
        LOCAL = "local", _("local folder")
        S3 = "s3", _("S3 bucket")

    kind = models.CharField(_("kind"), max_length=10, choices=Kind.choices, default=Kind.LOCAL)
    path = models.CharField(_("path"), max_length=1000, blank=True, help_text=_("A local folder."))
    bucket = models.CharField(_("bucket"), max_length=255, blank=True)
    prefix = models.CharField(_("prefix"), max_length=500, blank=True)
    endpoint_url = models.URLField(_("endpoint URL"), max_length=500, blank=True, help_text=_("Empty: AWS S3."))
    region = models.CharField(_("region"), max_length=50, blank=True, default="us-east-1")
    access_key_variable = models.CharField(_("access key variable"), max_length=100, blank=True)
    secret_key_variable = models.CharField(_("secret key variable"), max_length=100, blank=True)

    class Meta:
        verbose_name = _("drop folder")
        verbose_name_plural = _("drop folders")

    def clean(self) -> None:
        super().clean()
        if problems := folder_problems(self):
            raise ValidationError(problems)


def folder_problems(folder: DropFolder) -> dict[str, str]:
    """What in this folder the operator did not allow, by field: a local path outside INTAKE_FOLDER_ROOTS,
    an S3 endpoint outside INTAKE_S3_ALLOWED_HOSTS, a key variable outside INTAKE_SECRET_VARIABLES."""
    problems: dict[str, str] = {}
    if folder.kind == DropFolder.Kind.LOCAL:
        roots = [os.path.realpath(root) for root in settings.INTAKE_FOLDER_ROOTS if root.strip()]
        path = os.path.realpath(folder.path) if folder.path else ""
        if not folder.path or not os.path.isabs(folder.path):
            problems["path"] = "Give the folder's absolute path."
        elif not any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots):
            problems["path"] = (
                f"{folder.path} is not inside a folder the operator allowed: add it to INTAKE_FOLDER_ROOTS "
                f"or pick one inside: {', '.join(settings.INTAKE_FOLDER_ROOTS) or '-'}."
            )
    else:
        if not folder.bucket:
            problems["bucket"] = "Name the bucket."
        endpoint = folder.endpoint_url or f"https://s3.{folder.region or 'us-east-1'}.amazonaws.com"
        try:
            # boto3 connects by itself, so only the endpoint's name and what it resolves to now are checked.
            url_target(endpoint, allowed=settings.INTAKE_S3_ALLOWED_HOSTS, setting="INTAKE_S3_ALLOWED_HOSTS")
        except HostNotAllowed as error:
            problems["endpoint_url"] = str(error)
        for field in ("access_key_variable", "secret_key_variable"):
            problems.update(secret_variable_problem(field, getattr(folder, field)))
    return problems


class DroppedFile(Job):
    """One file seen in a drop folder, with the manifest entry that came with it; ingested once per
    name and checksum."""

    folder = models.ForeignKey(DropFolder, on_delete=models.CASCADE, related_name="files")
    name = models.CharField(_("name"), max_length=1000)
    checksum = models.CharField(_("checksum"), max_length=100)
    size = models.BigIntegerField(_("size"), default=0)
    manifest = models.JSONField(_("manifest entry"), null=True, blank=True)
    manifest_error = models.TextField(_("manifest error"), blank=True)
    sidecar = models.BooleanField(_("sidecar"), default=False, help_text=_("Its manifest entry is a JSON file beside it."))
    moved = models.BooleanField(_("moved aside"), default=False)

    class Meta:
        verbose_name = _("dropped file")
        verbose_name_plural = _("dropped files")
        constraints = [models.UniqueConstraint(fields=["folder", "name", "checksum"], name="dropped_file_once")]
