"""`Authorization: Api-Key <prefix>.<secret>` for external systems."""

from __future__ import annotations

import hmac

from django.contrib.auth.models import AnonymousUser
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from access.models import ApiKey
from access.services import api_key_touch

KEYWORD = "Api-Key"


class ApiKeyAuthentication(BaseAuthentication):
    """Authenticates an external system by its key; `request.auth` is the ApiKey.

    The user stays anonymous: a key acts for a system, not for a person, so
    nothing that checks a user's permissions can be satisfied by a key.
    Listed first in the settings, so that a request without credentials gets a
    401 with `WWW-Authenticate: Api-Key` rather than the session's 403.
    """

    def authenticate(self, request: Request) -> tuple[AnonymousUser, ApiKey] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD.lower().encode():
            return None  # not ours: let the session try
        if len(parts) != 2:
            raise AuthenticationFailed(_("Invalid Api-Key header: send 'Authorization: Api-Key <key>'."))
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise AuthenticationFailed(_("Invalid API key.")) from None
        api_key = self._key_for(key)
        api_key_touch(api_key=api_key)
        return AnonymousUser(), api_key

    def authenticate_header(self, request: Request) -> str:
        return KEYWORD

    @staticmethod
    def _key_for(key: str) -> ApiKey:
        prefix, _dot, secret = key.partition(".")
        if len(prefix) != ApiKey.PREFIX_LENGTH or not secret:
            raise AuthenticationFailed(_("Invalid API key."))
        api_key = ApiKey.objects.filter(prefix=prefix).first()
        # Compared in constant time, so response timing tells nothing about the hash.
        if api_key is None or not hmac.compare_digest(api_key.key_hash, ApiKey.hash(key)):
            raise AuthenticationFailed(_("Invalid API key."))
        if not api_key.is_active:
            raise AuthenticationFailed(_("This API key has been revoked or has expired."))
        return api_key


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    """Documents the key header in the OpenAPI schema."""

    target_class = ApiKeyAuthentication
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema) -> dict:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Api-Key <key>`, as printed by `manage.py create_api_key` or shown once in the admin.",
        }
