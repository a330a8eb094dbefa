"""GET /api/calls/: the calls list's search over the API, for a person's session."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from qa.models import Recording
from calls.services import assignments_create
from tests.api.conftest import key_client, new_key
from tests.calls.conftest import queued_call

pytestmark = pytest.mark.django_db


def session(user) -> APIClient:
    client = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(user)
    return client


def test_a_search_with_headlines(calls, supervisor, lead):
    queued = queued_call(calls["es"].rubric, "q-1")
    assignments_create(recording_ids=[queued.pk], assignee=supervisor, assigned_by=lead)
    response = session(supervisor).get("/api/calls/", {"q": "factura", "team": "north"})
    assert response.status_code == 200
    body = response.json()
    assert (body["count"], body["capped"], body["page"], body["pages"]) == (2, False, 1, 1)
    assert [row["external_id"] for row in body["results"]] == ["es-1", "q-1"]  # latest first
    first = body["results"][1]
    assert first["assignee"] == "supervisor" and first["status"] == Recording.Status.IN_REVIEW
    assert first["latest_decision"] == "" and first["rubric"] == "care"
    assert "<mark>factura</mark>" in first["headline"]
    assert session(supervisor).get("/api/calls/").json()["results"][0]["headline"] is None


def test_bad_parameters_are_400s_naming_them(calls, supervisor):
    client = session(supervisor)
    assert "value" in client.get("/api/calls/", {"criterion": "c1", "value": "x"}).json()
    assert "page" in client.get("/api/calls/", {"page": "0"}).json()
    assert "status" in client.get("/api/calls/", {"status": "nope"}).json()
    assert client.get("/api/calls/", {"page": "", "q": ""}).status_code == 200


def test_keys_and_strangers_are_refused(calls, client):
    _, key = new_key("ccaas", all_sources=True)
    assert key_client(key).get("/api/calls/").status_code == 403
    assert APIClient().get("/api/calls/").status_code in (401, 403)
