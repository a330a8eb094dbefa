from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import redis
from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from access.models import ApiKey
from core.rate_limit import rate_try_take

if TYPE_CHECKING:  # DRF imports the default permission and throttle classes while loading rest_framework.views
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)


class ApiKeyRateThrottle(SimpleRateThrottle):
    """One budget per key (per user for sessions), at the rate QA_API_THROTTLE_RATE.

    With Redis configured, the budget is a bucket in Redis checked and taken in one
    script (`core.rate_limit`), so every process shares it and concurrent requests
    cannot slip past it. With Redis unreachable the API keeps answering: the throttle
    lets requests through and logs a warning. Without Redis (the embedded default,
    one process) it counts in the local cache.
    """

    scope = "api_key"

    def get_cache_key(self, request: Request, view: APIView) -> str:
        if isinstance(request.auth, ApiKey):
            ident = f"key-{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: Request, view: APIView) -> bool:
        if not settings.QA_REDIS_URL:
            return super().allow_request(request, view)
        if self.rate is None or (key := self.get_cache_key(request, view)) is None:
            return True
        try:
            self.wait_seconds = rate_try_take(
                key=f"{settings.QA_API_THROTTLE_PREFIX}:{key}", limit=self.num_requests, window_seconds=self.duration
            )
        except redis.RedisError:
            # Failing closed would turn a cache outage into an API outage, ingest included.
            logger.warning("Redis is unreachable: the API throttle lets %s through.", key, exc_info=True)
            return True
        return self.wait_seconds == 0

    def wait(self) -> float | None:
        if not settings.QA_REDIS_URL:
            return super().wait()
        return self.wait_seconds
