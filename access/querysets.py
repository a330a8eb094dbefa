"""The one door to the scope for every model whose rows belong to a workspace: `Model.objects.visible_to(scope)`.

Each such model declares once, as `scope_paths`, where its rows find what the scope reads (its workspace,
and for a call or a row of one, the call's team, agent and source); `visible_to` applies the scope
(`access.scope.Scope.rows_q`) along those paths. So the field paths are spelled in one place per model,
and the other doors (`calls_visible`, the API's reads, `agent_recordings`, the webhooks' and the
disputes' reads, `can_view_session`) are this one, some with a narrower scope.

Apart from access.scope so that a model module can import it while the app registry loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Self

from django.db import models
from django.db.models import Q


class Scope(Protocol):
    """access.scope.Scope, as this module reads it (access.scope imports this one)."""

    def rows_q(self, paths: ScopePaths) -> Q: ...


@dataclass(frozen=True)
class ScopePaths:
    """Where a row finds its workspace and, for a call's rows, the call's team, agent id and source.
    `team` None: a row of the whole workspace (a rubric, an experiment, a key), which a workspace's grant
    sees whatever its teams. `source` None on a call's row: it carries none (a rollup), so a source-bound
    key sees none of them."""

    workspace: str
    team: str | None = None
    agent: str | None = None
    source: str | None = None

    @classmethod
    def of_calls(cls, path: str = "", *, source: bool = True) -> ScopePaths:
        """A call's paths, reached through `path` ("" for a recording, "recording__" for a run...)."""
        return cls(
            workspace=f"{path}workspace", team=f"{path}team", agent=f"{path}agent_id",
            source=f"{path}source" if source else None,
        )  # fmt: skip


class ScopedQuerySet(models.QuerySet):
    """A queryset of a model that declares `scope_paths`."""

    def visible_to(self, scope: Scope) -> Self:
        """The rows `scope` may see (access.scope.scope_for, scope_for_key, scope_for_request)."""
        return self.filter(scope.rows_q(self.model.scope_paths))


ScopedManager = models.Manager.from_queryset(ScopedQuerySet)
