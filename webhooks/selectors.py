from __future__ import annotations

from collections.abc import Sequence

from django.db.models import QuerySet

from qa.models import ApiKey
from webhooks.models import Delivery, Subscription


def events_wanted(names: Sequence[str]) -> set[str]:
    """Of `names`, those some active subscription lists: one small query, asked by every emit
    (a subscription's events are a JSON list, which SQLite cannot search, so they are read)."""
    listed: set[str] = set()
    for events in Subscription.objects.filter(status=Subscription.Status.ACTIVE).values_list("events", flat=True):
        listed.update(events)
    return listed.intersection(names)


def subscriptions_visible(*, api_key: ApiKey | None) -> QuerySet[Subscription]:
    """A key sees the subscriptions it created; a person allowed to view subscriptions sees them all."""
    subscriptions = Subscription.objects.select_related("api_key", "owner")
    return subscriptions.filter(api_key=api_key) if api_key is not None else subscriptions


def deliveries_of(*, subscription: Subscription) -> QuerySet[Delivery]:
    return subscription.deliveries.select_related("event").prefetch_related("attempt_log")
