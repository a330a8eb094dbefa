"""Celery tasks of experiments: the same delivery rules as the judge's (see qa.tasks)."""

from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings

from qa.execution import task_outcome
from reviews.experiments.services import item_execute, items_publish, items_sweep


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
    return task_outcome(
        self,
        item_execute(item_id=item_id),
        reschedule=lambda delay: items_publish(item_ids=[item_id], countdown=delay),
        what=f"Experiment item {item_id}",
    )


@shared_task(name="experiments.sweep", ignore_result=True)
def experiments_sweep() -> int:
    return items_sweep()
