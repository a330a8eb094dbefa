"""The OpenAPI schema, its docs served offline, and schemathesis against the live schema."""

from __future__ import annotations

import re

import pytest
import schemathesis
from django.contrib.staticfiles import finders
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.test import APIClient

from qa.api.throttling import ApiKeyRateThrottle
from tests.api.conftest import new_key
from tests.factories import judged_recording, published_rubric


@pytest.mark.django_db
def test_the_schema_is_openapi_3_and_public():
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert {"/api/recordings/", "/api/recordings/{id}/", "/recordings/{id}/review", "/api/rubrics/{slug}/"} <= set(
        schema["paths"]
    )
    assert schema["components"]["securitySchemes"]["ApiKeyAuth"]["name"] == "Authorization"


@pytest.mark.django_db
def test_the_docs_load_their_assets_from_the_app_not_a_cdn():
    response = APIClient().get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert any("swagger-ui" in asset for asset in assets)
    assert not [asset for asset in assets if asset.startswith(("http://", "https://", "//"))]
    for asset in assets:
        if asset.startswith("/static/"):
            assert finders.find(asset.removeprefix("/static/")), asset
    # The start-up script is a file of its own (no inline script under the Content-Security-Policy).
    assert "/api/schema/" in APIClient().get("/api/docs/?script=").content.decode()


# --- schemathesis ---------------------------------------------------------------


# Loaded when the module is collected (Django is set up by then): schemathesis's
# fixture-based loader does not work with this pytest yet.
schema = (
    schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())
    # The same view as /api/recordings/{id}/review/; outside /api/, a malformed id
    # gets the site's HTML 404, which is not the API's to change.
    .exclude(path="/recordings/{id}/review")
)
CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_headers_conformance,
    schemathesis.checks.response_schema_conformance,
    schemathesis.checks.unsupported_method,
    schemathesis.checks.ignored_auth,
]


@pytest.fixture
def _inside_the_test_transaction(db):
    """Run the WSGI app inside the test's transaction, as Django's test client does:
    closing "old" connections at the end of a request would end that transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def review_key_header(_inside_the_test_transaction, monkeypatch) -> dict[str, str]:
    # Hypothesis sends hundreds of requests with one key: don't let the throttle answer them.
    monkeypatch.setattr(ApiKeyRateThrottle, "rate", "1000000/min", raising=False)
    published_rubric(slug="support")
    judged_recording()
    _api_key, key = new_key("schemathesis", can_review=True)
    return {"Authorization": f"Api-Key {key}"}


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_schema(case, review_key_header, django_capture_on_commit_callbacks):
    """No 5xx and every response matches the schema, for generated valid and invalid requests."""
    with django_capture_on_commit_callbacks():  # never publish a judgment to a worker
        case.call_and_validate(headers=review_key_header, checks=CHECKS)
