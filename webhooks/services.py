"""Writes for webhooks: subscriptions, the fan-out of an event to its deliveries, and each attempt.

An event (outbox.Event, written in the transaction of the change it reports) is fanned out after the
commit, by Celery beat's drain every QA_WEBHOOK_DRAIN_EVERY (a second; events_dispatch), into one
Delivery per active subscription of its workspace that lists it; each delivery is one Celery message per
attempt. A delivery is a kind of the job executor (core.jobs, `Deliveries`): an attempt is claimed first
(a conditional UPDATE, pending -> running, with a lease), so a duplicated message or the executor's sweep
never sends one attempt twice at once, and a worker that died mid-attempt loses it. 2xx is delivered; anything else, a
timeout included, is retried with exponential backoff until QA_WEBHOOK_RETRY_WINDOW (a day) after
the first send, then failed. A subscription whose every attempt has failed for QA_WEBHOOK_PAUSE_AFTER
(a day) is paused and its owner told.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import logging
import math
import secrets
import sys
import time
import unicodedata
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

from access.models import DEFAULT_WORKSPACE, Workspace, default_workspace_id
from outbox.models import EVENT_NAMES, Event
from core.errors import InvalidInputError
from core.hosts import HostNotAllowed, Target, target_connection, url_target
from core.jobs import JobKind, Outcome, job_claim, job_fail, job_held, job_succeed, retry_delay
from access.models import ApiKey
from core.queue import task_publish, tasks_in_process
from qa.models import Recording
from webhooks.models import Attempt, Delivery, Subscription
from webhooks.payloads import event_data
from webhooks.selectors import events_wanted_forget

logger = logging.getLogger(__name__)

SECRET_MIN_LENGTH = 24
# What of a receiver's answer the delivery log keeps: enough to tell its error page from its "ok", not
# a service's reply to read back (a webhook aimed at an internal service would otherwise be a way to
# query it and read the answer in GET /api/webhooks/{id}/deliveries/).
RESPONSE_KEPT = 120  # characters, after `response_excerpt`
RESPONSE_READ = 4 * 1024  # bytes read of it at most
USER_AGENT = "Veredicto-Webhooks/1"


# --- Signing ------------------------------------------------------------------------------------


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """`X-Veredicto-Signature`: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the secret>."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def delivery_headers(*, delivery: Delivery, timestamp: int) -> dict[str, str]:
    body = delivery.body.encode()
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Veredicto-Event": delivery.event.name,
        "X-Veredicto-Delivery": str(delivery.pk),
        "X-Veredicto-Timestamp": str(timestamp),
        "X-Veredicto-Signature": signature(secret=delivery.subscription.secret, timestamp=timestamp, body=body),
    }


def delivery_body(*, delivery_id: uuid.UUID, event: Event, data: dict[str, Any] | None) -> str:
    """The envelope: the delivery's id (the receiver's idempotency key), the event, when it happened,
    the recording it concerns (if any) and the object's API JSON, rendered as the API renders it."""
    envelope = {
        "id": str(delivery_id),
        "event": event.name,
        "created": JSONEncoder().default(event.created_at),
        "recording": event.recording_id,
        "data": data,
    }
    return JSONRenderer().render(envelope).decode()


# --- Subscriptions ------------------------------------------------------------------------------


def webhook_target(url: str) -> Target:
    """Where a webhook to `url` connects, if QA_WEBHOOK_ALLOWED_HOSTS allows it (core.hosts: checked when
    a subscription is saved and again before every attempt); HostNotAllowed naming the problem otherwise."""
    return url_target(url, allowed=settings.QA_WEBHOOK_ALLOWED_HOSTS, setting="QA_WEBHOOK_ALLOWED_HOSTS")


def _subscription_errors(*, url: str | None, events: Sequence[str] | None, secret: str | None) -> dict[str, Any]:
    errors: dict[str, Any] = {}
    if url is not None:
        try:
            webhook_target(url)
        except HostNotAllowed as error:
            errors["url"] = str(error)
    if events is not None:
        unknown = [name for name in events if name not in EVENT_NAMES]
        if not isinstance(events, (list, tuple)) or not events:
            errors["events"] = _("Name at least one event: %(names)s.") % {"names": ", ".join(EVENT_NAMES)}
        elif unknown:
            errors["events"] = _("Unknown event %(unknown)s; use: %(names)s.") % {
                "unknown": ", ".join(f"'{name}'" for name in unknown),
                "names": ", ".join(EVENT_NAMES),
            }
    if secret is not None and len(secret) < SECRET_MIN_LENGTH:
        errors["secret"] = _("A secret must have at least %(count)s characters.") % {"count": SECRET_MIN_LENGTH}
    return errors


@transaction.atomic
def subscription_create(
    *,
    url: str,
    events: Sequence[str],
    secret: str | None = None,
    description: str = "",
    owner: AbstractBaseUser | None = None,
    api_key: ApiKey | None = None,
    contact_email: str = "",
    workspace: Workspace | None = None,
) -> tuple[Subscription, str]:
    """A new active subscription of `workspace` (default: the default workspace), which receives that
    workspace's events alone, and its secret (generated unless given), which is shown this once.
    Raises InvalidInputError, naming each bad field, before anything is written."""
    errors = _subscription_errors(url=url, events=events, secret=secret)
    if errors:
        raise InvalidInputError(errors)
    secret = secret or f"whsec_{secrets.token_urlsafe(32)}"
    subscription = Subscription.objects.create(
        workspace_id=workspace.pk if workspace else default_workspace_id(),
        url=url,
        events=list(dict.fromkeys(events)),
        secret=secret,
        description=description,
        owner=owner,
        api_key=api_key,
        contact_email=contact_email,
    )
    _subscriptions_changed()
    return subscription, secret


@transaction.atomic
def subscription_update(
    *,
    subscription: Subscription,
    url: str | None = None,
    events: Sequence[str] | None = None,
    status: str | None = None,
    description: str | None = None,
    contact_email: str | None = None,
) -> Subscription:
    """Change what is given. Resuming a paused subscription clears its failure record and sends its
    pending deliveries again, each with a new day of retries."""
    errors = _subscription_errors(url=url, events=events, secret=None)
    if status is not None and status not in Subscription.Status.values:
        errors["status"] = _("Unknown status '%(status)s'; use one of: %(choices)s.") % {
            "status": status,
            "choices": ", ".join(Subscription.Status.values),
        }
    if errors:
        raise InvalidInputError(errors)
    subscription = Subscription.objects.select_for_update().get(pk=subscription.pk)
    if url is not None:
        subscription.url = url
    if events is not None:
        subscription.events = list(dict.fromkeys(events))
    if description is not None:
        subscription.description = description
    if contact_email is not None:
        subscription.contact_email = contact_email
    resumed = status == Subscription.Status.ACTIVE and subscription.status == Subscription.Status.PAUSED
    if status is not None:
        subscription.status = status
    if status == Subscription.Status.PAUSED and not subscription.paused_at:
        subscription.paused_at, subscription.paused_reason = timezone.now(), _("Paused by hand.")
    if resumed:
        subscription.failing_since = subscription.paused_at = None
        subscription.paused_reason = ""
        now = timezone.now()
        pending = subscription.deliveries.filter(status=Delivery.Status.PENDING)
        ids = list(pending.values_list("pk", flat=True))
        pending.update(next_attempt_at=now, retrying_since=now)
        transaction.on_commit(lambda: deliveries_publish(delivery_ids=ids))
    subscription.save()
    _subscriptions_changed()
    return subscription


@transaction.atomic
def subscription_delete(*, subscription: Subscription) -> None:
    """Delete a subscription with its delivery log."""
    subscription.delete()
    _subscriptions_changed()


def _subscriptions_changed() -> None:
    """This process reads the subscribed events again: now (its own transaction sees the change) and
    after the commit (so that no other thread keeps what it read before)."""
    events_wanted_forget()
    transaction.on_commit(events_wanted_forget)


def _subscription_pause(*, subscription: Subscription, now: datetime) -> bool:
    """Pause a subscription that has failed every attempt since `failing_since`; tell its owner once."""
    reason = _(
        "Every delivery attempt failed since %(since)s; paused at %(now)s. Fix the receiver, then set it "
        "active again: its pending deliveries are sent again."
    ) % {"since": subscription.failing_since.isoformat(timespec="seconds"), "now": now.isoformat(timespec="seconds")}
    paused = Subscription.objects.filter(pk=subscription.pk, status=Subscription.Status.ACTIVE).update(
        status=Subscription.Status.PAUSED, paused_at=now, paused_reason=reason, updated_at=now
    )
    if not paused:
        return False
    _subscriptions_changed()
    logger.warning("Webhook subscription %s (%s) paused: %s", subscription.pk, subscription.url, reason)
    recipient = subscription.contact_email or (subscription.owner.email if subscription.owner else "")
    if recipient and not settings.QA_MAIL:
        logger.info("No mail server (EMAIL_URL) to tell %s: the admin lists the pause.", recipient)
    elif recipient:
        try:
            send_mail(
                _("Veredicto: webhook %(url)s paused") % {"url": subscription.url},
                reason,
                None,  # DEFAULT_FROM_EMAIL
                [recipient],
            )
        except Exception:  # the mail server is down: the admin shows the pause and its reason
            logger.exception("Could not e-mail %s about the paused webhook %s.", recipient, subscription.pk)
    return True


# --- Fan-out --------------------------------------------------------------------------------------


def events_dispatch(ids: list[uuid.UUID]) -> None:
    """The outbox's consumer hook, after a commit that wrote events (`ids`, which the drain finds by
    itself). With a broker it does nothing: Celery beat's drain (webhooks-drain, every
    QA_WEBHOOK_DRAIN_EVERY) takes every event committed since the last one, because publishing a
    message from the judging cost it more CPU than writing its events (bench/pipeline/README.md,
    webhooks). In-process (no broker, no beat) the drain runs now, within the publish."""
    if tasks_in_process():
        task_publish("webhooks.events_drain")


def events_drain(*, created_before: datetime | None = None, batch: int = 200) -> int:
    """Fan out every event not fanned out yet (created before `created_before`, if given), oldest
    first, each in its own transaction; how many this call fanned out. An event another drain holds
    is left to it; one whose fan-out fails is logged and left to the next drain, not in the others' way."""
    taken = 0
    after: tuple[datetime, uuid.UUID] | None = None
    while True:
        pending = Event.objects.filter(dispatched_at__isnull=True)
        if created_before is not None:
            pending = pending.filter(created_at__lt=created_before)
        if after is not None:  # past the last batch, so that events left behind do not come round again
            pending = pending.filter(Q(created_at__gt=after[0]) | Q(created_at=after[0], pk__gt=after[1]))
        rows = list(pending.order_by("created_at", "pk").values_list("created_at", "pk")[:batch])
        for _created, event_id in rows:
            try:
                taken += event_fan_out(event_id=event_id) is not None
            except Exception:
                logger.exception("Could not fan out event %s; the next drain will try again.", event_id)
        if len(rows) < batch:
            return taken
        after = rows[-1]


def event_fan_out(*, event_id: uuid.UUID | str) -> list[uuid.UUID] | None:
    """One delivery per active subscription listing the event, its body built now; the new deliveries'
    ids, published after the commit. None for an event already fanned out or being fanned out
    elsewhere (two drains at once)."""
    with transaction.atomic():
        event = (
            Event.objects.select_for_update(skip_locked=True).filter(pk=event_id, dispatched_at__isnull=True).first()
        )
        if event is None:
            return None
        now = timezone.now()
        # Its workspace's subscriptions alone (an event that names none is the default workspace's).
        in_workspace = Q(workspace_id=event.workspace_id) if event.workspace_id else Q(workspace__slug=DEFAULT_WORKSPACE)
        candidates = [
            subscription
            for subscription in Subscription.objects.filter(in_workspace, status=Subscription.Status.ACTIVE)
            .select_related("api_key")
            if event.name in subscription.events
        ]
        # Within the workspace, a key's subscription gets only the calls its key reads (its source).
        recording = (
            Recording.objects.filter(pk=event.recording_id).only("workspace_id", "team", "agent_id", "source").first()
            if candidates and event.recording_id is not None
            else None
        )
        if candidates and event.recording_id is not None and recording is None:
            candidates = [subscription for subscription in candidates if subscription.api_key is None]
        subscriptions = [subscription for subscription in candidates if subscription.receives_recording(recording)]
        deliveries = []
        data = event_data(event=event) if subscriptions else None
        if subscriptions and data is None:
            logger.warning("The %s of event %s no longer exists: nothing is sent.", event.subject_type, event.pk)
        elif subscriptions:
            for subscription in subscriptions:
                delivery_id = uuid.uuid4()
                deliveries.append(
                    Delivery(
                        id=delivery_id,
                        event=event,
                        subscription=subscription,
                        body=delivery_body(delivery_id=delivery_id, event=event, data=data),
                        next_attempt_at=now,
                        retrying_since=now,
                    )
                )
            Delivery.objects.bulk_create(deliveries)
        Event.objects.filter(pk=event.pk).update(dispatched_at=now)
        ids = [delivery.pk for delivery in deliveries]
        transaction.on_commit(lambda: deliveries_publish(delivery_ids=ids))
    return ids


def deliveries_publish(*, delivery_ids: Sequence[uuid.UUID | str], countdown: float = 0.0) -> int:
    """One message per delivery; a broker that is down leaves them for the sweep."""
    published = 0
    for delivery_id in delivery_ids:
        try:
            task_publish("webhooks.deliver", str(delivery_id), countdown=countdown)
            published += 1
        except Exception:
            logger.exception("Could not publish delivery %s; the sweep will.", delivery_id)
            break
    return published


# --- Attempts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttemptResult:
    outcome: str  # "delivered", "retry", "failed" or "skipped"
    delay: float = 0.0  # for "retry": when to try again (s)


_INVISIBLE = {"Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"}


def response_excerpt(answer: str) -> str:
    """The start of a receiver's answer as the log keeps it: control and invisible characters out (they
    could forge what an admin reads), runs of white space as one space, RESPONSE_KEPT characters at most,
    an ellipsis where it was cut."""
    visible = "".join(" " if unicodedata.category(char) in _INVISIBLE or char.isspace() else char for char in answer)
    text = " ".join(visible.split())
    return text if len(text) <= RESPONSE_KEPT else text[: RESPONSE_KEPT - 1] + "…"


def _post(target: Target, headers: dict[str, str], body: bytes) -> tuple[int, str]:
    """POST without following redirects (a redirect could lead inside the network): (code, answer)."""
    connection = target_connection(target, timeout=settings.QA_WEBHOOK_TIMEOUT)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read(RESPONSE_READ).decode("utf-8", errors="replace")
        return response.status, response_excerpt(answer)
    finally:
        connection.close()


class Deliveries(JobKind):
    """Webhook deliveries as a kind of the job executor (core.jobs): an attempt is a claim with a lease, so
    a worker that dies mid-attempt has its delivery taken back by the executor's sweep and sent again, and
    its own late outcome is refused. Their retries are their own: doubled from QA_WEBHOOK_RETRY_BASE
    without jitter or cap, until QA_WEBHOOK_RETRY_WINDOW after the first send (`_attempt_record`)."""

    model = Delivery
    noun = "delivery"
    succeeded_status = Delivery.Status.DELIVERED
    task = "webhooks.deliver"

    @property
    def max_attempts(self) -> int:
        return sys.maxsize  # the retry window ends the retries, not a count

    @property
    def lease_seconds(self) -> float:
        # An attempt is one POST bounded by QA_WEBHOOK_TIMEOUT; the margin is for the connection and the write.
        return settings.QA_WEBHOOK_TIMEOUT + 60

    @property
    def time_limit(self) -> float:
        return self.lease_seconds

    def sweep_scope(self) -> Q:
        return Q(subscription__status=Subscription.Status.ACTIVE)  # a paused one's wait for the resume

    def lost(self, *, now: datetime, settled: datetime) -> Q:
        # Every pending delivery says when it is due; one overdue by a minute lost its message
        # (a broker down at the commit, a retry's message lost with its worker).
        return Q(next_attempt_at__lt=now - timedelta(seconds=60)) | Q(
            next_attempt_at__isnull=True, created_at__lt=now - timedelta(seconds=60)
        )


DELIVERIES = Deliveries()


@dataclass(frozen=True)
class _Claimed:
    """A delivery as its attempt's executor holds it (core.jobs.Held)."""

    row: Delivery


def delivery_attempt(*, delivery_id: uuid.UUID | str) -> AttemptResult:
    """Send a pending delivery that is due, once. Safe to call any number of times."""
    now = timezone.now()
    delivery = (
        Delivery.objects.select_related("event", "subscription__owner")
        .filter(pk=delivery_id, status=Delivery.Status.PENDING)
        .first()
    )
    if delivery is None or delivery.subscription.status != Subscription.Status.ACTIVE:
        return AttemptResult("skipped")  # done, under way, or its subscription is paused (resuming sends it)
    if delivery.next_attempt_at and delivery.next_attempt_at > now + timedelta(seconds=1):
        return AttemptResult("skipped")  # not due: a duplicate message, or one in flight elsewhere
    job = _Claimed(delivery)
    if not job_claim(DELIVERIES, job):  # pending -> running, one attempt more, leased
        return AttemptResult("skipped")
    started = delivery.started_at
    clock = time.monotonic()
    code, answer, error, permanent = None, "", "", False
    try:
        target = webhook_target(delivery.subscription.url)
        timestamp = int(time.time())
        code, answer = _post(target, delivery_headers(delivery=delivery, timestamp=timestamp), delivery.body.encode())
        if not 200 <= code < 300:
            error = _("The receiver answered %(code)s.") % {"code": code}
    except HostNotAllowed as refused:
        # Refused again on every retry until the setting changes: failed now; Redeliver once it allows the host.
        error, permanent = str(refused), True
    except TimeoutError:
        error = _("No answer within %(seconds)s s.") % {"seconds": settings.QA_WEBHOOK_TIMEOUT}
    except (OSError, http.client.HTTPException) as failure:
        error = _("Could not reach the receiver: %(error)s") % {"error": failure or type(failure).__name__}
    duration_ms = (time.monotonic() - clock) * 1000
    return _attempt_record(
        job=job, started=started, duration_ms=duration_ms, code=code, answer=answer, error=error, permanent=permanent,
    )  # fmt: skip


@transaction.atomic
def _attempt_record(
    *,
    job: _Claimed,
    started: datetime,
    duration_ms: float,
    code: int | None,
    answer: str,
    error: str,
    permanent: bool,
) -> AttemptResult:
    """The attempt's outcome, written only while its claim stands (core.jobs.job_held): once the sweep has
    taken the delivery back (the lease ran out), this attempt records nothing and the next one counts."""
    now = timezone.now()
    delivery = job.row
    subscription = delivery.subscription
    if not error:
        outcome, delay = Attempt.Outcome.DELIVERED, 0.0
        if not job_succeed(DELIVERIES, job, now=now, next_attempt_at=None):
            return AttemptResult("skipped")
        Subscription.objects.filter(pk=subscription.pk, failing_since__isnull=False).update(failing_since=None)
    else:
        # No jitter and no cap: QA_WEBHOOK_RETRY_WINDOW ends the retries.
        delay = retry_delay(attempt=delivery.attempts, base=settings.QA_WEBHOOK_RETRY_BASE, longest=math.inf, jitter=False)
        window_end = (delivery.retrying_since or delivery.created_at) + timedelta(seconds=settings.QA_WEBHOOK_RETRY_WINDOW)
        if permanent or now + timedelta(seconds=delay) > window_end:
            outcome = Attempt.Outcome.FAILED
            if job_fail(DELIVERIES, job, error, next_attempt_at=None).outcome is not Outcome.FAILED:
                return AttemptResult("skipped")
        else:
            outcome = Attempt.Outcome.RETRY
            if not job_held(DELIVERIES, job).update(
                status=Delivery.Status.PENDING, next_attempt_at=now + timedelta(seconds=delay), error=error
            ):
                return AttemptResult("skipped")
        Subscription.objects.filter(pk=subscription.pk, failing_since__isnull=True).update(failing_since=started)
        subscription.refresh_from_db(fields=["failing_since", "status"])
        if subscription.failing_since and now - subscription.failing_since >= timedelta(
            seconds=settings.QA_WEBHOOK_PAUSE_AFTER
        ):
            _subscription_pause(subscription=subscription, now=now)
    Attempt.objects.create(
        delivery=delivery, number=delivery.attempts, started_at=started, duration_ms=duration_ms,
        response_code=code, response_body=answer, error=error, outcome=outcome,
    )  # fmt: skip
    if outcome == Attempt.Outcome.RETRY:
        return AttemptResult("retry", delay)
    return AttemptResult(str(outcome))


@transaction.atomic
def delivery_redeliver(*, delivery: Delivery) -> None:
    """Send a delivery again, whatever became of it: the same id and body (the receiver's idempotency
    key), newly signed, with a new day of retries."""
    now = timezone.now()
    Delivery.objects.filter(pk=delivery.pk).update(
        status=Delivery.Status.PENDING, next_attempt_at=now, retrying_since=now, finished_at=None
    )
    transaction.on_commit(lambda: deliveries_publish(delivery_ids=[delivery.pk]))
