"""A subscription belongs to a workspace and receives that workspace's events alone; people see and
make subscriptions in the workspaces of their scope (access.scope), over the API and in the admin."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from rest_framework.test import APIClient

from access.models import DEFAULT_WORKSPACE, Role, Workspace
from access.services import member_add, workspace_create
from outbox.services import events_emit, recording_judged_emit
from qa.models import Recording
from tests.factories import UserFactory, judged_recording
from webhooks.models import Delivery, Subscription
from webhooks.services import subscription_create

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_celery")]

WEBHOOK_PERMISSIONS = ["view_subscription", "add_subscription", "change_subscription", "view_delivery", "change_delivery"]


def webhook_admin(username: str, workspace: Workspace):
    """A workspace's admin whom the operator granted the webhooks' permissions (no role has them)."""
    user = UserFactory(username=username, is_staff=True)
    member_add(user=user, workspace=workspace, role=Role.ADMIN)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="webhooks", codename__in=WEBHOOK_PERMISSIONS))
    return user


def test_each_workspace_receives_its_own_events(receiver, django_capture_on_commit_callbacks):
    default = Workspace.objects.get(slug=DEFAULT_WORKSPACE)
    acme = workspace_create(slug="acme", name="ACME")
    ours, _secret = subscription_create(url=receiver.url, events=["recording.judged"])
    theirs, _secret = subscription_create(url=receiver.url + "/acme", events=["recording.judged"], workspace=acme)
    assert ours.workspace == default
    recording = judged_recording()

    with django_capture_on_commit_callbacks(execute=True):
        [acme_event] = recording_judged_emit(recording_id=recording.pk, routed=False, workspace_id=acme.pk)
    with django_capture_on_commit_callbacks(execute=True):
        [default_event] = recording_judged_emit(recording_id=recording.pk, routed=False)  # names no workspace

    assert {(d.event_id, d.subscription_id) for d in Delivery.objects.all()} == {
        (acme_event.pk, theirs.pk), (default_event.pk, ours.pk),
    }  # fmt: skip
    assert [(r.path, json.loads(r.body)["event"]) for r in receiver.requests] == [
        ("/hooks/veredicto/acme", "recording.judged"), ("/hooks/veredicto", "recording.judged"),
    ]  # fmt: skip


def test_a_workspaces_recording_goes_to_that_workspaces_subscriptions_alone(
    receiver, fake_llm, django_capture_on_commit_callbacks
):
    """Through the judging itself, once recordings belong to workspaces (the workspaces' branch)."""
    if not any(field.name == "workspace" for field in Recording._meta.get_fields()):
        pytest.skip("recordings have no workspace yet: the judging's emit gets one with them")
    from qa.judging import recording_enqueue_judging
    from tests.factories import RecordingFactory
    from tests.judge.conftest import judge_rubric

    acme = workspace_create(slug="acme", name="ACME")
    subscription_create(url=receiver.url, events=["recording.judged"])  # the default workspace's
    theirs, _secret = subscription_create(url=receiver.url + "/acme", events=["recording.judged"], workspace=acme)
    recording = RecordingFactory(rubric=judge_rubric(workspace=acme))
    with django_capture_on_commit_callbacks(execute=True):
        recording_enqueue_judging(recording=recording)
    assert [r.path for r in receiver.requests] == ["/hooks/veredicto/acme"]
    assert Delivery.objects.get().subscription == theirs


def test_a_person_sees_and_makes_subscriptions_in_their_workspaces_alone(receiver):
    acme, other = workspace_create(slug="acme", name="ACME"), workspace_create(slug="other", name="Other")
    theirs, _secret = subscription_create(url=receiver.url + "/other", events=["review.created"], workspace=other)
    ana = APIClient()
    ana.force_login(webhook_admin("ana", acme))
    body = {"url": receiver.url, "events": ["review.created"]}

    created = ana.post("/api/webhooks/", body, format="json")  # her only workspace
    assert created.status_code == 201 and created.json()["workspace"] == "acme"
    assert [s["id"] for s in ana.get("/api/webhooks/").json()["results"]] == [created.json()["id"]]
    assert ana.get(f"/api/webhooks/{theirs.pk}/").status_code == 404
    assert ana.patch(f"/api/webhooks/{theirs.pk}/", {"status": "paused"}, format="json").status_code == 404
    assert ana.get(f"/api/webhooks/{theirs.pk}/deliveries/").status_code == 404
    refused = ana.post("/api/webhooks/", {**body, "workspace": "other"}, format="json")
    assert refused.status_code == 400 and refused.json() == {"workspace": "None of your workspaces is 'other'."}
    assert Subscription.objects.filter(workspace=other).count() == 1

    root = APIClient()
    root.force_login(UserFactory(is_superuser=True))
    assert len(root.get("/api/webhooks/").json()["results"]) == 2
    assert root.post("/api/webhooks/", {**body, "workspace": "other"}, format="json").json()["workspace"] == "other"
    assert root.post("/api/webhooks/", body, format="json").json()["workspace"] == DEFAULT_WORKSPACE


def test_the_admin_lists_and_offers_a_persons_workspaces_alone(receiver, client, django_capture_on_commit_callbacks):
    acme, other = workspace_create(slug="acme", name="ACME"), workspace_create(slug="other", name="Other")
    theirs, _secret = subscription_create(url=receiver.url + "/other", events=["recording.judged"], workspace=other)
    recording = judged_recording()
    with django_capture_on_commit_callbacks(execute=True):
        events_emit(names=["recording.judged"], subject_type="recording", subject_id=recording.pk, workspace_id=other.pk)
    client.force_login(webhook_admin("ana", acme))

    assert client.get("/admin/webhooks/subscription/").content.decode().count("/hooks/veredicto/other") == 0
    assert client.get(f"/admin/webhooks/subscription/{theirs.pk}/change/").status_code == 302  # not hers: away
    assert "/hooks/veredicto/other" not in client.get("/admin/webhooks/delivery/").content.decode()
    form = client.get("/admin/webhooks/subscription/add/").content.decode()
    assert "ACME" in form and "Other" not in form
    refused = client.post(
        "/admin/webhooks/subscription/add/",
        {"workspace": other.pk, "url": receiver.url, "events": ["recording.judged"]},
    )
    assert refused.status_code == 200 and not Subscription.objects.filter(workspace=other, url=receiver.url).exists()
    made = client.post(
        "/admin/webhooks/subscription/add/",
        {"workspace": acme.pk, "url": receiver.url, "events": ["recording.judged"]},
    )
    assert made.status_code == 200 and Subscription.objects.get(url=receiver.url).workspace == acme


def test_create_webhook_takes_a_workspace(receiver):
    workspace_create(slug="acme", name="ACME")
    out = StringIO()
    call_command("create_webhook", receiver.url, "--events", "recording.judged", "--workspace", "acme", stdout=out)
    subscription = Subscription.objects.get()
    assert subscription.workspace.slug == "acme" and out.getvalue().splitlines()[-1] == subscription.secret
    assert "of workspace acme" in out.getvalue()


def test_a_keys_subscriptions_are_where_its_calls_are(receiver):
    from tests.api.conftest import key_client, new_key

    _api_key, key = new_key("crm")
    created = key_client(key).post(
        "/api/webhooks/", {"url": receiver.url, "events": ["review.created"], "workspace": "acme"}, format="json"
    )  # a key does not choose: the workspace named is not read
    assert created.status_code == 201 and created.json()["workspace"] == DEFAULT_WORKSPACE
