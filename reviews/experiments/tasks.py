"""Celery tasks of experiments: the same delivery rules as the judge's (see qa.tasks)."""

from __future__ import annotations

import logging

from celery import Task, shared_task
from django.conf import settings

from qa.judging import Outcome
from reviews.experiments.services import item_execute, items_publish, items_sweep

logger = logging.getLogger(__name__)


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
    result = item_execute(item_id=item_id)
    if result.outcome is Outcome.RETRY:
        if self.request.is_eager:
            logger.warning("Experiment item %s hit a transient failure and stays pending.", item_id)
        else:
            items_publish(item_ids=[item_id], countdown=result.delay)
    return result.outcome.value


@shared_task(name="experiments.sweep", ignore_result=True)
def experiments_sweep() -> int:
    return items_sweep()
