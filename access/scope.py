"""What a person or a key may see: the one function every selector and view asks (healthchecks'
`_get_project_for_user`, for many workspaces at once).

A QA lead, rubric owner or admin sees their workspace; a supervisor their teams' calls (all of the
workspace's when their membership names no team); an agent their own calls; a superuser everything.
A key sees its workspace and, unless it is made for every source, only the calls of its source
(`scope_for_key`): every read that goes through the scope (selectors, reports, scorecards, exports,
the webhooks' fan-out) is bound to it, not only the recording endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from access.models import ROLE_GROUPS, Membership, Role
from access.querysets import ScopePaths


@dataclass(frozen=True)
class Grant:
    """One workspace's part of a scope."""

    workspace_id: int
    role: str
    teams: frozenset[str] = frozenset()  # empty: every team
    agent_id: str = ""
    source: str | None = None  # a key's source: only its calls. None: every source


@dataclass(frozen=True)
class Scope:
    grants: tuple[Grant, ...] = ()
    everything: bool = False  # a superuser
    # Each role's permissions once read (Scope.may), for the rest of the request.
    _permissions: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def workspace_ids(self) -> frozenset[int]:
        return frozenset(grant.workspace_id for grant in self.grants)

    def role_in(self, workspace_id: int) -> str | None:
        return next((grant.role for grant in self.grants if grant.workspace_id == workspace_id), None)

    @property
    def by_source(self) -> bool:
        """Whether some of this scope's calls are limited to a source (a source-bound key's): figures
        kept per team or week without the source (the reports' rollups) are not its to read."""
        return any(grant.source is not None for grant in self.grants)

    def workspaces_q(self, field: str = "workspace") -> Q:
        """Rows of the workspaces in scope (rubrics, judges, experiments, calibrations: no team or agent)."""
        if self.everything:
            return Q()
        return Q(**{f"{field}__in": sorted(self.workspace_ids)}) if self.grants else Q(pk__in=[])

    def recordings_q(
        self, *, workspace: str = "workspace", team: str = "team", agent: str = "agent_id", source: str | None = ""
    ) -> Q:
        """Recordings (or rows reached through one, by these field paths) in scope: a supervisor's teams,
        an agent's own calls, a key's source. `source` defaults to the path of `workspace` with "source"
        in its place; None for rows that carry no source (a rollup's), of which a source-bound grant
        gets none: it cannot tell its calls from the others'."""
        if self.everything:
            return Q()
        if source == "":
            source = workspace.removesuffix("workspace") + "source"
        q = Q(pk__in=[])
        for grant in self.grants:
            if grant.source is not None:
                if source is None:
                    continue
                q |= Q(**{workspace: grant.workspace_id, source: grant.source})
                continue
            part = Q(**{workspace: grant.workspace_id})
            if grant.role == Role.AGENT:
                part &= Q(**{agent: grant.agent_id})
            elif grant.role == Role.SUPERVISOR and grant.teams:
                part &= Q(**{f"{team}__in": sorted(grant.teams)})
            q |= part
        return q


    def rows_q(self, paths: ScopePaths) -> Q:
        """Rows in scope, by a model's declared paths (`Model.objects.visible_to(scope)`, access.querysets):
        a workspace's rows by `workspaces_q`, a call's by `recordings_q`."""
        if paths.team is None:
            return self.workspaces_q(paths.workspace)
        return self.recordings_q(workspace=paths.workspace, team=paths.team, agent=paths.agent, source=paths.source)

    def as_agent(self) -> Scope:
        """This scope narrowed to its agent memberships: a person's own calls as an agent and no one else's,
        each workspace's agent id counting only in that workspace (the agents' pages, their disputes)."""
        return Scope(grants=tuple(grant for grant in self.grants if grant.role == Role.AGENT), _permissions=self._permissions)

    def contains_recording(self, recording: object) -> bool:
        """Whether one loaded recording is in scope (`recordings_q`'s rule, without a query)."""
        return self.contains_calls(
            getattr(recording, "workspace_id", None), recording.team, recording.agent_id, source=recording.source
        )

    def contains_calls(self, workspace_id: int | None, team: str, agent_id: str, *, source: str | None = None) -> bool:
        """Whether the calls of `agent_id` in `team` of a workspace (of `source`; None: of any source) are
        in scope (`recordings_q`'s rule)."""
        if self.everything:
            return True
        for grant in self.grants:
            if grant.workspace_id != workspace_id:
                continue
            if grant.source is not None:
                if source == grant.source:
                    return True
            elif grant.role == Role.AGENT:
                if agent_id == grant.agent_id:
                    return True
            elif grant.role != Role.SUPERVISOR or not grant.teams or team in grant.teams:
                return True
        return False

    def teams_limit(self, workspace_id: int) -> frozenset[str]:
        """The teams this scope's calls in `workspace_id` are limited to: a team-limited supervisor's
        (`recordings_q`'s rule). Empty: no limit by team (a workspace-wide role, a supervisor of every team,
        a key, a superuser). What a person may post or upload is bounded by it: a call they could not read."""
        if self.everything:
            return frozenset()
        grant = next((grant for grant in self.grants if grant.workspace_id == workspace_id), None)
        return grant.teams if grant is not None and grant.role == Role.SUPERVISOR else frozenset()

    def whole_workspaces_q(self, field: str = "workspace") -> Q:
        """Rows of the workspaces where this scope sees every call: not a team-limited supervisor's, not an
        agent's. For what is about all of a workspace's calls at once and cannot be cut by team (an
        experiment compares judges on a sample of them, quotes included)."""
        if self.everything:
            return Q()
        ids = sorted(
            grant.workspace_id
            for grant in self.grants
            if grant.role != Role.AGENT and not (grant.role == Role.SUPERVISOR and grant.teams)
        )
        return Q(**{f"{field}__in": ids})

    def sees_team(self, workspace_id: int, team: str) -> bool:
        """Whether a team's figures as a whole (a scorecard's team row) are in scope: a supervisor's
        own teams, any team for a workspace-wide role; an agent sees no team's, nor a source-bound key
        (a team's calls come from every source)."""
        if self.everything:
            return True
        return any(
            grant.role != Role.AGENT
            and grant.source is None
            and (grant.role != Role.SUPERVISOR or not grant.teams or team in grant.teams)
            for grant in self.grants
            if grant.workspace_id == workspace_id
        )

    def permissions_in(self, workspace_id: int) -> frozenset[str]:
        """The permissions of this scope's role in `workspace_id` (none where it has no role)."""
        role = self.role_in(workspace_id)
        if role is None:
            return frozenset()
        if role not in self._permissions:  # one query per role and request: the scope lives on the user
            self._permissions[role] = role_permissions(role)
        return self._permissions[role]

    def may(self, capability: str, workspace_id: int) -> bool:
        """Whether this scope's role in `workspace_id` carries `capability` (a permission of its role's
        groups, access.models.ROLE_GROUPS): a supervisor in A who leads QA in B may not run A's
        calibrations. A superuser may everything."""
        if self.everything:
            return True
        return str(capability) in self.permissions_in(workspace_id)


    def where(self, capability: str) -> Scope:
        """This scope narrowed to the workspaces where its role carries `capability`: the rubrics a
        supervisor may upload calls for, those a QA lead may calibrate."""
        if self.everything:
            return self
        grants = tuple(grant for grant in self.grants if self.may(capability, grant.workspace_id))
        return Scope(grants=grants, _permissions=self._permissions)

_CACHE = "_access_scope"


def role_permissions(role: str) -> frozenset[str]:
    """The permissions ("app.codename") of a role's groups, as the operator set them (one query)."""
    from django.contrib.auth.models import Permission

    rows = Permission.objects.filter(group__name__in=ROLE_GROUPS[role]).values_list("content_type__app_label", "codename")
    return frozenset(f"{app}.{codename}" for app, codename in rows)


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


# The operator's commands and the workers (no person, no key): every workspace.
EVERYTHING = Scope(everything=True)


def scope_for_key(key: object) -> Scope:
    """What an API key sees: its workspace, and only its source's calls unless it is made for every
    source (`ApiKey.may_use_source`'s rule)."""
    source = None if key.all_sources else key.source
    return Scope(grants=(Grant(workspace_id=key.workspace_id, role=Role.ADMIN, source=source),))


def scope_for_request(request: object) -> Scope:
    """The scope of an API request: its key's (`scope_for_key`), or its person's (`scope_for`)."""
    from access import is_api_key

    auth = getattr(request, "auth", None)
    if is_api_key(auth):
        return scope_for_key(auth)
    return scope_for(request.user)
