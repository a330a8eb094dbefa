"""Days, weeks and periods as every report, list and rollup draws them: a day starts at midnight in the
current time zone, a week on its Monday, and a period of days is read as the rollups' whole weeks plus
the days at either end."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from django.utils import timezone


def day_start(day: date) -> datetime:
    """The first moment of `day` in the current time zone: the one day boundary every date filter uses."""
    return timezone.make_aware(datetime.combine(day, time.min))


def week_start(day: date) -> date:
    """The Monday of the week `day` falls in."""
    return day - timedelta(days=day.weekday())


def week_end(day: date) -> date:
    """The Sunday of the week `day` falls in."""
    return week_start(day) + timedelta(days=6)


def week_of(moment: datetime | None) -> date | None:
    """The Monday of the week `moment` falls in, in the current time zone (as `day_start` draws days)."""
    if moment is None:
        return None
    return week_start(timezone.localtime(moment).date())


@dataclass(frozen=True)
class PeriodSplit:
    """A period as the rollup's whole weeks (Mondays from `first_week` to `last_week`, None: unbounded) and
    the partial weeks' days at either end (`edges`, each a first and last day), read from the calls."""

    whole_weeks: bool
    first_week: date | None = None
    last_week: date | None = None
    edges: list[tuple[date, date]] = field(default_factory=list)


def period_split(since: date | None, until: date | None) -> PeriodSplit:
    """The period from `since` to `until` (days, both included; None: unbounded) as whole weeks and edges."""
    first = week_start(since + timedelta(days=6)) if since else None  # the first Monday from `since`
    last = week_start(until + timedelta(days=1)) - timedelta(weeks=1) if until else None  # the last whole week's
    if first and last and first > last:
        return PeriodSplit(whole_weeks=False, edges=[(since, until)])
    edges = []
    if since and since < first:
        edges.append((since, first - timedelta(days=1)))
    if until and until > last + timedelta(days=6):
        edges.append((last + timedelta(days=7), until))
    return PeriodSplit(whole_weeks=True, first_week=first, last_week=last, edges=edges)
