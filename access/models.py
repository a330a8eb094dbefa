"""Workspaces, their teams, and who belongs to them with which role (healthchecks' Project and Member).

A workspace is a client or a program: it owns rubrics, and through them recordings, judges,
calibrations and experiments. A person belongs to workspaces through `Membership` rows, one per
workspace, each with a role; a supervisor's membership may name teams. What a person may then see is
decided in one place, `access.scope.scope_for`.
"""

import hashlib
import secrets
import unicodedata

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

# Existing data and users go here on migration; a first install has it too, so a small operation
# never has to think about workspaces.
DEFAULT_WORKSPACE = "default"


class Workspace(models.Model):
    slug = models.SlugField(_("slug"), max_length=100, unique=True, validators=[validate_slug])
    name = models.CharField(_("name"), max_length=200)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["slug"]
        verbose_name = _("workspace")
        verbose_name_plural = _("workspaces")

    def __str__(self) -> str:
        return self.name or self.slug


class Team(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(_("name"), max_length=100)

    class Meta:
        ordering = ["workspace", "name"]
        verbose_name = _("team")
        verbose_name_plural = _("teams")
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="access_team_unique_name")]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    # Ordered from most to least: a QA lead also reviews, an admin does everything in the workspace.
    ADMIN = "admin", _("Admin")
    QA_LEAD = "qa_lead", _("QA lead")
    RUBRIC_OWNER = "rubric_owner", _("Rubric owner")
    SUPERVISOR = "supervisor", _("Supervisor")
    AGENT = "agent", _("Agent")


# The Django groups that give each role its capabilities (access.Capability names their permissions;
# reviews' migrations grant the groups theirs). A role's capabilities are the union of its groups'.
ROLE_GROUPS: dict[str, tuple[str, ...]] = {
    Role.ADMIN: ("Supervisors", "QA leads", "Rubric owners"),
    Role.QA_LEAD: ("Supervisors", "QA leads"),
    Role.RUBRIC_OWNER: ("Rubric owners",),
    Role.SUPERVISOR: ("Supervisors",),
    Role.AGENT: ("Agents",),
}


def role_of_groups(groups: set[str]) -> str | None:
    """The role a person in these role groups has: ROLE_GROUPS read backwards, as the workspaces' migration
    (access 0002) first decided it for everyone already in groups. A rubric owner who also supervises or
    leads QA is an admin, though the owner and supervisor groups alone are not all of an admin's groups.
    None: no role group. The migration keeps its own frozen copy (a migration never imports app code that
    may change); it predates the Agents group, so it has no agent line."""
    lead, owner, supervisor = "QA leads" in groups, "Rubric owners" in groups, "Supervisors" in groups
    if owner and (lead or supervisor):
        return Role.ADMIN
    if lead:
        return Role.QA_LEAD
    if owner:
        return Role.RUBRIC_OWNER
    if supervisor:
        return Role.SUPERVISOR
    return Role.AGENT if "Agents" in groups else None


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(_("role"), max_length=20, choices=Role.choices)
    teams = models.ManyToManyField(
        Team,
        blank=True,
        related_name="members",
        verbose_name=_("teams"),
        help_text=_("A supervisor's teams: they see only these teams' calls. None: every team of the workspace."),
    )
    agent_id = models.CharField(
        _("agent id"),
        max_length=100,
        blank=True,
        help_text=_("For an agent: the agent id their calls carry; they see only those calls."),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["workspace", "user"]
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        constraints = [
            models.UniqueConstraint(fields=["user", "workspace"], name="access_membership_one_per_workspace"),
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.workspace} · {self.get_role_display()}"


def default_workspace_id() -> int:
    """The default workspace's id: what a rubric, key or experiment made without naming one belongs to
    (a first install's only workspace; created here if a test database or a script lacks it)."""
    workspace, _ = Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE, defaults={"name": "Default"})
    return workspace.pk


class SsoIdentity(models.Model):
    """A person as their identity provider knows them: single sign-on logs in by (issuer, subject), the
    one pair OpenID Connect promises never to reassign, never by an e-mail address or username."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities")
    issuer = models.CharField(_("issuer"), max_length=255)
    subject = models.CharField(_("subject"), max_length=255)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("single sign-on identity")
        verbose_name_plural = _("single sign-on identities")
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="access_sso_identity_unique")]

    def __str__(self) -> str:
        return f"{self.subject} @ {self.issuer}"


def has_control_characters(value: str) -> bool:
    """Line breaks, NUL, escape sequences, invisible format characters (e.g. a right-to-left
    override): none belongs in an identifier, and each can forge a log line, break an export
    or make two ids look alike."""
    return any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") for char in value)


class ApiKey(models.Model):
    """A key an external system uses for the REST API. Only a hash is stored."""

    PREFIX_LENGTH = 8

    name = models.CharField(_("name"), max_length=100, unique=True, help_text=_("The external system."))
    # A key acts for one system: it posts under that system's source and reads, lists and rejudges
    # only its recordings, so one system's key cannot read another's calls or take its external ids.
    source = models.CharField(
        _("source"),
        max_length=100,
        blank=True,
        help_text=_("The system whose recordings this key posts, reads and rejudges; blank: the key's name."),
    )
    all_sources = models.BooleanField(
        _("all sources"),
        default=False,
        help_text=_("Reads and rejudges every system's recordings and posts under any source (an integration hub)."),
    )
    # A key acts inside one workspace: it reads, posts and reviews only that workspace's rubrics and calls.
    workspace = models.ForeignKey(
        Workspace, on_delete=models.PROTECT, related_name="api_keys", verbose_name=_("workspace")
    )  # fmt: skip
    prefix = models.CharField(max_length=PREFIX_LENGTH, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    can_review = models.BooleanField(_("can post reviews"), default=False)
    can_run_experiments = models.BooleanField(
        _("can run experiments"),
        default=False,
        help_text=_("A rubric owner's key: create, cancel and read experiments."),
    )
    # The bulk export reads every call of the key's scope at once, for a BI system: a right of its own.
    can_export = models.BooleanField(
        _("can export"),
        default=False,
        help_text=_("A BI system's key: read the bulk export (/api/export/) of its scope."),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(_("expires at"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        db_table = "qa_apikey"  # the table it had in qa, kept: the move changed no row
        ordering = ["name"]
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def hash(key: str) -> str:
        # Keys are 256 random bits, so a fast hash is enough: there is nothing to brute-force.
        return hashlib.sha256(key.encode()).hexdigest()

    @classmethod
    def generate(cls) -> tuple[str, str]:
        """A new (prefix, full key) pair; the prefix finds the row, the rest proves possession."""
        prefix = secrets.token_hex(cls.PREFIX_LENGTH // 2)
        return prefix, f"{prefix}.{secrets.token_urlsafe(32)}"

    def clean(self) -> None:
        if has_control_characters(self.source):
            raise ValidationError({"source": _("A source has no control characters.")})

    def may_use_source(self, source: str) -> bool:
        """Whether this key may post, read or rejudge a recording of `source`."""
        return self.all_sources or source == self.source

    def save(self, *args, **kwargs) -> None:
        if self.workspace_id is None:  # made without naming one (a shell, a test): the default workspace
            self.workspace_id = default_workspace_id()
        super().save(*args, **kwargs)

    @property
    def is_active(self) -> bool:
        now = timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)
