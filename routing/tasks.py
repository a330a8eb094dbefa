"""Celery tasks of routing: a leaf, taking no ids (the certification reads what the audit has)."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="routing.certify", ignore_result=True)
def routing_certify() -> int:
    from routing.services import thresholds_certify

    return thresholds_certify()
