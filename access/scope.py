"""What a person or a key may see: the one function every selector and view asks (healthchecks'
`_get_project_for_user`, for many workspaces at once).

A QA lead, rubric owner or admin sees their workspace; a supervisor their teams' calls (all of the
workspace's when their membership names no team); an agent their own calls; a superuser everything.
A key sees its workspace (and, from the hardening issue, its source, which `ApiKey.may_use_source`
keeps deciding).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from access.models import Membership, Role


@dataclass(frozen=True)
class Grant:
    """One workspace's part of a scope."""

    workspace_id: int
    role: str
    teams: frozenset[str] = frozenset()  # empty: every team
    agent_id: str = ""


@dataclass(frozen=True)
class Scope:
    grants: tuple[Grant, ...] = ()
    everything: bool = False  # a superuser

    @property
    def workspace_ids(self) -> frozenset[int]:
        return frozenset(grant.workspace_id for grant in self.grants)

    def role_in(self, workspace_id: int) -> str | None:
        return next((grant.role for grant in self.grants if grant.workspace_id == workspace_id), None)

    def workspaces_q(self, field: str = "workspace") -> Q:
        """Rows of the workspaces in scope (rubrics, judges, experiments, calibrations: no team or agent)."""
        if self.everything:
            return Q()
        return Q(**{f"{field}__in": sorted(self.workspace_ids)}) if self.grants else Q(pk__in=[])

    def recordings_q(self, *, workspace: str = "workspace", team: str = "team", agent: str = "agent_id") -> Q:
        """Recordings (or rows reached through one, by these field paths) in scope: a supervisor's teams,
        an agent's own calls."""
        if self.everything:
            return Q()
        q = Q(pk__in=[])
        for grant in self.grants:
            part = Q(**{workspace: grant.workspace_id})
            if grant.role == Role.AGENT:
                part &= Q(**{agent: grant.agent_id})
            elif grant.role == Role.SUPERVISOR and grant.teams:
                part &= Q(**{f"{team}__in": sorted(grant.teams)})
            q |= part
        return q


_CACHE = "_access_scope"


def scope_for(user: object) -> Scope:
    """The scope of a signed-in person, read once per request (one query) and kept on the user object."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return Scope()
    cached = getattr(user, _CACHE, None)
    if cached is not None:
        return cached
    if user.is_superuser:
        scope = Scope(everything=True)
    else:
        rows: dict[int, dict] = {}
        for workspace_id, role, agent_id, team in Membership.objects.filter(user=user).values_list(
            "workspace_id", "role", "agent_id", "teams__name"
        ):
            row = rows.setdefault(workspace_id, {"role": role, "agent_id": agent_id, "teams": set()})
            if team:
                row["teams"].add(team)
        scope = Scope(
            grants=tuple(
                Grant(workspace_id=ws, role=row["role"], teams=frozenset(row["teams"]), agent_id=row["agent_id"])
                for ws, row in sorted(rows.items())
            )
        )
    setattr(user, _CACHE, scope)
    return scope


def scope_for_workspace(workspace_id: int) -> Scope:
    """A whole workspace: what a key of that workspace sees."""
    return Scope(grants=(Grant(workspace_id=workspace_id, role=Role.ADMIN),))
