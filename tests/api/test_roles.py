"""Every API endpoint with every role: a key acts for a system, a person's session gets what their
groups give them on the pages (Supervisors read and review, Rubric owners read), and staff status
without a group gets nothing."""

from __future__ import annotations

import itertools

import pytest
from rest_framework.test import APIClient

from tests.api.conftest import key_client, new_key
from tests.factories import SAMPLE_TRANSCRIPT, UserFactory, judged_recording, published_rubric

OK, FORBIDDEN, UNAUTHENTICATED = "ok", 403, 401
ENDPOINTS = [
    "list recordings",
    "post a recording",
    "read a recording",
    "rejudge",
    "post a review",
    "post a review (tools' path)",
    "list rubrics",
    "read a rubric",
    "deviation report",
    "evidence report",
    "list webhooks",
    "subscribe a webhook",
]
# Webhook subscriptions are for keys (each its own) and for people granted their permissions (no group has them).
READS = {"list recordings", "read a recording", "list rubrics", "read a rubric", "deviation report", "evidence report"}
REVIEWS = {"post a review", "post a review (tools' path)"}
ROLES = {
    "anonymous": {endpoint: UNAUTHENTICATED for endpoint in ENDPOINTS},
    "no group": {endpoint: FORBIDDEN for endpoint in ENDPOINTS},
    "staff without a group": {endpoint: FORBIDDEN for endpoint in ENDPOINTS},
    "supervisor": {endpoint: OK if endpoint in READS | REVIEWS else FORBIDDEN for endpoint in ENDPOINTS},
    "rubric owner": {endpoint: OK if endpoint in READS else FORBIDDEN for endpoint in ENDPOINTS},
    "key": {endpoint: FORBIDDEN if endpoint in REVIEWS else OK for endpoint in ENDPOINTS},
    "superuser": {endpoint: OK for endpoint in ENDPOINTS},
    "key with review rights": {endpoint: OK for endpoint in ENDPOINTS},
}
_external_ids = itertools.count()


def client_for(role: str) -> APIClient:
    if role.startswith("key"):
        return key_client(new_key(role, can_review=role == "key with review rights", all_sources=True)[1])
    client = APIClient()
    users = {
        "no group": lambda: UserFactory(),
        "staff without a group": lambda: UserFactory(is_staff=True),
        "supervisor": lambda: UserFactory(groups=["Supervisors"]),
        "rubric owner": lambda: UserFactory(groups=["Rubric owners"]),
        "superuser": lambda: UserFactory(is_superuser=True),
    }
    if role in users:
        client.force_login(users[role]())
    return client


def call(client: APIClient, endpoint: str, rubric) -> int:
    recording = judged_recording(rubric=rubric)
    review = {"reviewer": "sup-1", "decision": "approve"}
    requests = {
        "list recordings": lambda: client.get("/api/recordings/"),
        "post a recording": lambda: client.post(
            "/api/recordings/",
            {"external_id": f"call-{next(_external_ids)}", "rubric": rubric.slug, "transcript": SAMPLE_TRANSCRIPT},
            format="json",
        ),
        "read a recording": lambda: client.get(f"/api/recordings/{recording.pk}/"),
        "rejudge": lambda: client.post(f"/api/recordings/{recording.pk}/rejudge/"),
        "post a review": lambda: client.post(f"/api/recordings/{recording.pk}/review/", review, format="json"),
        "post a review (tools' path)": lambda: client.post(f"/recordings/{recording.pk}/review", review, format="json"),
        "list rubrics": lambda: client.get("/api/rubrics/"),
        "read a rubric": lambda: client.get(f"/api/rubrics/{rubric.slug}/"),
        "deviation report": lambda: client.get("/api/reports/deviation/", {"rubric": rubric.slug}),
        "evidence report": lambda: client.get("/api/reports/evidence/", {"rubric": rubric.slug}),
        "list webhooks": lambda: client.get("/api/webhooks/"),
        "subscribe a webhook": lambda: client.post(
            "/api/webhooks/", {"url": "https://127.0.0.1/hook", "events": ["review.created"]}, format="json"
        ),
    }
    return requests[endpoint]().status_code


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_every_endpoint_answers_each_role_as_its_groups_allow(role, django_capture_on_commit_callbacks, settings):
    settings.QA_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1:*"]
    rubric = published_rubric(slug="care")
    client = client_for(role)
    answers = {}
    with django_capture_on_commit_callbacks():  # never publish a judgment to a worker
        for endpoint in ENDPOINTS:
            status = call(client, endpoint, rubric)
            answers[endpoint] = OK if status in (200, 201, 202) else status
    assert answers == ROLES[role]
