"""Celery tasks of webhooks. They take ids and are leaves. Fan-out is idempotent (an event is fanned out
once, under a row lock) and an attempt is claimed before it is sent, so acks_late is safe for both: a
redelivered message finds nothing to do. A drain has no arguments: it takes whatever is waiting. What lost
its message is published again by the job executor's one sweep (core.jobs_sweep), of which deliveries are a kind."""

from __future__ import annotations

from celery import Task, shared_task

from webhooks.services import delivery_attempt, deliveries_publish, events_drain


@shared_task(name="webhooks.events_drain", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def drain() -> int:
    return events_drain()


@shared_task(name="webhooks.deliver", bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(self: Task, delivery_id: str) -> str:
    result = delivery_attempt(delivery_id=delivery_id)
    # In-process (no broker) nothing can be sent later: the retry waits for a worker's sweep.
    if result.outcome == "retry" and not self.request.is_eager:
        deliveries_publish(delivery_ids=[delivery_id], countdown=result.delay)
    return result.outcome

