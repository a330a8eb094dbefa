from __future__ import annotations

import time
from collections.abc import Sequence

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from access.models import DEFAULT_WORKSPACE, Workspace
from access.scope import scope_for
from access.models import ApiKey
from webhooks.models import Delivery, Subscription


# The events some active subscription lists, as this process last read them, and when (monotonic s).
_listed: tuple[float, frozenset[str]] | None = None


def events_wanted(names: Sequence[str]) -> set[str]:
    """Of `names`, those some active subscription lists. Asked by every emit, so by every judgment:
    the answer is kept QA_WEBHOOK_SUBSCRIPTIONS_TTL seconds (one second) rather than read each time,
    which cost the judging a query (bench/pipeline/README.md, webhooks). A subscription saved in
    another process is seen within that second; in this one at once (`events_wanted_forget`)."""
    global _listed
    now = time.monotonic()
    if _listed is None or now - _listed[0] >= settings.QA_WEBHOOK_SUBSCRIPTIONS_TTL:
        listed: set[str] = set()
        # A subscription's events are a JSON list, which SQLite cannot search: they are read.
        for events in Subscription.objects.filter(status=Subscription.Status.ACTIVE).values_list("events", flat=True):
            listed.update(events)
        _listed = (now, frozenset(listed))
    return set(_listed[1].intersection(names))


def events_wanted_forget() -> None:
    """After a change to the subscriptions: this process reads them again at its next emit."""
    global _listed
    _listed = None


def subscriptions_visible(*, api_key: ApiKey | None, user: AbstractBaseUser | None = None) -> QuerySet[Subscription]:
    """A key sees the subscriptions it created; a person allowed to view subscriptions sees those of
    the workspaces in their scope (a superuser all)."""
    subscriptions = Subscription.objects.select_related("api_key", "owner", "workspace")
    if api_key is not None:
        return subscriptions.filter(api_key=api_key)
    return subscriptions.visible_to(scope_for(user))


def deliveries_visible(*, user: AbstractBaseUser) -> QuerySet[Delivery]:
    """The deliveries of the subscriptions a person sees (the admin's delivery log)."""
    return Delivery.objects.visible_to(scope_for(user))


def workspace_to_subscribe(*, user: AbstractBaseUser, slug: str | None) -> Workspace | None:
    """Where a person's new subscription goes: the workspace named (one of theirs), else their only
    workspace, else the default one; None when that is not in their scope."""
    scope = scope_for(user)
    workspaces = Workspace.objects.filter(scope.workspaces_q("pk"))
    if slug:
        return workspaces.filter(slug=slug).first()
    if not scope.everything and len(scope.workspace_ids) == 1:
        return workspaces.first()
    return workspaces.filter(slug=DEFAULT_WORKSPACE).first()


def workspaces_to_subscribe(*, user: AbstractBaseUser) -> QuerySet[Workspace]:
    """The workspaces a person may subscribe in (the admin's choices)."""
    return Workspace.objects.filter(scope_for(user).workspaces_q("pk"))


def deliveries_of(*, subscription: Subscription) -> QuerySet[Delivery]:
    return subscription.deliveries.select_related("event").prefetch_related("attempt_log")
