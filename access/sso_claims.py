"""What single sign-on takes from an identity provider's claims (access.sso reads them at every login):
who the person is, their workspace, role, teams and, for an agent, their agent id. Names of the claims
are settings (README, "Single sign-on")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from access import selectors
from access.models import Role, Workspace


@dataclass(frozen=True)
class SsoClaims:
    """What Veredicto takes from a provider's claims."""

    subject: str
    username: str
    email: str
    first_name: str
    last_name: str
    workspace: Workspace
    role: str
    teams: tuple[str, ...] | None  # None: the provider sends no teams (QA_OIDC_TEAMS_CLAIM unset)
    agent_id: str


class SsoRefused(Exception):
    """The claims do not let this person in; the message says why, for them and for whoever runs the provider."""


def _one(claims: Mapping[str, Any], name: str) -> str:
    """A claim that holds one value: a string, or a list of exactly one (as many providers send roles)."""
    value = claims.get(name)
    if isinstance(value, list | tuple):
        if len(value) > 1:
            raise SsoRefused(
                _("Your identity provider gave several values in the claim %(claim)s (%(values)s); Veredicto takes one.")
                % {"claim": name, "values": ", ".join(map(str, value))}
            )
        value = value[0] if value else None
    return str(value).strip() if value not in (None, "") else ""


def claims_read(claims: Mapping[str, Any]) -> SsoClaims:
    """The person the claims describe, or SsoRefused naming the claim that is missing or unknown. Workspaces
    are never created from claims: a workspace is a tenant's boundary, which an administrator creates."""
    subject = _one(claims, "sub")
    if not subject:
        raise SsoRefused(_("Your identity provider did not say who you are (no sub claim)."))
    workspace_claim, role_claim = settings.QA_OIDC_WORKSPACE_CLAIM, settings.QA_OIDC_ROLE_CLAIM
    slug = _one(claims, workspace_claim)
    if not slug:
        raise SsoRefused(
            _("Your identity provider did not say your workspace (the claim %(claim)s): ask its administrator.")
            % {"claim": workspace_claim}
        )
    workspace = selectors.workspace_by_slug(slug)
    if workspace is None:
        raise SsoRefused(
            _("Your identity provider gave the workspace “%(value)s” (the claim %(claim)s), which Veredicto does not have.")
            % {"value": slug, "claim": workspace_claim}
        )
    role = _one(claims, role_claim)
    if not role:
        raise SsoRefused(
            _("Your identity provider did not say your role (the claim %(claim)s): ask its administrator.")
            % {"claim": role_claim}
        )
    if role not in Role.values:
        raise SsoRefused(
            _("Your identity provider gave the role “%(value)s” (the claim %(claim)s); Veredicto knows %(roles)s.")
            % {"value": role, "claim": role_claim, "roles": ", ".join(Role.values)}
        )
    teams: tuple[str, ...] | None = None
    if settings.QA_OIDC_TEAMS_CLAIM:
        value = claims.get(settings.QA_OIDC_TEAMS_CLAIM) or ()
        teams = tuple(sorted({str(team).strip() for team in ([value] if isinstance(value, str) else value)} - {""}))
    agent_id = _one(claims, settings.QA_OIDC_AGENT_ID_CLAIM)
    if role == Role.AGENT and not agent_id:
        raise SsoRefused(
            _("Your identity provider gave the role agent but not your agent id (the claim %(claim)s).")
            % {"claim": settings.QA_OIDC_AGENT_ID_CLAIM}
        )
    email = _one(claims, "email")
    return SsoClaims(
        subject=subject,
        username=_one(claims, "preferred_username") or email or subject,
        email=email,
        first_name=_one(claims, "given_name"),
        last_name=_one(claims, "family_name"),
        workspace=workspace,
        role=role,
        teams=teams,
        agent_id=agent_id if role == Role.AGENT else "",
    )
