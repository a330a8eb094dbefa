"""Events delivered in-process to the suite's real HTTP receiver on loopback: signed as the webhooks page
says (checked with the page's own snippet), the API's JSON, retried, given up, paused, redelivered
with the same id, and never sent for a transaction that rolled back."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.core import mail
from django.db import transaction
from django.utils import timezone

from core.jobs import jobs_sweep
from outbox.models import Event
from outbox.services import events_emit
from qa.judging import recording_enqueue_judging
from qa.models import Recording
from reviews.services import review_create
from tests.api.conftest import key_client, new_key
from tests.factories import RecordingFactory, judged_recording
from tests.judge.conftest import judge_rubric
from tests.support.fake_openai import error
from tests.support.webhook_receiver import Answer
from tests.webhooks.conftest import readme_verify
from webhooks.models import Attempt, Delivery, Subscription
from core.jobs import job_claim
from webhooks.services import (
    DELIVERIES,
    _attempt_record,
    _Claimed,
    delivery_attempt,
    events_drain,
    delivery_redeliver,
    subscription_create,
    subscription_update,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]


def judge(recording: Recording, capture) -> None:
    with capture(execute=True):  # the judgment, then its events' fan-out and delivery, after the commit
        recording_enqueue_judging(recording=recording)
    recording.refresh_from_db()


def body_of(request) -> dict:
    return json.loads(request.body)


def test_a_judged_recording_arrives_signed_with_the_apis_json(receiver, fake_llm, settings, django_capture_on_commit_callbacks):
    settings.QA_PUBLIC_URL = "http://testserver"  # the API's own links are absolute on that host
    subscription, secret = subscription_create(url=receiver.url, events=["recording.judged", "review.created"])
    recording = RecordingFactory(rubric=judge_rubric())

    judge(recording, django_capture_on_commit_callbacks)

    [request] = receiver.requests
    assert recording.status == Recording.Status.JUDGED
    assert request.path == "/hooks/veredicto"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["X-Veredicto-Event"] == "recording.judged"
    body = body_of(request)
    assert body["event"] == "recording.judged" and body["recording"] == recording.pk
    assert body["id"] == request.headers["X-Veredicto-Delivery"]
    assert abs(int(request.headers["X-Veredicto-Timestamp"]) - time.time()) < 30
    # The webhooks page's snippet accepts it, and refuses another secret, a changed body and an old timestamp.
    verify = readme_verify()
    assert verify(secret, request.headers, request.body)
    assert not verify("another-secret-of-enough-length", request.headers, request.body)
    assert not verify(secret, request.headers, request.body.replace(b'"judged"', b'"failed"'))
    assert not verify(secret, {**request.headers, "X-Veredicto-Timestamp": str(int(time.time()) - 3600)}, request.body)
    # `data` is what GET /api/recordings/{id}/ answers, scores and all.
    _api_key, key = new_key("crm", all_sources=True)
    api = key_client(key).get(f"/api/recordings/{recording.pk}/").json()
    assert body["data"] == api
    assert len(body["data"]["scores"]) == 2
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts, str(delivery.pk)) == (Delivery.Status.DELIVERED, 1, body["id"])
    [attempt] = delivery.attempt_log.all()
    assert (attempt.outcome, attempt.response_code, attempt.response_body) == ("delivered", 200, "ok")
    assert attempt.duration_ms > 0


def test_routing_and_failure_have_their_events(receiver, fake_llm, django_capture_on_commit_callbacks):
    subscription_create(url=receiver.url, events=["recording.routed", "recording.failed"])
    warming = RecordingFactory(rubric=judge_rubric(warm_up_judgments=5))  # the warm-up sends it to review
    judge(warming, django_capture_on_commit_callbacks)
    fake_llm.script(error(400, "bad request"))  # not transient: the run fails for good
    failing = RecordingFactory(rubric=judge_rubric())
    judge(failing, django_capture_on_commit_callbacks)

    events = [(r.headers["X-Veredicto-Event"], body_of(r)["recording"]) for r in receiver.requests]
    assert events == [("recording.routed", warming.pk), ("recording.failed", failing.pk)]
    routed, failed = (body_of(r)["data"] for r in receiver.requests)
    assert routed["needs_review"] is True and "warm_up" in routed["review_reasons"]
    assert failed["status"] == "failed" and failed["failure_reason"]
    assert routed["links"]["self"] == f"/api/recordings/{warming.pk}/"  # no QA_PUBLIC_URL: paths on the app


def test_a_review_arrives_as_the_api_answers_it(receiver, django_capture_on_commit_callbacks):
    subscription_create(url=receiver.url, events=["review.created"])
    recording = judged_recording()
    with django_capture_on_commit_callbacks(execute=True):
        review = review_create(recording=recording, decision="approve", reviewer="marta")

    [request] = receiver.requests
    body = body_of(request)
    assert (body["event"], body["recording"]) == ("review.created", recording.pk)
    assert body["data"]["id"] == review.pk and body["data"]["decision"] == "approve"
    assert body["data"]["reviewer"] == "marta" and body["data"]["criteria"] == []


def test_nothing_is_written_without_a_subscriber(fake_llm, django_capture_on_commit_callbacks, receiver):
    subscription_create(url=receiver.url, events=["review.created"])  # not the judging's events
    judge(RecordingFactory(rubric=judge_rubric()), django_capture_on_commit_callbacks)
    assert Event.objects.count() == 0 and receiver.requests == []


def test_each_process_keeps_the_subscribed_events_a_second(settings, receiver, django_assert_num_queries):
    settings.QA_WEBHOOK_SUBSCRIPTIONS_TTL = 60.0
    subscription, _secret = subscription_create(url=receiver.url, events=["recording.judged"])
    recording = judged_recording()

    def emit() -> int:
        return len(events_emit(names=["recording.judged"], subject_type="recording", subject_id=recording.pk))

    with django_assert_num_queries(2):  # the subscriptions, read once, and the event's INSERT
        assert emit() == 1
    with django_assert_num_queries(1):  # kept: the INSERT alone
        assert emit() == 1
    Subscription.objects.filter(pk=subscription.pk).delete()  # as another process would: not seen yet
    assert emit() == 1
    subscription_create(url=receiver.url, events=["review.created"])  # this process's own change: seen at once
    with django_assert_num_queries(1):
        assert emit() == 0


def emitted(capture, *, recording: Recording | None = None) -> Delivery:
    recording = recording or judged_recording()
    with capture(execute=True):
        events_emit(names=["recording.judged"], subject_type="recording", subject_id=recording.pk, recording_id=recording.pk)
    return Delivery.objects.latest("created_at")


def test_a_500_is_retried_with_the_same_id_and_body(receiver, django_capture_on_commit_callbacks):
    subscription, secret = subscription_create(url=receiver.url, events=["recording.judged"])
    receiver.script(Answer(500, body="database down"))
    delivery = emitted(django_capture_on_commit_callbacks)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (Delivery.Status.PENDING, 1)
    assert delivery.error == "The receiver answered 500."

    assert delivery_attempt(delivery_id=delivery.pk).outcome == "delivered"

    first, second = receiver.requests
    assert first.headers["X-Veredicto-Delivery"] == second.headers["X-Veredicto-Delivery"] == str(delivery.pk)
    assert first.body == second.body
    verify = readme_verify()
    assert verify(secret, first.headers, first.body) and verify(secret, second.headers, second.body)
    attempts = list(delivery.attempt_log.values_list("number", "outcome", "response_code", "response_body"))
    assert attempts == [(1, "retry", 500, "database down"), (2, "delivered", 200, "ok")]
    assert Subscription.objects.get().failing_since is None  # a delivery clears the failure record


def test_a_timeout_is_retried(receiver, django_capture_on_commit_callbacks):
    subscription_create(url=receiver.url, events=["recording.judged"])
    receiver.script(Answer(200, delay=2.5))  # longer than QA_WEBHOOK_TIMEOUT (1 s here)
    delivery = emitted(django_capture_on_commit_callbacks)
    [attempt] = delivery.attempt_log.all()
    assert (attempt.outcome, attempt.response_code) == ("retry", None)
    assert attempt.error == "No answer within 1.0 s."
    assert 900 < attempt.duration_ms < 2400

    assert delivery_attempt(delivery_id=delivery.pk).outcome == "delivered"
    assert len(receiver.requests) == 2


def test_backoff_doubles_and_gives_up_after_the_window(receiver, settings, django_capture_on_commit_callbacks):
    settings.QA_WEBHOOK_RETRY_BASE, settings.QA_WEBHOOK_RETRY_WINDOW = 10.0, 25.0
    subscription_create(url=receiver.url, events=["recording.judged"])
    receiver.script(*[Answer(503)] * 3)
    delivery = emitted(django_capture_on_commit_callbacks)
    delivery.refresh_from_db()
    waited = (delivery.next_attempt_at - delivery.attempt_log.get().started_at).total_seconds()
    assert 9 < waited < 11  # the first retry after RETRY_BASE
    assert delivery_attempt(delivery_id=delivery.pk).outcome == "skipped"  # not due yet

    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    assert delivery_attempt(delivery_id=delivery.pk).delay == 20.0  # doubled: 20 s, inside the 25 s window
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    assert delivery_attempt(delivery_id=delivery.pk).outcome == "failed"  # 40 s more would leave it

    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED and delivery.next_attempt_at is None
    assert list(delivery.attempt_log.values_list("outcome", flat=True)) == ["retry", "retry", "failed"]
    assert delivery_attempt(delivery_id=delivery.pk).outcome == "skipped" and len(receiver.requests) == 3


def test_a_subscription_failing_for_a_day_is_paused_and_its_owner_told(receiver, settings, django_capture_on_commit_callbacks):
    settings.QA_MAIL = True  # as EMAIL_URL sets it; the test's mail goes to django.core.mail.outbox
    subscription, _secret = subscription_create(
        url=receiver.url, events=["recording.judged"], contact_email="crm-team@example.com"
    )
    receiver.script(Answer(500))
    emitted(django_capture_on_commit_callbacks)
    subscription.refresh_from_db()
    assert subscription.status == Subscription.Status.ACTIVE and subscription.failing_since is not None
    assert mail.outbox == []
    # Its first failure was a day ago: this failure pauses it.
    Subscription.objects.filter(pk=subscription.pk).update(failing_since=timezone.now() - timedelta(days=1, seconds=1))
    receiver.script(Answer(500))
    pending = emitted(django_capture_on_commit_callbacks)

    subscription.refresh_from_db()
    assert subscription.status == Subscription.Status.PAUSED
    assert subscription.paused_reason.startswith("Every delivery attempt failed since")
    [message] = mail.outbox
    assert message.to == ["crm-team@example.com"] and receiver.url in message.subject
    # Paused: nothing more is sent, not even the pending delivery's retries.
    emitted(django_capture_on_commit_callbacks)
    assert delivery_attempt(delivery_id=pending.pk).outcome == "skipped"
    assert len(receiver.requests) == 2
    # Resumed: its two pending deliveries (each failed once) go out again; the one emitted while it
    # was paused was never made.
    with django_capture_on_commit_callbacks(execute=True):
        subscription_update(subscription=subscription, status=Subscription.Status.ACTIVE)
    assert len(receiver.requests) == 4
    assert set(Delivery.objects.values_list("status", flat=True)) == {Delivery.Status.DELIVERED}
    subscription.refresh_from_db()
    assert subscription.failing_since is None and subscription.paused_reason == ""


def test_a_redelivery_sends_the_same_id_and_body_newly_signed(receiver, django_capture_on_commit_callbacks):
    _subscription, secret = subscription_create(url=receiver.url, events=["recording.judged"])
    delivery = emitted(django_capture_on_commit_callbacks)
    time.sleep(1.1)  # a new second: a new timestamp, so a new signature
    with django_capture_on_commit_callbacks(execute=True):
        delivery_redeliver(delivery=delivery)

    first, again = receiver.requests
    assert again.headers["X-Veredicto-Delivery"] == first.headers["X-Veredicto-Delivery"] == str(delivery.pk)
    assert again.body == first.body and body_of(again)["id"] == str(delivery.pk)
    assert again.headers["X-Veredicto-Signature"] != first.headers["X-Veredicto-Signature"]
    assert readme_verify()(secret, again.headers, again.body)
    assert list(Attempt.objects.values_list("number", "outcome")) == [(1, "delivered"), (2, "delivered")]


def test_a_host_no_longer_allowed_is_refused_at_delivery(receiver, settings, django_capture_on_commit_callbacks):
    subscription_create(url=receiver.url, events=["recording.judged"])
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]  # the operator took loopback off the list
    delivery = emitted(django_capture_on_commit_callbacks)
    delivery.refresh_from_db()
    assert receiver.requests == []
    assert delivery.status == Delivery.Status.FAILED
    assert delivery.error == "The address 127.0.0.1 is not allowed by QA_WEBHOOK_ALLOWED_HOSTS."


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_transaction_sends_nothing(receiver):
    subscription_create(url=receiver.url, events=["review.created"])
    recording = judged_recording()
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            review_create(recording=recording, decision="approve", reviewer="marta")
            raise RuntimeError("the caller fails after the review was written")
    time.sleep(0.5)
    assert receiver.requests == [] and Event.objects.count() == 0 and Delivery.objects.count() == 0

    review_create(recording=recording, decision="approve", reviewer="marta")  # committed: sent
    assert [r.headers["X-Veredicto-Event"] for r in receiver.requests] == ["review.created"]


def test_a_redirect_is_not_followed_nor_delivered(receiver, django_capture_on_commit_callbacks):
    subscription_create(url=receiver.url, events=["recording.judged"])
    receiver.script(Answer(302))
    delivery = emitted(django_capture_on_commit_callbacks)
    assert list(delivery.attempt_log.values_list("outcome", "response_code")) == [("retry", 302)]
    assert len(receiver.requests) == 1


def test_the_connection_goes_to_the_address_that_was_checked(receiver, settings, monkeypatch, django_capture_on_commit_callbacks):
    from tests.webhooks.test_hosts import resolving

    port = receiver.url.split(":")[2].split("/")[0]
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com:*", "127.0.0.1:*"]
    resolving(monkeypatch, {"hooks.example.com": ["127.0.0.1"]})
    subscription_create(url=f"http://hooks.example.com:{port}/in", events=["recording.judged"])
    emitted(django_capture_on_commit_callbacks)
    [request] = receiver.requests
    assert request.headers["Host"] == f"hooks.example.com:{port}" and request.path == "/in"


def test_each_checked_address_is_tried_in_turn(receiver, settings, monkeypatch, django_capture_on_commit_callbacks):
    """A name with two addresses, the first answering nothing (an IPv6 address seen from an IPv4-only
    network, say): the attempt goes on to the next address it checked, never to a new resolution."""
    from tests.webhooks.test_hosts import resolving

    port = receiver.url.split(":")[2].split("/")[0]
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com:*", "127.0.0.0/8:*"]
    resolving(monkeypatch, {"hooks.example.com": ["127.0.0.3", "127.0.0.1"]})  # nothing listens on 127.0.0.3
    subscription_create(url=f"http://hooks.example.com:{port}/in", events=["recording.judged"])
    delivery = emitted(django_capture_on_commit_callbacks)
    assert delivery.status == Delivery.Status.DELIVERED and len(receiver.requests) == 1


def test_the_sweep_sends_what_lost_its_message(receiver, django_capture_on_commit_callbacks):
    subscription_create(url=receiver.url, events=["recording.judged"])
    recording = judged_recording()
    with django_capture_on_commit_callbacks():  # committed, but never drained nor published (a broker down)
        [event] = events_emit(
            names=["recording.judged"], subject_type="recording", subject_id=recording.pk, recording_id=recording.pk
        )
    # The drain (beat's, every second) fans out what is waiting, however old; its deliveries' messages go after the commit.
    with django_capture_on_commit_callbacks():
        assert events_drain() == 1
    delivery = Delivery.objects.get(event=event)
    assert jobs_sweep()["delivery"] == 0  # due under a minute ago: its message may still come
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(minutes=2))
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_sweep()["delivery"] == 1
    [request] = receiver.requests
    assert body_of(request)["recording"] == recording.pk
    # A delivery overdue by a minute (its retry message lost) is published again.
    receiver.script(Answer(500))
    delivery = emitted(django_capture_on_commit_callbacks)
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(minutes=2))
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_sweep()["delivery"] == 1
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.DELIVERED and len(receiver.requests) == 3
    # A paused subscription's deliveries wait for the resume: the sweep leaves them.
    receiver.script(Answer(500))
    delivery = emitted(django_capture_on_commit_callbacks)
    Subscription.objects.update(status=Subscription.Status.PAUSED)
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(minutes=2))
    assert jobs_sweep()["delivery"] == 0


def test_a_delivery_whose_worker_died_is_taken_back_by_the_sweep_and_delivered_once(
    receiver, django_capture_on_commit_callbacks
):
    subscription_create(url=receiver.url, events=["recording.judged"])
    recording = judged_recording()
    with django_capture_on_commit_callbacks():  # fanned out; its message is the one the dying worker took
        events_emit(names=["recording.judged"], subject_type="recording", subject_id=recording.pk, recording_id=recording.pk)
        events_drain()
    delivery = Delivery.objects.get()
    dead = _Claimed(Delivery.objects.select_related("event", "subscription").get(pk=delivery.pk))
    assert job_claim(DELIVERIES, dead)  # the worker claims it, then dies before it posts
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == (Delivery.Status.RUNNING, 1)
    assert delivery_attempt(delivery_id=delivery.pk).outcome == "skipped"  # a duplicate message: it is held
    assert jobs_sweep()["delivery"] == 0 and not receiver.requests  # its lease still stands

    Delivery.objects.filter(pk=delivery.pk).update(leased_until=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_sweep()["delivery"] == 1  # taken back, published, and sent
    with django_capture_on_commit_callbacks(execute=True):
        assert jobs_sweep()["delivery"] == 0  # once: nothing is due any more

    delivery.refresh_from_db()
    [request] = receiver.requests
    assert request.headers["X-Veredicto-Delivery"] == str(delivery.pk)
    assert (delivery.status, delivery.attempts) == (Delivery.Status.DELIVERED, 2)
    assert list(delivery.attempt_log.values_list("number", "outcome")) == [(2, "delivered")]
    # The dead worker's attempt, were it to come back, records nothing: its claim is gone.
    late = _attempt_record(job=dead, started=timezone.now(), duration_ms=1.0, code=500, answer="", error="x", permanent=False)
    assert late.outcome == "skipped"
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.DELIVERED and delivery.attempt_log.count() == 1


def test_a_dispute_opened_and_resolved_is_sent_as_the_disputes_api_gives_it(receiver, django_capture_on_commit_callbacks):
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from disputes.services import CriterionResolution, DisputedValue, dispute_open, dispute_resolve
    from tests.factories import UserFactory

    subscription_create(url=receiver.url, events=["dispute.opened", "dispute.resolved"])
    call_command("create_agent_user", "agent-1", "marta")
    lead = UserFactory(groups=["Supervisors", "QA leads"])
    recording = judged_recording()  # agent-1's call
    review = review_create(recording=recording, decision="approve", reviewer="sup")
    with django_capture_on_commit_callbacks(execute=True):
        dispute = dispute_open(
            review=review, user=User.objects.get(username="marta"), criteria=[DisputedValue("c1", 2, reason="No.")]
        )
    with django_capture_on_commit_callbacks(execute=True):
        dispute_resolve(dispute=dispute, user=lead, resolutions=[CriterionResolution("c1", "upheld", "Yes.")])
    bodies = [body_of(request) for request in receiver.requests]
    assert [(b["event"], b["recording"], b["data"]["id"]) for b in bodies] == [
        ("dispute.opened", recording.pk, dispute.pk), ("dispute.resolved", recording.pk, dispute.pk),
    ]  # fmt: skip
    assert bodies[0]["data"]["status"] == "open" and bodies[0]["data"]["criteria"][0]["proposed_value"] == 2
    assert bodies[1]["data"]["criteria"][0]["outcome"] == "upheld" and bodies[1]["data"]["resolution"] is not None


def test_without_a_contact_the_owner_is_told_and_the_admin_lists_the_pause(
    receiver, client, settings, django_capture_on_commit_callbacks
):
    from tests.factories import UserFactory

    settings.QA_MAIL = True
    owner = UserFactory(email="ana@example.com", is_staff=True, is_superuser=True)
    subscription, _secret = subscription_create(url=receiver.url, events=["recording.judged"], owner=owner)
    Subscription.objects.filter(pk=subscription.pk).update(failing_since=timezone.now() - timedelta(days=2))
    receiver.script(Answer(503))
    emitted(django_capture_on_commit_callbacks)

    [message] = mail.outbox
    assert message.to == ["ana@example.com"]
    client.force_login(owner)
    listing = client.get("/admin/webhooks/subscription/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "paused" in listing and "Every delivery attempt failed since" in listing


def test_without_a_mail_server_the_pause_is_in_the_admin_alone(receiver, client, settings, caplog, django_capture_on_commit_callbacks):
    from tests.factories import UserFactory

    settings.QA_MAIL = False  # no EMAIL_URL nor EMAIL_HOST
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    owner = UserFactory(email="ana@example.com", is_staff=True, is_superuser=True)
    subscription, _secret = subscription_create(url=receiver.url, events=["recording.judged"], owner=owner)
    Subscription.objects.filter(pk=subscription.pk).update(failing_since=timezone.now() - timedelta(days=2))
    receiver.script(Answer(503))
    with caplog.at_level("INFO", logger="webhooks.services"):
        emitted(django_capture_on_commit_callbacks)

    subscription.refresh_from_db()
    assert subscription.status == Subscription.Status.PAUSED
    assert "No mail server (EMAIL_URL) to tell ana@example.com" in caplog.text
    assert "Could not e-mail" not in caplog.text  # nothing tried to reach a mail server
    client.force_login(owner)
    listing = client.get("/admin/webhooks/subscription/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "paused" in listing and "Every delivery attempt failed since" in listing


def test_a_dispute_events_payload_in_isolation(receiver, django_capture_on_commit_callbacks):
    """What the disputes feature gets from its two emitters, apart from any delivery: nothing written
    without a subscriber; with one, the event with the dispute's and the recording's ids in its
    workspace, and the envelope around its data; a dispute gone by the fan-out sends nothing."""
    from outbox.services import dispute_opened_emit, dispute_resolved_emit
    from webhooks.payloads import event_data
    from webhooks.services import delivery_body, event_fan_out

    recording = judged_recording()
    assert dispute_opened_emit(dispute_id=11, recording_id=recording.pk) == []
    subscription_create(url=receiver.url, events=["dispute.resolved"])
    assert dispute_opened_emit(dispute_id=11, recording_id=recording.pk) == []  # not subscribed to
    with django_capture_on_commit_callbacks():  # not fanned out: the event alone
        [event] = dispute_resolved_emit(dispute_id=11, recording_id=recording.pk)
    event = Event.objects.get(pk=event.pk)
    assert (event.name, event.subject_type, event.subject_id, event.recording_id, event.workspace_id) == (
        "dispute.resolved", "dispute", 11, recording.pk, None,
    )  # fmt: skip
    body = json.loads(delivery_body(delivery_id=event.pk, event=event, data={"id": 11}))
    assert body == {
        "id": str(event.pk), "event": "dispute.resolved", "created": body["created"], "recording": recording.pk,
        "data": {"id": 11},
    }  # fmt: skip
    assert body["created"].startswith(event.created_at.isoformat()[:19])
    assert event_data(event=event) is None  # no dispute 11
    with django_capture_on_commit_callbacks(execute=True):
        assert event_fan_out(event_id=event.pk) == []
    assert receiver.requests == [] and Delivery.objects.count() == 0

def test_the_readmes_receiver_handles_a_redelivered_event_once(settings, django_capture_on_commit_callbacks):
    import threading
    from http.server import HTTPServer

    from tests.webhooks.conftest import readme_receiver

    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:*"]
    handled: list[dict] = []
    secret = "whsec_the-receivers-own-secret-0123456789"  # what VEREDICTO_WEBHOOK_SECRET gives it
    server = HTTPServer(("127.0.0.1", 0), readme_receiver(secret=secret, handle=handled.append))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/veredicto"
        subscription, _secret = subscription_create(url=url, events=["recording.judged"], secret=secret)
        delivery = emitted(django_capture_on_commit_callbacks)
        with django_capture_on_commit_callbacks(execute=True):
            delivery_redeliver(delivery=delivery)
        # Signed with another secret: refused, so retried.
        Subscription.objects.filter(pk=subscription.pk).update(secret="another-secret-of-enough-length")
        forged = emitted(django_capture_on_commit_callbacks)
    finally:
        server.shutdown()
        server.server_close()

    assert [event["id"] for event in handled] == [str(delivery.pk)]  # once, though sent twice
    assert list(delivery.attempt_log.values_list("response_code", flat=True)) == [200, 200]
    assert list(forged.attempt_log.values_list("outcome", "response_code")) == [("retry", 401)]
