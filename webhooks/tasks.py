"""Celery tasks of webhooks. They take ids and are leaves. Fan-out is idempotent (an event is fanned out
once, under a row lock) and an attempt is claimed before it is sent, so acks_late is safe for both: a
redelivered message finds nothing to do."""

from __future__ import annotations

from celery import Task, shared_task

from webhooks.services import delivery_attempt, deliveries_publish, event_fan_out, webhooks_sweep


@shared_task(name="webhooks.events_fan_out", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def events_fan_out(event_ids: list[str]) -> int:
    return sum(len(event_fan_out(event_id=event_id)) for event_id in event_ids)


@shared_task(name="webhooks.deliver", bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(self: Task, delivery_id: str) -> str:
    result = delivery_attempt(delivery_id=delivery_id)
    # In-process (no broker) nothing can be sent later: the retry waits for a worker's sweep.
    if result.outcome == "retry" and not self.request.is_eager:
        deliveries_publish(delivery_ids=[delivery_id], countdown=result.delay)
    return result.outcome


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep() -> tuple[int, int]:
    return webhooks_sweep()
