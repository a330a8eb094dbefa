"""How fresh the rollups are that the scorecards, the reports and the dashboard read.

Each change to a call's values marks it (`Recording.rollup_stale`) until a refresh writes its rows again
(`insights.scorecards.services.scorecard_weeks_refresh`). Celery beat refreshes every rubric every
QA_ROLLUP_REFRESH_INTERVAL and records when its pass started (`RollupClock`); while it keeps doing so, a page
reads the rollups as they are and says how fresh they are (`rollups_as_of`). Without a beat (the embedded first
run) or with one stopped, a page brings them up to date itself before reading (`services.rollups_readable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from insights.models import RollupClock
from qa.models import Recording
from rubrics.models import Rubric

# A read brings the rollups up to date first if at most this many calls changed since (a minute of judging
# is about 1,500 at 25/s). More (the first read after the migration, a bulk load, a stopped beat) is for
# the beat to read: a page would wait for it (16 s for 100,000 calls), and so reads the calls themselves.
REFRESH_IN_READ_MAX = 5_000


@dataclass(frozen=True)
class AsOf:
    """What a page says of figures read from rollups the beat has yet to bring up to date: every change
    committed before `at` is in them, and `behind` calls judged or reviewed since are not."""

    at: datetime
    behind: int


def rollups_changed(rubric: Rubric) -> int:
    """How many of the rubric's calls changed since their rollup rows were written, counted up to one past the
    most a read refreshes (the partial index on the marked calls holds only these)."""
    return Recording.objects.filter(rubric=rubric, rollup_stale=True)[: REFRESH_IN_READ_MAX + 1].count()


def beat_clock() -> RollupClock | None:
    """Beat's last whole refresh while beat keeps refreshing; None without a beat, or with one stopped or far
    behind."""
    clock = RollupClock.objects.filter(pk=RollupClock.ONE).first()
    return clock if clock is not None and clock.keeping_up(now=timezone.now()) else None


def rollups_as_of(*, rubric: Rubric) -> AsOf | None:
    """How fresh the rubric's figures are on a page that read them through `rollups_readable`: None when they
    hold every change (none waiting, refreshed by the read itself, or read from the calls)."""
    changed = rollups_changed(rubric)
    if not changed or changed > REFRESH_IN_READ_MAX:
        return None
    clock = beat_clock()
    return AsOf(at=clock.started_at, behind=changed) if clock is not None else None
