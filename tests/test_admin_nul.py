"""A NUL in an admin query (issue 46: /admin/qa/recording/?team__exact=%00 answered 500, psycopg's
DataError) is a 400 on every changelist, whatever the parameter: one middleware, not one per filter."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import NoReverseMatch, reverse

from tests.factories import UserFactory, judged_recording

pytestmark = pytest.mark.django_db

NUL_QUERIES = ["team__exact=%00", "q=%00", "%00=1", "o=%00", "p=%00", "team__exact=north%00south", "e=1&q=ok%00"]


@pytest.fixture
def root() -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(UserFactory(username="root", is_superuser=True, is_staff=True))
    return client


def changelists() -> list[str]:
    urls = []
    for model in admin.site._registry:
        try:
            urls.append(reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist"))
        except NoReverseMatch:  # a model registered without a changelist of its own
            continue
    return urls


def test_the_probe_a_nul_in_the_recordings_team_filter_is_a_400(root):
    judged_recording(team="north")
    response = root.get("/admin/qa/recording/?team__exact=%00")
    assert response.status_code == 400
    assert "NUL" in response.content.decode()
    assert root.get("/admin/qa/recording/?team__exact=north").status_code == 200


def test_every_changelist_answers_400_to_a_nul_in_any_parameter(root):
    judged_recording(team="north")
    urls = changelists()
    assert "/admin/qa/recording/" in urls and len(urls) > 10
    answers = {(url, query): root.get(f"{url}?{query}").status_code for url in urls for query in NUL_QUERIES}
    assert {key: status for key, status in answers.items() if status != 400} == {}


def test_the_message_is_in_the_readers_language(root):
    response = root.get("/admin/qa/recording/?q=%00", HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 400
    assert "NUL" in response.content.decode() and "parámetro" in response.content.decode()


def test_outside_the_admin_the_pages_answer_as_before(root):
    """The pages and the API read their own parameters through forms that refuse NUL (a 400 naming the
    field) or ignore them: none of them answers 500."""
    for url in ("/calls/?q=%00", "/api/recordings/?source=%00", "/review/?team=%00"):
        assert root.get(url).status_code < 500, url
