"""Which calls a page, a report or a query reads: one record per kind of reader, built on one rule each for
the shared filters, so "the team", "the agent" and "from/to" mean on every page what they mean here.

`CallSelection` is the lists' (the review queue, Find calls): a rubric by slug (every version), a team, an
agent, and whole days. `ReportFilters` is the figures' (reports, scorecards, the dashboard): one rubric
version, a team, an agent and whole days, applied by `place_q` together with the reader's scope. Both
mean by "agent" and by the days what `qa.filters` says (the agent id, exactly; `days_q`: whole days in the
current time zone, both included), as does every other reader of calls by days (calibration samples,
experiment sets, scorecards).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum

from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from access.scope import Scope
from qa.filters import agent_q, occurred_q
from qa.routing import ReviewGroup, group_reasons
from reviews.periods import day_start
from rubrics.models import Rubric


def days_q(date_from: date | None, date_to: date | None, *, prefix: str = "") -> Q:
    """Calls that occurred from the first moment of `date_from` to the last of `date_to` (both days
    included, in the current time zone), reached through `prefix`; datetime bounds, so the occurred_at
    index serves them."""
    return occurred_q(
        day_start(date_from) if date_from else None,
        day_start(date_to + timedelta(days=1)) if date_to else None,
        prefix=prefix,
    )


@dataclass(frozen=True)
class CallSelection:
    """The filters every list of calls shares; a list's own record adds its own."""

    rubric: str = ""  # a rubric slug: every version of it
    team: str = ""
    agent: str = ""  # the agent id (qa.filters.agent_q)
    date_from: date | None = None  # whole days, both included (days_q)
    date_to: date | None = None

    def q(self) -> Q:
        """The conditions on recordings."""
        where = agent_q(self.agent) & days_q(self.date_from, self.date_to)
        if self.rubric:
            where &= Q(rubric__slug=self.rubric)
        if self.team:
            where &= Q(team=self.team)
        return where


class Group(StrEnum):
    """The routing's review groups (qa.routing.review_group), and all reviewed calls."""

    RANDOM_AUDIT = ReviewGroup.RANDOM_AUDIT.value
    WARM_UP = ReviewGroup.WARM_UP.value
    FLAGGED = ReviewGroup.FLAGGED.value
    ALL = "all"


GROUP_LABELS = {
    Group.RANDOM_AUDIT: _("Random audit"),
    Group.WARM_UP: _("Warm-up"),
    Group.FLAGGED: _("Flagged"),
    Group.ALL: _("All reviewed"),
}

# Reasons that put a recording in each group, as the routing defines them.
GROUP_REASONS: dict[Group, tuple[str, ...]] = {Group(group): group_reasons(group) for group in ReviewGroup}


@dataclass(frozen=True)
class ReportFilters:
    """The figures' filters: one rubric version, the call's days, a team, an agent, and the reader's scope."""

    rubric: Rubric
    date_from: date | None = None  # whole days, both included (days_q)
    date_to: date | None = None
    team: str = ""
    agent: str = ""  # the agent id (qa.filters.agent_q)
    # The reader's (access.scope.scope_for): a supervisor's teams. None: every call of the rubric, for
    # code that reads on no one's behalf (the rubric's admin health, commands); the forms always set it.
    scope: Scope | None = None


def place_q(filters: ReportFilters, *, workspace: str = "workspace") -> Callable[[str], Q]:
    """The filters' team and agent and the reader's scope, as conditions on recordings reached through a
    prefix (or on rollup rows, whose workspace is their rubric's: `workspace="rubric__workspace"`)."""

    def q(prefix: str) -> Q:
        where = Q()
        if filters.team:
            where &= Q(**{f"{prefix}team": filters.team})
        where &= agent_q(filters.agent, prefix=prefix)
        if filters.scope is not None:
            # Rollup rows carry no source: a source-bound reader reads the calls instead (`rollups_for`).
            where &= filters.scope.recordings_q(
                workspace=f"{prefix}{workspace}", team=f"{prefix}team", agent=f"{prefix}agent_id",
                source=f"{prefix}source" if workspace == "workspace" else None,
            )
        return where

    return q
