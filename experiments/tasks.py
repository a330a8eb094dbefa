"""Celery tasks of experiments: the same delivery rules as the judge's (see qa.tasks), and
leaves like them: the services publish them by name and they import the services inside their bodies."""

from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings

from core.jobs import task_outcome


@shared_task(
    name="experiments.item_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.QA_JUDGE_SOFT_TIME_LIMIT,
    time_limit=settings.QA_JUDGE_TIME_LIMIT,
    ignore_result=True,
)
def item_run(self: Task, item_id: int) -> str:
    from experiments.services import item_execute, items_publish

    return task_outcome(
        self,
        item_execute(item_id=item_id),
        reschedule=lambda delay: items_publish(item_ids=[item_id], countdown=delay),
        what=f"Experiment item {item_id}",
    )


@shared_task(name="experiments.sweep", ignore_result=True)
def experiments_sweep() -> int:
    from experiments.services import items_sweep

    return items_sweep()
