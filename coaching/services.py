"""Writes for coaching: open a session, the agent's acknowledgement, comments, closing. The pages and the
API all go through here. Each write that others subscribe to emits its event in its own transaction
(`coaching.created`, `coaching.acknowledged`), so a rollback sends nothing."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from access import Capability, may_coach, require
from access.scope import scope_for
from coaching.models import MAX_CRITERIA, CoachedCriterion, CoachingCall, CoachingComment, CoachingSession
from coaching.notifications import coaching_created_notify
from coaching.selectors import agent_team, coachable_scores, proposed_scores, sessions_as_agent, sessions_visible
from core.errors import ConflictError, InvalidInputError
from outbox.services import coaching_acknowledged_emit, coaching_created_emit
from rubrics.models import Rubric

MAX_CALLS = 15


class SessionClosedError(ConflictError):
    """The session was closed: nothing more is added to it."""


@transaction.atomic
def coaching_session_create(
    *,
    user: AbstractBaseUser,
    rubric: Rubric,
    agent_id: str,
    criterion_keys: Sequence[str],
    goal: str,
    follow_up_on: date,
    note: str = "",
    recording_ids: Sequence[int] | None = None,
) -> CoachingSession:
    """Open a session for `agent_id` on one to three criteria of `rubric`, by a supervisor of the agent's team
    or a QA lead. The calls: the judge's verified values of the coached criteria on `recording_ids` (the
    coach's pick), or, without them, the agent's worst verified values per criterion. PermissionDenied for
    someone who may not coach the agent; InvalidInputError keyed by field for bad input."""
    require(user, Capability.COACH, _("Only a supervisor or a QA lead may open a coaching session."))
    scope = scope_for(user)
    if not scope.may(Capability.COACH, rubric.workspace_id):
        raise PermissionDenied(_("You may not coach in this rubric's workspace."))
    found = agent_team(rubric=rubric, agent_id=agent_id, scope=scope)
    if found is None:
        raise InvalidInputError({"agent_id": _("No judged call of agent '%(agent)s' on this rubric that you may see.") % {"agent": agent_id}})
    if not may_coach(user, scope, rubric.workspace_id, found["team"]):
        raise PermissionDenied(_("Agent '%(agent)s' is in team '%(team)s', which is not yours.") % {"agent": agent_id, "team": found["team"]})
    errors: dict[str, str] = {}
    keys = list(dict.fromkeys(key.strip() for key in criterion_keys if key.strip()))
    criteria = {criterion.key: criterion for criterion in rubric.criteria.all()}
    unknown = [key for key in keys if key not in criteria]
    if unknown:
        errors["criteria"] = _("Unknown criteria for this rubric: %(keys)s.") % {"keys": ", ".join(unknown)}
    elif not 1 <= len(keys) <= MAX_CRITERIA:
        errors["criteria"] = _("Coach one to three criteria at a time (%(n)s given).") % {"n": len(keys)}
    if not goal.strip():
        errors["goal"] = _("Say what the agent should do: a goal is required.")
    if follow_up_on <= timezone.localdate():
        errors["follow_up_on"] = _("The follow-up date must be after today.")
    if recording_ids is not None and len(recording_ids) > MAX_CALLS:
        errors["calls"] = _("At most %(n)s calls in a session.") % {"n": MAX_CALLS}
    if errors:
        raise InvalidInputError(errors)
    if recording_ids:
        scores = list(
            coachable_scores(rubric=rubric, agent_id=agent_id, scope=scope, viewer=user).filter(
                criterion__key__in=keys, run__recording_id__in=list(recording_ids)
            )
        )
        missing = sorted(set(recording_ids) - {score.run.recording_id for score in scores})
        if missing:
            raise InvalidInputError(
                {"calls": _("Calls %(ids)s have no verified value of this agent on the coached criteria: an "
                            "unverified quote is no evidence to coach with.") % {"ids": ", ".join(map(str, missing))}}
            )  # fmt: skip
        proposed = False
    else:
        scores = proposed_scores(rubric=rubric, agent_id=agent_id, criterion_keys=keys, scope=scope, viewer=user)
        proposed = True
    session = CoachingSession.objects.create(
        workspace_id=rubric.workspace_id, rubric=rubric, agent_id=agent_id, agent_name=found["name"] or "",
        team=found["team"], coach=user, note=note.strip(), goal=goal.strip(), follow_up_on=follow_up_on,
    )  # fmt: skip
    CoachedCriterion.objects.bulk_create([CoachedCriterion(session=session, criterion=criteria[key]) for key in keys])
    CoachingCall.objects.bulk_create(
        [CoachingCall(session=session, recording_id=s.run.recording_id, score=s, proposed=proposed) for s in scores]
    )
    coaching_created_emit(session_id=session.pk, workspace_id=session.workspace_id)
    coaching_created_notify(session=session)
    return session


def _check_agent(*, session: CoachingSession, user: AbstractBaseUser) -> None:
    if not sessions_as_agent(user=user).filter(pk=session.pk).exists():
        raise PermissionDenied(_("Only the agent coached may acknowledge this session."))


@transaction.atomic
def coaching_acknowledge(*, session: CoachingSession, user: AbstractBaseUser) -> CoachingSession:
    """The agent's "I have read it"; again is a no-op (one event). Claimed by a conditional UPDATE, so two
    clicks at once acknowledge (and emit) once."""
    _check_agent(session=session, user=user)
    now = timezone.now()
    claimed = CoachingSession.objects.filter(pk=session.pk, acknowledged_at__isnull=True).update(
        acknowledged_at=now, acknowledged_by=user
    )
    if claimed:
        coaching_acknowledged_emit(session_id=session.pk, workspace_id=session.workspace_id)
    session.refresh_from_db(fields=["acknowledged_at", "acknowledged_by"])
    return session


@transaction.atomic
def coaching_comment_add(*, session: CoachingSession, user: AbstractBaseUser, body: str) -> CoachingComment:
    """A comment by the agent or by someone who may read the session and coach (the coach, a lead)."""
    as_agent = sessions_as_agent(user=user).filter(pk=session.pk).exists()
    as_coach = (
        scope_for(user).may(Capability.COACH, session.workspace_id)
        and sessions_visible(user=user).filter(pk=session.pk).exists()
    )
    if not (as_agent or as_coach):
        raise PermissionDenied(_("Only the agent or their coaches may comment on this session."))
    if session.status == CoachingSession.Status.CLOSED:
        raise SessionClosedError(_("This session is closed."))
    if not body.strip():
        raise InvalidInputError({"body": _("Write a comment first.")})
    return CoachingComment.objects.create(session=session, author=user, body=body.strip())


@transaction.atomic
def coaching_close(*, session: CoachingSession, user: AbstractBaseUser) -> CoachingSession:
    """Close a session (after its follow-up): by someone who may coach the agent. Again is a no-op."""
    scope = scope_for(user)
    if not (scope.may(Capability.COACH, session.workspace_id) and sessions_visible(user=user).filter(pk=session.pk).exists()):
        raise PermissionDenied(_("Only a coach of this agent may close the session."))
    CoachingSession.objects.filter(pk=session.pk, status=CoachingSession.Status.OPEN).update(
        status=CoachingSession.Status.CLOSED, closed_at=timezone.now()
    )
    session.refresh_from_db(fields=["status", "closed_at"])
    return session
