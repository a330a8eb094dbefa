"""Issue 26's smaller production findings: the OpenAPI schema and docs were open to anonymous users,
DRF's browsable API was on, pages and CSVs carrying transcripts had no `Cache-Control: no-store`, and
rubric owners got 403 on the lint API."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.test import Client
from rest_framework.test import APIClient

from tests.api.conftest import key_client, new_key
from tests.factories import UserFactory, judged_recording, published_rubric
from tests.test_deployment import PRODUCTION, ROOT

pytestmark = pytest.mark.django_db

# Nothing listens there: the anonymous requests read no database, and the throttle lets them through.
SERVICES = {"DATABASE_URL": "postgres://127.0.0.1:1/veredicto", "CELERY_BROKER_URL": "redis://127.0.0.1:1/0"}


def production() -> dict:
    """What production answers, in a fresh process with its settings (no database is reached: an
    anonymous request reads none)."""
    code = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
client = Client(HTTP_HOST="127.0.0.1")
page = client.get("/api/recordings/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8", secure=True)
schema = client.get("/api/schema/?format=json", secure=True)
print(json.dumps({
    "docs_public": settings.QA_API_DOCS_PUBLIC,
    "renderers": settings.REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"],
    "browser_gets": [page.status_code, page["Content-Type"]],
    "schema_status": schema.status_code,
}))
"""
    environment = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "DEBUG", "SECRET_KEY"}}
    environment.update({**PRODUCTION, **SERVICES})
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_production_closes_the_docs_and_the_browsable_api():
    closed = production()
    assert closed == {
        "docs_public": False,
        "renderers": ["rest_framework.renderers.JSONRenderer"],
        "browser_gets": [401, "application/json"],  # the browsable API would answer an HTML page
        "schema_status": 401,
    }


def test_development_opens_the_docs(monkeypatch):
    import runpy

    monkeypatch.delenv("QA_API_DOCS_PUBLIC", raising=False)
    assert runpy.run_module("config.settings.local")["QA_API_DOCS_PUBLIC"] is True
    monkeypatch.setenv("QA_API_DOCS_PUBLIC", "false")
    assert runpy.run_module("config.settings.local")["QA_API_DOCS_PUBLIC"] is False


def test_the_browsable_api_still_serves_development():
    person = APIClient()
    person.force_login(UserFactory(groups=["Supervisors"]))
    assert person.get("/api/recordings/", HTTP_ACCEPT="text/html")["Content-Type"].startswith("text/html")


def test_the_schema_and_docs_need_a_login_or_a_key(settings):
    settings.QA_API_DOCS_PUBLIC = False
    anonymous = APIClient()
    assert anonymous.get("/api/schema/?format=json").status_code == 401
    docs = anonymous.get("/api/docs/")
    assert docs.status_code == 302 and docs["Location"] == "/accounts/login/?next=/api/docs/"
    assert anonymous.get("/api/docs/?script=").status_code == 302

    assert key_client(new_key("crm")[1]).get("/api/schema/?format=json").json()["openapi"].startswith("3.")
    person = Client()
    person.force_login(UserFactory(groups=["Supervisors"]))
    assert person.get("/api/schema/?format=json").status_code == 200
    assert person.get("/api/docs/").status_code == 200 and person.get("/api/docs/?script=").status_code == 200

    settings.QA_API_DOCS_PUBLIC = True
    assert anonymous.get("/api/schema/?format=json").status_code == 200 and anonymous.get("/api/docs/").status_code == 200


def test_pages_and_exports_with_transcripts_are_not_stored():
    rubric = published_rubric(slug="care")
    recording = judged_recording(rubric=rubric, source="crm")
    supervisor = Client(HTTP_ACCEPT_LANGUAGE="en")
    supervisor.force_login(UserFactory(groups=["Supervisors"]))
    pages = [
        "/review/",
        f"/review/{recording.pk}/",
        "/reports/deviation/scores/?rubric=care&criterion=c1",
        "/reports/deviation/scores/?rubric=care&criterion=c1&format=csv",
        "/reports/deviation/recordings/?rubric=care",
        "/reports/deviation/recordings/?rubric=care&format=csv",
        "/reports/evidence/scores/?rubric=care",
        "/reports/evidence/scores/?rubric=care&format=csv",
        "/scorecards/?rubric=care&format=csv",
        f"/api/recordings/{recording.pk}/",
        "/api/recordings/",
    ]
    for url in pages:
        response = supervisor.get(url)
        assert response.status_code == 200, url
        assert "no-store" in response.get("Cache-Control", ""), url

    api = key_client(new_key("crm")[1])
    for url in (f"/api/recordings/{recording.pk}/", "/api/recordings/"):
        response = api.get(url)
        assert response.status_code == 200 and "no-store" in response["Cache-Control"], url


def test_rubric_owners_read_the_lint_api_and_supervisors_do_not():
    published_rubric(slug="care")
    owner, supervisor = APIClient(), APIClient()
    owner.force_login(UserFactory(groups=["Rubric owners"]))
    supervisor.force_login(UserFactory(groups=["Supervisors"]))

    answer = owner.get("/api/rubrics/care/lint/")
    assert answer.status_code == 200 and answer.json()["slug"] == "care"
    assert supervisor.get("/api/rubrics/care/lint/").status_code == 403
