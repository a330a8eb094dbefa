"""Writing to the outbox. Callers emit in their own transaction; consumers are told after it commits.

A consumer (webhooks) registers itself when its app is ready: this app sits below every other, so it
cannot import the one that delivers, and it must not write events nobody listens to (one judgment
would otherwise leave a row behind for nothing). `wanted` is asked first, so with no subscriber an
emit costs one read and writes nothing.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from outbox.models import EVENT_NAMES, Event

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Consumer:
    # Of these event names, those the consumer wants recorded now (e.g. some active subscription lists them).
    wanted: Callable[[Sequence[str]], set[str]]
    # Called after the commit with the new events' ids; it must not raise for a broker that is down
    # (events it could not take stay undispatched, for its sweep).
    dispatch: Callable[[list[uuid.UUID]], None]


_consumers: dict[str, Consumer] = {}


def consumer_register(
    *, name: str, wanted: Callable[[Sequence[str]], set[str]], dispatch: Callable[[list[uuid.UUID]], None]
) -> None:
    """Register (or replace) the consumer called `name`."""
    _consumers[name] = Consumer(wanted=wanted, dispatch=dispatch)


def events_emit(
    *,
    names: Sequence[str],
    subject_type: str,
    subject_id: int,
    recording_id: int | None = None,
    workspace_id: int | None = None,
) -> list[Event]:
    """Record the events `names` about one subject in the caller's transaction, those some consumer
    wants; once the transaction commits, hand them to the consumers. A rollback sends nothing.
    `workspace_id`: the subject's workspace, whose subscriptions alone receive them (None: the
    default workspace)."""
    unknown = set(names) - set(EVENT_NAMES)
    if unknown:
        raise ValueError(f"Unknown event names: {sorted(unknown)}; known: {', '.join(EVENT_NAMES)}.")
    wanted: set[str] = set()
    for consumer in _consumers.values():
        wanted |= consumer.wanted(names)
    if not wanted:
        return []
    events = [
        Event(id=uuid.uuid4(), name=name, subject_type=subject_type, subject_id=subject_id, recording_id=recording_id,
              workspace_id=workspace_id, created_at=timezone.now())
        for name in names
        if name in wanted
    ]  # fmt: skip
    _insert(events)
    ids = [event.pk for event in events]
    transaction.on_commit(lambda: _dispatch(ids))
    return events


# The columns an emit writes, in the order of `_insert_sql`'s placeholders.
_COLUMNS = ("id", "name", "subject_type", "subject_id", "recording_id", "workspace", "created_at")


@functools.cache
def _insert_sql(rows: int) -> str:
    fields = [Event._meta.get_field(name) for name in _COLUMNS]
    row = f"({', '.join(['%s'] * len(fields))})"
    return (
        f"INSERT INTO {connection.ops.quote_name(Event._meta.db_table)} "
        f"({', '.join(connection.ops.quote_name(field.column) for field in fields)}) VALUES {', '.join([row] * rows)}"
    )


def _insert(events: list[Event]) -> None:
    """One INSERT written out, its statement made once per number of rows: this runs in every
    subscribed judgment, and bulk_create's own work for one row costs about as much CPU as the
    statement (bench/pipeline/README.md, webhooks)."""
    fields = [Event._meta.get_field(name) for name in _COLUMNS]
    with connection.cursor() as cursor:
        cursor.execute(
            _insert_sql(len(events)),
            [field.get_db_prep_save(getattr(event, field.attname), connection) for event in events for field in fields],
        )


def _dispatch(ids: list[uuid.UUID]) -> None:
    for name, consumer in _consumers.items():
        try:
            consumer.dispatch(ids)
        except Exception:  # the commit is done; an unreachable broker must not fail the caller
            logger.exception("The %s consumer could not take events %s; its sweep will.", name, ids)


# --- What each app calls, one function per moment ------------------------------------------------
# Each takes the subject's `workspace_id`, so that only that workspace's subscriptions receive it.


def recording_judged_emit(*, recording_id: int, routed: bool, workspace_id: int | None = None) -> list[Event]:
    """A judgment was stored; `routed`: it sent the recording to review (also `recording.routed`)."""
    names = ["recording.judged", "recording.routed"] if routed else ["recording.judged"]
    return events_emit(
        names=names, subject_type=Event.Subject.RECORDING, subject_id=recording_id, recording_id=recording_id,
        workspace_id=workspace_id,
    )  # fmt: skip


def recording_failed_emit(*, recording_id: int, workspace_id: int | None = None) -> list[Event]:
    return events_emit(
        names=["recording.failed"], subject_type=Event.Subject.RECORDING, subject_id=recording_id,
        recording_id=recording_id, workspace_id=workspace_id,
    )  # fmt: skip


def review_created_emit(*, review_id: int, recording_id: int, workspace_id: int | None = None) -> list[Event]:
    return events_emit(
        names=["review.created"], subject_type=Event.Subject.REVIEW, subject_id=review_id, recording_id=recording_id,
        workspace_id=workspace_id,
    )  # fmt: skip


def dispute_opened_emit(*, dispute_id: int, recording_id: int, workspace_id: int | None = None) -> list[Event]:
    """A dispute was opened about a recording's judgment or review. For the disputes feature to call,
    in the transaction that writes the dispute, after the row exists: a rollback then sends nothing.
    `dispute_id` is the dispute's primary key, `recording_id` the recording disputed, `workspace_id`
    the recording's workspace (only its subscriptions receive the event).

    What subscribers of `dispute.opened` receive (webhooks.payloads.event_data builds `data`):
    {"id": <delivery id>, "event": "dispute.opened", "created": <ISO time>, "recording": recording_id,
    "data": <the dispute as GET /api/disputes/{dispute_id}/ gives it>}. The events written (none
    without a subscriber) are returned."""
    return events_emit(
        names=["dispute.opened"], subject_type=Event.Subject.DISPUTE, subject_id=dispute_id, recording_id=recording_id,
        workspace_id=workspace_id,
    )  # fmt: skip


def dispute_resolved_emit(*, dispute_id: int, recording_id: int, workspace_id: int | None = None) -> list[Event]:
    """A dispute was resolved (upheld or rejected). As dispute_opened_emit: called in the transaction
    that records the resolution, with the same ids; subscribers of `dispute.resolved` receive the same
    envelope with "event": "dispute.resolved"."""
    return events_emit(
        names=["dispute.resolved"], subject_type=Event.Subject.DISPUTE, subject_id=dispute_id, recording_id=recording_id,
        workspace_id=workspace_id,
    )  # fmt: skip


def experiment_finished_emit(*, experiment_id: int, workspace_id: int | None = None) -> list[Event]:
    return events_emit(
        names=["experiment.finished"], subject_type=Event.Subject.EXPERIMENT, subject_id=experiment_id,
        workspace_id=workspace_id,
    )


def coaching_created_emit(*, session_id: int, workspace_id: int | None = None) -> list[Event]:
    """A coaching session was opened for an agent (coaching.services.coaching_session_create, in its
    transaction). Subscribers of `coaching.created` receive the session as GET /api/coaching/{id}/ gives it."""
    return events_emit(
        names=["coaching.created"], subject_type=Event.Subject.COACHING, subject_id=session_id,
        workspace_id=workspace_id,
    )  # fmt: skip


def coaching_acknowledged_emit(*, session_id: int, workspace_id: int | None = None) -> list[Event]:
    """The agent acknowledged a coaching session (coaching.services.coaching_acknowledge, in its transaction)."""
    return events_emit(
        names=["coaching.acknowledged"], subject_type=Event.Subject.COACHING, subject_id=session_id,
        workspace_id=workspace_id,
    )  # fmt: skip
