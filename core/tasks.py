"""Celery tasks of the platform. A leaf: the executor's sweep is in core.jobs."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="core.jobs_sweep", ignore_result=True)
def jobs_sweep() -> dict[str, int]:
    from core.jobs import jobs_sweep as sweep

    return sweep()


@shared_task(name="core.storage_maintain", ignore_result=True)
def storage_maintain() -> None:
    from core.partitions import storage_maintain as maintain

    maintain()
