"""What "the agent" and a call's time bounds mean in every filter of calls, pages, figures and API alike
(docs/dev/design.md, "Call filters"). Here, below the pages' kernel (reviews.filters), so that the
recordings' API filter (qa.selectors.RecordingFilters) applies the same rule as the pages.

- **The agent** is the agent id, matched exactly: what the figures group by, what an agent's own scope
  reads, and what an integration sends. A name is neither unique nor stable, and a part of one matches
  other people ("Ana" is in "Mariana"), so a list filtered by name could show calls that the report for
  the same agent leaves out.
- **Time bounds** are half-open, `[start, end)` on `occurred_at`: the start included, the end not, so
  consecutive periods never share a call. A page's days (`reviews.filters.days_q`) are whole days, both
  included: from the first moment of the first day to the first moment of the day after the last.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q


def agent_q(agent: str, *, prefix: str = "") -> Q:
    """Calls of the agent whose id is `agent`, exactly (empty: every agent), reached through `prefix`."""
    return Q(**{f"{prefix}agent_id": agent}) if agent else Q()


def occurred_q(start: datetime | None, end: datetime | None, *, prefix: str = "") -> Q:
    """Calls that occurred in `[start, end)`, reached through `prefix`; a bound that is None is open."""
    where = Q()
    if start is not None:
        where &= Q(**{f"{prefix}occurred_at__gte": start})
    if end is not None:
        where &= Q(**{f"{prefix}occurred_at__lt": end})
    return where
