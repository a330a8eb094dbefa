"""A coaching session: one agent, one to three criteria of one rubric, the calls that show them (verified judge
values only: an unverified quote is no evidence), the coach's note, an agreed goal and a follow-up date; then the
agent's acknowledgement and the comments of both. Where it sits: the agent's calls (team, agent id) decide who may
read it, as for a call (access.scope.Scope.recordings_q on the session's own workspace, team and agent id)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from access.models import Workspace
from qa.models import Recording, Score
from rubrics.models import Criterion, Rubric

MAX_CRITERIA = 3


class CoachingSession(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        CLOSED = "closed", _("Closed")

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="+")
    agent_id = models.CharField(_("agent id"), max_length=100)
    agent_name = models.CharField(_("agent"), max_length=200, blank=True)
    # The team of most of the agent's calls when the session was opened: whose supervisors may read it,
    # and the team the "did it work" compares the agent with.
    team = models.CharField(_("team"), max_length=100)
    coach = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="coaching_given")
    note = models.TextField(_("note"), blank=True)
    goal = models.CharField(_("goal"), max_length=500)
    follow_up_on = models.DateField(_("follow-up date"))
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    acknowledged_at = models.DateTimeField(_("acknowledged"), null=True, blank=True)
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("coaching session")
        verbose_name_plural = _("coaching sessions")
        indexes = [models.Index(fields=["workspace", "agent_id"], name="coaching_agent")]

    def __str__(self) -> str:
        return f"Coaching {self.pk} of {self.agent_id}"


class CoachedCriterion(models.Model):
    session = models.ForeignKey(CoachingSession, on_delete=models.CASCADE, related_name="criteria")
    criterion = models.ForeignKey(Criterion, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["criterion__order", "criterion_id"]
        constraints = [models.UniqueConstraint(fields=["session", "criterion"], name="coached_criterion_once")]


class CoachingCall(models.Model):
    """A call the session is about: a judge's verified value on one coached criterion, with its quote."""

    session = models.ForeignKey(CoachingSession, on_delete=models.CASCADE, related_name="calls")
    recording = models.ForeignKey(Recording, on_delete=models.CASCADE, related_name="+")
    # No database constraint: on PostgreSQL the scores are partitioned by their run's month and their key is
    # (id, run_created_at) (qa 0025). Django still cascades a deleted score; core.partitions' retention
    # deletes the calls of an archived month's scores, and checks none is left, before it drops the month.
    score = models.ForeignKey(Score, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    proposed = models.BooleanField(default=False)  # proposed (the agent's worst verified values), else picked

    class Meta:
        ordering = ["score__criterion__order", "score__value", "id"]
        constraints = [models.UniqueConstraint(fields=["session", "score"], name="coaching_call_once")]


class CoachingComment(models.Model):
    session = models.ForeignKey(CoachingSession, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    body = models.TextField(_("comment"))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
