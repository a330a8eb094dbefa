"""What a request may reach: its scope (`access.scope.scope_for_request`: a key's workspace and the
source it was made for (`ApiKey.source`; every source's with `all_sources`), a person's workspaces and
teams). A person's session is not bound to a source.

Another source's recording answers 404, as one that does not exist: a key learns nothing of another
system's calls, not even that an id is taken.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from rest_framework.exceptions import NotFound
from rest_framework.request import Request

from access.models import ApiKey
from access.scope import Scope, scope_for_request
from core.errors import InvalidInputError
from qa.models import Recording

# A browser session posting without naming a source.
SESSION_SOURCE = "web"


def request_key(request: Request) -> ApiKey | None:
    return request.auth if isinstance(request.auth, ApiKey) else None


def recording_check_visible(request: Request, recording: Recording) -> Recording:
    """The recording, or a 404 if it is outside the request's scope (for a key, of another source)."""
    if not scope_for_request(request).contains_recording(recording):
        raise NotFound()
    return recording


def source_apply(request: Request, values: dict[str, Any]) -> None:
    """Fill in the source a posted recording did not name (the key's, or 'web' for a session) and
    refuse one the key may not post under: its external ids are another system's."""
    key = request_key(request)
    if key is None:
        values.setdefault("source", SESSION_SOURCE)
        return
    values.setdefault("source", key.source or key.name)
    if not key.may_use_source(values["source"]):
        raise InvalidInputError(
            {
                "source": _("This key posts only under the source %(source)s, not %(other)s.")
                % {"source": key.source, "other": values["source"]}
            }
        )


def recording_team_check(scope: Scope, values: dict[str, Any]) -> None:
    """Refuse a call posted or uploaded to a team outside the poster's (`Scope.teams_limit`): a team-limited
    supervisor could not read it once stored. A call naming no team is refused to them too, since it is in
    none of their teams. `values` are `recording_ingest`'s, with its rubric found in `scope`."""
    teams = scope.teams_limit(values["rubric"].workspace_id)
    team = values.get("team", "")
    if not teams or team in teams:
        return
    names = ", ".join(sorted(teams))
    if team:
        message = _("You may add calls only to your teams (%(teams)s), not to team %(team)s.") % {
            "teams": names,
            "team": team,
        }
    else:
        message = _("Name the call's team: you may add calls only to your teams (%(teams)s).") % {"teams": names}
    raise InvalidInputError({"team": message})
