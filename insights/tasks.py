"""Celery tasks of insights: a leaf, taking no ids (the refresh reads what changed)."""

from __future__ import annotations

from celery import shared_task

from insights.scorecards.services import scorecard_weeks_refresh_all


@shared_task(name="scorecards.refresh", ignore_result=True)
def scorecards_refresh() -> int:
    return scorecard_weeks_refresh_all()
