"""Subscriptions from the command, the API and the admin: the secret shown once, each key its own."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.utils.html import escape
from rest_framework.test import APIClient

from access.models import DEFAULT_WORKSPACE, Workspace
from outbox.services import events_emit
from tests.api.conftest import key_client, new_key
from tests.factories import UserFactory, judged_recording
from webhooks.models import Delivery, Subscription
from webhooks.services import delivery_attempt, event_fan_out

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:*"]


def test_create_webhook_prints_the_secret_on_its_last_line():
    out = StringIO()
    call_command("create_webhook", "http://127.0.0.1:9/in", "--events", "recording.judged,review.created", stdout=out)
    subscription = Subscription.objects.get()
    assert out.getvalue().splitlines()[-1] == subscription.secret
    assert subscription.secret.startswith("whsec_") and len(subscription.secret) > 40
    assert subscription.events == ["recording.judged", "review.created"] and subscription.status == "active"

    out = StringIO()
    secret = "s" * 24
    call_command("create_webhook", "http://127.0.0.1:9/b", "--events", "review.created", "--secret", secret, stdout=out)
    assert out.getvalue().splitlines()[-1] == secret


def test_the_api_shows_the_secret_once_and_each_key_its_own():
    _crm, crm_key = new_key("crm")
    _bi, bi_key = new_key("bi")
    crm, bi = key_client(crm_key), key_client(bi_key)

    created = crm.post("/api/webhooks/", {"url": "http://127.0.0.1:9/in", "events": ["review.created"]}, format="json")
    assert created.status_code == 201 and "no-store" in created["Cache-Control"]
    body = created.json()
    assert body["secret"] == Subscription.objects.get().secret
    listed = crm.get("/api/webhooks/").json()["results"]
    assert [s["id"] for s in listed] == [body["id"]] and "secret" not in listed[0]
    assert "secret" not in crm.get(f"/api/webhooks/{body['id']}/").json()
    assert bi.get("/api/webhooks/").json()["results"] == []
    assert bi.get(f"/api/webhooks/{body['id']}/").status_code == 404
    assert bi.delete(f"/api/webhooks/{body['id']}/").status_code == 404

    changed = crm.patch(f"/api/webhooks/{body['id']}/", {"status": "paused", "events": ["recording.failed"]}, format="json")
    assert changed.status_code == 200
    assert (changed.json()["status"], changed.json()["events"]) == ("paused", ["recording.failed"])
    assert crm.patch(f"/api/webhooks/{body['id']}/", {"url": "http://10.9.9.9/"}, format="json").status_code == 400
    assert crm.delete(f"/api/webhooks/{body['id']}/").status_code == 204
    assert Subscription.objects.count() == 0


def test_the_api_lists_deliveries_and_redelivers(django_capture_on_commit_callbacks):
    _crm, key = new_key("crm")
    crm = key_client(key)
    subscription_id = crm.post(
        "/api/webhooks/", {"url": "http://127.0.0.1:9/in", "events": ["recording.judged"]}, format="json"
    ).json()["id"]
    recording = judged_recording()
    with django_capture_on_commit_callbacks():  # fanned out below, not sent
        [event] = events_emit(names=["recording.judged"], subject_type="recording", subject_id=recording.pk)
    with django_capture_on_commit_callbacks():
        [delivery_id] = event_fan_out(event_id=event.pk)
    [delivery] = crm.get(f"/api/webhooks/{subscription_id}/deliveries/").json()["results"]
    assert (delivery["id"], delivery["event"], delivery["status"]) == (str(delivery_id), "recording.judged", "pending")
    Delivery.objects.filter(pk=delivery_id).update(status=Delivery.Status.FAILED)
    with django_capture_on_commit_callbacks() as published:
        answer = crm.post(f"/api/webhooks/{subscription_id}/deliveries/{delivery_id}/redeliver/")
    assert answer.status_code == 202 and answer.json()["status"] == "pending" and len(published) == 1


def test_a_person_needs_the_permissions():
    nobody = APIClient()
    nobody.force_login(UserFactory(groups=["Supervisors"]))
    assert nobody.get("/api/webhooks/").status_code == 403
    assert nobody.post("/api/webhooks/", {"url": "http://127.0.0.1:9/", "events": ["review.created"]}, format="json").status_code == 403
    admin = APIClient()
    admin.force_login(UserFactory(is_superuser=True))
    created = admin.post("/api/webhooks/", {"url": "http://127.0.0.1:9/", "events": ["review.created"]}, format="json")
    assert created.status_code == 201
    assert Subscription.objects.get().owner.is_superuser


def test_the_admin_shows_the_secret_once_and_logs_every_attempt(client, django_capture_on_commit_callbacks):
    staff = UserFactory(is_staff=True, is_superuser=True, email="ops@example.com")
    client.force_login(staff)
    page = client.post(
        "/admin/webhooks/subscription/add/",
        {"workspace": Workspace.objects.get(slug=DEFAULT_WORKSPACE).pk, "url": "http://127.0.0.1:9/in",
         "events": ["recording.judged"], "description": "CRM", "contact_email": ""},
        HTTP_ACCEPT_LANGUAGE="en",
    )
    subscription = Subscription.objects.get()
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    assert subscription.secret in page.content.decode() and subscription.owner == staff
    assert subscription.secret not in client.get(f"/admin/webhooks/subscription/{subscription.pk}/change/").content.decode()
    refused = client.post(
        "/admin/webhooks/subscription/add/", {"url": "http://10.0.0.1/", "events": ["recording.judged"]}, HTTP_ACCEPT_LANGUAGE="en"
    )
    assert "The address 10.0.0.1 is not allowed by QA_WEBHOOK_ALLOWED_HOSTS." in refused.content.decode()

    # Port 9 (discard) on loopback refuses the connection: one failed attempt, logged.
    recording = judged_recording()
    with django_capture_on_commit_callbacks():
        [event] = events_emit(names=["recording.judged"], subject_type="recording", subject_id=recording.pk)
    with django_capture_on_commit_callbacks():
        [delivery_id] = event_fan_out(event_id=event.pk)
    delivery_attempt(delivery_id=delivery_id)
    delivery = Delivery.objects.get()
    page = client.get(f"/admin/webhooks/delivery/{delivery.pk}/change/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Could not reach the receiver" in page and "failed, will retry" in page
    # Each attempt's duration and response code, and the body sent, byte for byte (escaped in the page).
    assert "Duration (ms)" in page and "Response code" in page
    assert f"{delivery.attempt_log.get().duration_ms}"[:4] in page
    assert escape(delivery.body) in page
    listing = client.get("/admin/webhooks/delivery/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "recording.judged" in listing and "Redeliver the selected deliveries (same id and body)" in listing
    with django_capture_on_commit_callbacks() as published:
        client.post(
            "/admin/webhooks/delivery/",
            {"action": "redeliver", "_selected_action": [str(delivery.pk)]},
            HTTP_ACCEPT_LANGUAGE="en",
        )
    assert len(published) == 1
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.PENDING
