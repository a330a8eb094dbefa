from __future__ import annotations

import uuid

import pytest
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from access.models import ApiKey
from qa.api.services import api_key_create


@pytest.fixture(autouse=True)
def _fresh_throttle_counts(settings):
    # Throttle counts live in Redis (or the local cache without it), which outlive each test's transaction.
    settings.QA_API_THROTTLE_PREFIX = f"veredicto:test-{uuid.uuid4().hex}:api-throttle"
    cache.clear()
    yield
    cache.clear()


def key_client(key: str) -> APIClient:
    client = APIClient()
    # In English, so tests can read messages (the site's default language is Spanish).
    client.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}", HTTP_ACCEPT_LANGUAGE="en")
    return client


def new_key(name: str, **fields) -> tuple[ApiKey, str]:
    api_key, key = api_key_create(name=name, **fields)
    # Marked as just used, so no request in a test spends a query noting it.
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=timezone.now())
    api_key.refresh_from_db()
    return api_key, key


# The suite's shared keys read recordings the factories make (source "test") as well as their own:
# they are all-sources keys. tests/api/test_key_sources.py holds keys bound to one source.
@pytest.fixture
def api_key(db) -> tuple[ApiKey, str]:
    return new_key("ccaas", all_sources=True)


@pytest.fixture
def api(api_key) -> APIClient:
    """A client sending the `ccaas` key, which may post and read recordings but not review."""
    return key_client(api_key[1])


@pytest.fixture
def review_key(db) -> tuple[ApiKey, str]:
    return new_key("qa-tool", can_review=True, all_sources=True)


@pytest.fixture
def review_api(review_key) -> APIClient:
    return key_client(review_key[1])
