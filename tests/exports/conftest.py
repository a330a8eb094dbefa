from __future__ import annotations

import uuid

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _fresh_throttle_counts(settings):
    # Throttle counts live in Redis (or the local cache without it), which outlive each test's transaction.
    settings.QA_API_THROTTLE_PREFIX = f"veredicto:test-{uuid.uuid4().hex}:api-throttle"
    cache.clear()
    yield
    cache.clear()
