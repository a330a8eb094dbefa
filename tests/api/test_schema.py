"""The OpenAPI schema and its docs served offline (schemathesis runs in test_schemathesis.py)."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from rest_framework.test import APIClient

from tests.factories import published_rubric


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
def test_every_operation_is_filed_under_what_it_is_about():
    """The docs group operations by tag; an untagged view falls under a meaningless "api"."""
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    tags = {operation["tags"][0] for path in schema["paths"].values() for operation in path.values()}
    assert tags == {
        "recordings", "reviews", "rubrics", "reports", "scorecards", "calibrations", "experiments", "webhooks", "calls", "export", "coaching",
    }  # fmt: skip


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


@pytest.mark.django_db
def test_the_schema_states_what_the_query_parameters_accept(api):
    """Found by schemathesis: required parameters are not empty, optional ones may be sent empty
    (read as not given: the API answers 200, not 400), page sizes run from 1 to 200."""
    published_rubric(slug="support")
    schema = APIClient().get("/api/schema/?format=json").json()
    parameters = {p["name"]: p for p in schema["paths"]["/api/reports/deviation/"]["get"]["parameters"]}
    assert parameters["rubric"]["required"] and parameters["rubric"]["schema"]["minLength"] == 1
    assert parameters["date_from"]["allowEmptyValue"] and parameters["team"]["schema"]["maxLength"] == 100
    assert parameters["version"]["schema"]["type"] == "integer"
    scorecards = {p["name"]: p for p in schema["paths"]["/api/scorecards/"]["get"]["parameters"]}
    assert scorecards["group"]["schema"]["enum"] == ["agent", "team"]
    pages = {p["name"]: p for p in schema["paths"]["/api/rubrics/"]["get"]["parameters"]}
    assert (pages["page_size"]["schema"]["minimum"], pages["page_size"]["schema"]["maximum"]) == (1, 200)

    assert api.get("/api/reports/deviation/?rubric=support&date_from=&team=&version=").status_code == 200
    assert api.get("/api/recordings/?occurred_before=&page_size=").status_code == 200
    assert api.get("/api/reports/deviation/?rubric=").status_code == 400
