from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.test import APIClient

from access.models import default_workspace_id
from core.api.throttling import ApiKeyRateThrottle
from access.models import ApiKey
from tests.api.conftest import key_client, new_key
from tests.factories import UserFactory

LIST = "/api/recordings/"


@pytest.mark.django_db
def test_no_credentials_is_a_401_asking_for_a_key():
    response = APIClient().get(LIST)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Api-Key"
    assert "detail" in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "header",
    ["Api-Key nope", "Api-Key", "Api-Key a b", "Api-Key 12345678.wrong-secret", "Api-Key é"],
)
def test_a_wrong_key_is_a_401(api_key, header):
    response = APIClient().get(LIST, HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert response.json()["detail"]


@pytest.mark.django_db
def test_the_secret_part_is_checked_not_only_the_prefix(api_key):
    stored, key = api_key
    response = key_client(f"{stored.prefix}.{'x' * 43}").get(LIST)
    assert response.status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize(
    "fields", [{"revoked_at": timezone.now()}, {"expires_at": timezone.now() - timedelta(seconds=1)}]
)
def test_revoked_or_expired_keys_are_a_401(api_key, fields):
    stored, key = api_key
    ApiKey.objects.filter(pk=stored.pk).update(**fields)
    response = key_client(key).get(LIST)
    assert response.status_code == 401
    assert "revoked or has expired" in response.json()["detail"]


@pytest.mark.django_db
def test_a_valid_key_reads_and_its_use_is_noted_at_most_once_a_minute(api, api_key):
    stored, _key = api_key
    ApiKey.objects.filter(pk=stored.pk).update(last_used_at=None)
    assert api.get(LIST).status_code == 200
    first_use = ApiKey.objects.get(pk=stored.pk).last_used_at
    assert first_use is not None
    assert api.get(LIST).status_code == 200
    assert ApiKey.objects.get(pk=stored.pk).last_used_at == first_use


@pytest.mark.django_db
def test_people_use_the_api_with_their_session_as_their_groups_allow():
    client = APIClient()
    client.force_login(UserFactory(groups=["Supervisors"]))
    assert client.get(LIST).status_code == 200
    for user in (UserFactory(is_staff=True), UserFactory(is_staff=False)):  # staff status alone opens nothing
        client.force_login(user)
        assert client.get(LIST).status_code == 403


@pytest.mark.django_db
def test_the_browsable_api_renders_for_a_supervisor():
    client = APIClient()
    client.force_login(UserFactory(groups=["Supervisors"]))
    response = client.get(LIST, HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert b"<html" in response.content


@pytest.mark.django_db
def test_throttled_per_key_with_retry_after(api, api_key, monkeypatch):
    monkeypatch.setattr(ApiKeyRateThrottle, "rate", "2/min", raising=False)
    assert api.get(LIST).status_code == 200
    assert api.get(LIST).status_code == 200
    response = api.get(LIST)
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert response.json()["detail"]
    # Another key has its own budget.
    _other, other_key = new_key("speech-export")
    assert key_client(other_key).get(LIST).status_code == 200


@pytest.mark.django_db
def test_create_api_key_prints_a_working_key_once(capsys):
    call_command("create_api_key", "dialer", "--can-review")
    key = capsys.readouterr().out.strip()
    stored = ApiKey.objects.get(name="dialer")
    assert stored.can_review
    assert stored.key_hash == ApiKey.hash(key) and key not in stored.key_hash
    assert key_client(key).get(LIST).status_code == 200


@pytest.mark.django_db
def test_create_api_key_without_review_rights_and_with_an_expiry(capsys):
    call_command("create_api_key", "dialer", "--expires-at", "2030-01-01T00:00:00")
    stored = ApiKey.objects.get(name="dialer")
    assert not stored.can_review
    assert stored.expires_at.year == 2030


@pytest.mark.django_db
def test_admin_shows_a_new_key_once_and_revokes(admin_client):
    response = admin_client.post(
        reverse("admin:access_apikey_add"),
        {"name": "crm", "workspace": default_workspace_id(), "can_review": "on", "expires_at_0": "", "expires_at_1": ""},
    )
    # Shown once on the answer itself: no redirect, nothing in a cookie, the session or a message.
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    stored = ApiKey.objects.get(name="crm")
    page = response.content.decode()
    key = page.split("<code>")[1].split("</code>")[0]
    assert ApiKey.hash(key) == stored.key_hash
    assert not any(key in morsel.value for morsel in response.cookies.values())
    assert not any(key in str(message) for message in response.wsgi_request._messages)
    assert key not in str(dict(admin_client.session))
    assert key not in admin_client.get(reverse("admin:access_apikey_changelist")).content.decode()
    assert stored.can_review

    change_page = admin_client.get(reverse("admin:access_apikey_change", args=[stored.pk]))
    assert key not in change_page.content.decode()

    admin_client.post(reverse("admin:access_apikey_changelist"), {"action": "revoke", "_selected_action": [stored.pk]})
    stored.refresh_from_db()
    assert stored.revoked_at is not None
    assert key_client(key).get(LIST).status_code == 401


@pytest.mark.django_db
@pytest.mark.parametrize(
    "arguments", [["taken"], ["new", "--expires-at", "next week"], ["new", "--expires-at", "2030-13-01T00:00"]]
)
def test_create_api_key_refuses_a_taken_name_or_a_bad_expiry(arguments):
    new_key("taken")
    with pytest.raises(CommandError):
        call_command("create_api_key", *arguments)
    assert not ApiKey.objects.filter(name="new").exists()


def test_the_per_key_limit_holds_under_concurrent_requests(monkeypatch, settings):
    """Eight threads at once, as gunicorn's workers: exactly the limit gets through (the count is
    checked and taken in one Redis script, never read and written apart)."""
    # A day's budget: the bucket refills continuously (GCRA), one request per 0.6 s at 100/min, so a
    # slow run under load would rightly let a 101st through; at 100/day none refills during the test.
    monkeypatch.setattr(ApiKeyRateThrottle, "rate", "100/day", raising=False)
    api_key = ApiKey(pk=random.randrange(10**12), name="concurrent")  # only its id keys the budget

    def one_request(_number: int) -> bool:
        request = Request(RequestFactory().get("/api/recordings/"))
        request.auth = api_key
        return ApiKeyRateThrottle().allow_request(request, None)

    with ThreadPoolExecutor(8) as pool:
        allowed = list(pool.map(one_request, range(400)))

    assert sum(allowed) == 100
