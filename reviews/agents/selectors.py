"""An agent's own calls: the one place the agent pages, the disputes and their API ask which calls a
signed-in agent may see."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from access.models import Role
from access.scope import Scope, scope_for
from qa.models import Recording


def agent_ids(user: AbstractBaseUser) -> list[str]:
    """The agent ids `user`'s agent memberships carry (none for anyone who is not an agent)."""
    return sorted({grant.agent_id for grant in scope_for(user).grants if grant.role == Role.AGENT and grant.agent_id})


def agent_recordings(user: AbstractBaseUser) -> QuerySet[Recording]:
    """The calls of `user` as an agent, and no one else's: their scope (access.scope.scope_for) narrowed to
    their agent memberships, so each workspace's agent id counts only in that workspace, and a person who
    is an agent in one workspace and a supervisor in another sees here only their own calls."""
    scope = scope_for(user)
    as_agent = Scope(grants=tuple(grant for grant in scope.grants if grant.role == Role.AGENT))
    return Recording.objects.filter(as_agent.recordings_q())
