"""An agent's own calls: the one place the agent pages, the disputes and their API ask which calls a
signed-in agent may see."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from access.models import Role
from access.scope import scope_for
from qa.models import Recording


def agent_ids(user: AbstractBaseUser) -> list[str]:
    """The agent ids `user`'s agent memberships carry (none for anyone who is not an agent)."""
    return sorted({grant.agent_id for grant in scope_for(user).grants if grant.role == Role.AGENT and grant.agent_id})


def agent_recordings(user: AbstractBaseUser) -> QuerySet[Recording]:
    """The calls of `user` as an agent, and no one else's. Until recordings carry their workspace, the agent
    ids of the user's agent memberships decide; then `Recording.objects.filter(scope_for(user).recordings_q())`
    restricted to the agent grants replaces this body, and every caller follows."""
    return Recording.objects.filter(agent_id__in=agent_ids(user))
