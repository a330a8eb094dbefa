from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.throttling import SimpleRateThrottle

from qa.models import ApiKey

if TYPE_CHECKING:  # DRF imports the default permission and throttle classes while loading rest_framework.views
    from rest_framework.request import Request
    from rest_framework.views import APIView


class ApiKeyRateThrottle(SimpleRateThrottle):
    """One budget per key (per user for sessions), at the rate QA_API_THROTTLE_RATE.

    Counts live in Django's default cache: per process with the default
    local-memory cache, shared by all workers once CACHES points at Redis.
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
