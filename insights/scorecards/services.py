"""Keeping the scorecards' rollups (`ScorecardWeek`, `ScorecardDay`) and the reports' equal to the calls."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from qa.models import Recording
from insights.models import RollupClock, ScorecardDay, ScorecardWeek
from reviews.figures.stats import CellSample, Stratum, StratumSample
from insights.scorecards import freshness
from insights.reports.rollup import as_date, criterion_weeks_delete, criterion_weeks_write
from reviews.periods import week_of
from insights.scorecards.moments import Calls, by_agent_day, call_samples, judged_calls, sample_fields
from rubrics.models import Rubric


def _occurred(value: datetime | str | None) -> datetime | None:
    """A call's time from a raw row: an aware datetime on PostgreSQL; on SQLite, what Django stores there,
    in UTC without saying so (a naive datetime or its text, depending on the column's declared type)."""
    if value is None:
        return None
    moment = value if isinstance(value, datetime) else parse_datetime(value)
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def _stale_take(rubric: Rubric) -> list[tuple[str, datetime | None]]:
    """Unmark the rubric's stale calls, returning each one's agent and time. One statement, so a call marked
    again after it (judged or reviewed meanwhile) stays marked for the next refresh; one marked before it and
    committed since is read by the refresh's queries, which all come after."""
    table = connection.ops.quote_name(Recording._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET rollup_stale = %s WHERE rubric_id = %s AND rollup_stale"
            " RETURNING agent_id, occurred_at",
            [False, rubric.pk],
        )
        return [(agent_id, _occurred(occurred_at)) for agent_id, occurred_at in cursor.fetchall()]


def _strata(sample: CellSample) -> list[Stratum]:
    """The strata a cell's rollup rows are for: those with any figure, or the plain one for a cell of calls
    with no value at all, so that the cell (the agent, the criterion) is kept as the calls give it."""
    found = [stratum for stratum in Stratum if sample.of(stratum) != StratumSample()]
    return found or [Stratum.PLAIN]


def _week_calls(rubric: Rubric, week: date | None, agents: set[str]) -> Calls:
    """The rubric's judged calls of `agents` in `week` (None: the calls with no time)."""
    in_week = judged_calls(rubric, week, week + timedelta(days=6)) if week else judged_calls(rubric)

    def calls(prefix: str) -> Q:
        chosen = in_week(prefix) & Q(**{f"{prefix}agent_id__in": agents})
        return chosen if week else chosen & Q(**{f"{prefix}occurred_at__isnull": True})

    return calls


def _rows(model: type, place: dict, group_names: dict, cells: dict) -> list:
    """`model`'s rows (ScorecardWeek, ScorecardDay) at `place` for CellSamples by ((team, agent id), column)."""
    return [
        model(
            **place,
            team=team,
            agent_id=agent_id,
            agent_name=group_names[(team, agent_id)],
            column_key=column_key,
            flagged=stratum == Stratum.FLAGGED,
            **sample_fields(sample.of(stratum)),
        )
        for ((team, agent_id), column_key), sample in cells.items()
        for stratum in _strata(sample)
    ]


@transaction.atomic
def scorecard_weeks_refresh(*, rubric: Rubric) -> int:
    """Read again the agent-weeks of the rubric's calls whose values changed since the last refresh (those
    marked `Recording.rollup_stale`), and replace their rows in the rollups: the scorecards' per agent-day
    (`ScorecardDay`) and per agent-week (`ScorecardWeek`, the sum of its days), and the reports' per
    criterion (`insights.reports.rollup`). Returns how many calls were marked.

    One query per week touched, whatever the number of its agents: after a day of judging, the current
    week; after a review, the reviewed call's agent-week; after a migration or a bulk load, every week."""
    # One refresh of a rubric at a time: two would replace the same rows. The judging's warm-up takes the
    # same lock before it touches a recording, as this does, so neither waits for the other in a cycle.
    Rubric.objects.select_for_update().values_list("pk", flat=True).get(pk=rubric.pk)
    stale = _stale_take(rubric)
    agents_by_week: defaultdict[date | None, set[str]] = defaultdict(set)
    days_by_week: defaultdict[date | None, set[date]] = defaultdict(set)  # the days with a marked call
    for agent_id, occurred_at in stale:
        agents_by_week[week_of(occurred_at)].add(agent_id)
        if occurred_at is not None:
            days_by_week[week_of(occurred_at)].add(timezone.localtime(occurred_at).date())
    # Every delete first: a delete after this refresh's inserts would scan them, which no statistics count
    # yet (the first build after the migration inserts every row of every week in this transaction).
    # A week's rows are replaced for its agents with a marked call, and of its days' rows only those of the
    # days with one: the others have not changed (a week's are seven times as many rows to write).
    for week, agents in agents_by_week.items():
        ScorecardWeek.objects.filter(rubric=rubric, week=week, agent_id__in=agents).delete()
        ScorecardDay.objects.filter(rubric=rubric, day__in=days_by_week[week], agent_id__in=agents).delete()
        criterion_weeks_delete(rubric=rubric, week=week, agents=agents, days=days_by_week[week])
    for week, agents in agents_by_week.items():
        calls = _week_calls(rubric, week, agents)
        criterion_weeks_write(
            rubric=rubric, week=week, days=days_by_week[week], calls=Recording.objects.filter(calls(""))
        )
        samples = call_samples(rubric, calls, by_agent_day)
        # Per day, then the week's sums: a week's row is the sum of its days', as the calls' would be.
        days: defaultdict[date, dict] = defaultdict(dict)
        day_names: defaultdict[date, dict] = defaultdict(dict)
        weekly: dict[tuple[tuple, str], CellSample] = {}
        for ((team, agent_id, day), column_key), sample in samples.cells.items():
            agent = (team, agent_id)
            cell = (agent, column_key)
            weekly[cell] = weekly[cell] + sample if cell in weekly else sample
            if day is not None and as_date(day) in days_by_week[week]:
                days[as_date(day)][(agent, column_key)] = sample
        for (team, agent_id, day), name in samples.group_names.items():
            if day is not None:
                day_names[as_date(day)][(team, agent_id)] = name
        week_names = {(team, agent_id): samples.agent_names[agent_id] for (team, agent_id), _ in weekly}
        ScorecardWeek.objects.bulk_create(_rows(ScorecardWeek, {"rubric": rubric, "week": week}, week_names, weekly))
        ScorecardDay.objects.bulk_create(
            row
            for day, cells in days.items()
            for row in _rows(ScorecardDay, {"rubric": rubric, "day": day}, day_names[day], cells)
        )
    return len(stale)


def rollups_readable(*, rubric: Rubric) -> bool:
    """Whether a page may read the rubric's rollups: as they are while the beat refreshes them every minute
    (`rollups_as_of` says how fresh), else brought up to date now if a few calls changed; False while too
    many are marked (the page then reads the calls).

    At ten million calls a month about 240 calls change a minute, and a refresh of a day's 437 changed calls
    costs 3.6 CPU-seconds (bench/reports/README.md): pages that each did it would pay the beat's work over and
    over, so with a beat they read the last pass's rollups and say so, as BI tools show data as of a refresh."""
    changed = freshness.rollups_changed(rubric)
    if changed > freshness.REFRESH_IN_READ_MAX:
        return False
    if changed and freshness.beat_clock() is None:  # with no change, the refresh would only take the rubric's lock
        scorecard_weeks_refresh(rubric=rubric)
    return True


def scorecard_weeks_refresh_all() -> int:
    """Refresh the rollup of every rubric with changed calls; returns how many calls were read again. Run by
    Celery beat (`scorecards.refresh`) every QA_ROLLUP_REFRESH_INTERVAL; its start is recorded once every rubric
    is done, as the moment the pages' figures are as of."""
    started = timezone.now()
    rubrics = Rubric.objects.filter(pk__in=Recording.objects.filter(rollup_stale=True).values("rubric_id"))
    refreshed = sum(scorecard_weeks_refresh(rubric=rubric) for rubric in rubrics)
    # A later pass may have finished first (one slow pass overlapping the next tick): the clock only moves on.
    if not RollupClock.objects.filter(pk=RollupClock.ONE, started_at__lt=started).update(started_at=started):
        RollupClock.objects.bulk_create([RollupClock(pk=RollupClock.ONE, started_at=started)], ignore_conflicts=True)
    return refreshed
