"""Writes of workspaces, memberships and API keys' use, for the admin, the commands and single sign-on alike."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from access.models import ROLE_GROUPS, ApiKey, Membership, Role, SsoIdentity, Team, Workspace

if TYPE_CHECKING:
    from access.sso_claims import SsoClaims


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


@transaction.atomic
def sso_user_sync(*, issuer: str, claims: SsoClaims, user: AbstractBaseUser | None = None) -> AbstractBaseUser:
    """The person single sign-on logs in: `user` (found by their identity) brought up to date, or a new user
    linked to (issuer, subject). Their name, e-mail address and their membership of the claims' workspace
    follow the claims at every login (its teams too where the provider sends them); memberships of other
    workspaces, given in Veredicto, stay."""
    if user is None:
        user = get_user_model().objects.create_user(_free_username(claims.username), email=claims.email)
        SsoIdentity.objects.create(user=user, issuer=issuer, subject=claims.subject)
    user.email, user.first_name, user.last_name = claims.email, claims.first_name[:150], claims.last_name[:150]
    user.save(update_fields=["email", "first_name", "last_name"])
    teams = claims.teams
    if teams is None:  # teams are given in Veredicto, not by the provider: a login leaves them as they are
        teams = list(Team.objects.filter(workspace=claims.workspace, members__user=user).values_list("name", flat=True))
    member_add(user=user, workspace=claims.workspace, role=claims.role, teams=teams, agent_id=claims.agent_id)
    return user


def _free_username(wanted: str) -> str:
    """`wanted`, or `wanted-2`, `wanted-3`...: a local account keeps its name, the newcomer gets another."""
    users = get_user_model().objects
    base = wanted[:140]
    candidate, number = base, 1
    while users.filter(username=candidate).exists():
        number += 1
        candidate = f"{base}-{number}"
    return candidate


# Recording every request would turn each read into a write; a minute is
# precise enough to tell a key in use from an abandoned one.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def api_key_touch(*, api_key: ApiKey) -> None:
    """Note that the key was used, at most once per LAST_USED_RESOLUTION."""
    now = timezone.now()
    if api_key.last_used_at is not None and now - api_key.last_used_at < LAST_USED_RESOLUTION:
        return
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    api_key.last_used_at = now
