"""Writes of workspaces and memberships, for the admin, the commands and single sign-on alike."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, Group
from django.core.exceptions import ValidationError
from django.db import transaction

from access.models import ROLE_GROUPS, Membership, Role, Team, Workspace


@transaction.atomic
def workspace_create(*, slug: str, name: str = "") -> Workspace:
    workspace = Workspace(slug=slug, name=name or slug)
    workspace.full_clean()
    workspace.save()
    return workspace


@transaction.atomic
def team_get_or_create(*, workspace: Workspace, name: str) -> Team:
    team, _ = Team.objects.get_or_create(workspace=workspace, name=name)
    return team


@transaction.atomic
def member_add(
    *,
    user: AbstractBaseUser,
    workspace: Workspace,
    role: str,
    teams: Iterable[str] = (),
    agent_id: str = "",
) -> Membership:
    """Make `user` a member of `workspace` with `role` (replacing the role they had there), with these
    teams (created in the workspace if new; none: every team) and, for an agent, their agent id."""
    if role not in Role.values:
        raise ValidationError({"role": f"Unknown role {role!r}; one of {', '.join(Role.values)}."})
    if role == Role.AGENT and not agent_id:
        raise ValidationError({"agent_id": "An agent's membership needs the agent id their calls carry."})
    membership, _ = Membership.objects.update_or_create(
        user=user, workspace=workspace, defaults={"role": role, "agent_id": agent_id}
    )
    membership.teams.set([team_get_or_create(workspace=workspace, name=name) for name in teams])
    user_groups_sync(user=user)
    return membership


@transaction.atomic
def member_remove(*, user: AbstractBaseUser, workspace: Workspace) -> None:
    Membership.objects.filter(user=user, workspace=workspace).delete()
    user_groups_sync(user=user)


def user_groups_sync(*, user: AbstractBaseUser) -> None:
    """Put `user` in exactly the role groups their memberships give (other groups are the operator's
    and stay): a capability is a group's permission, which `access.may` checks."""
    role_groups = {name for names in ROLE_GROUPS.values() for name in names}
    wanted = {
        name for role in Membership.objects.filter(user=user).values_list("role", flat=True) for name in ROLE_GROUPS[role]
    }
    groups = {group.name: group for group in Group.objects.filter(name__in=role_groups)}
    for name in wanted - groups.keys():
        groups[name] = Group.objects.create(name=name)
    user.groups.remove(*[group for name, group in groups.items() if name not in wanted])
    user.groups.add(*[groups[name] for name in wanted])
