"""Single sign-on: OpenID Connect's Authorization Code flow (mozilla-django-oidc), and the claims that give a
person their workspace, role and teams (README, "Single sign-on").

The library checks the state, the nonce, PKCE and the ID token's signature (RS256 against the provider's
JWKS) and its expiry; `SsoBackend` adds what it leaves out: the token's issuer and audience, and that the
userinfo answer is about the token's subject. A person is the provider's (issuer, subject), never an e-mail
address or a username, so an account at the provider cannot take over a local account that happens to
share one. The claims are read again at every login, so the provider stays the source of a person's role:
a role changed or withdrawn there takes effect at their next login.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import jwt
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from access import selectors, services
from access.sso_claims import SsoRefused, claims_read

log = logging.getLogger(__name__)


class SsoBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend, keyed by (issuer, subject), mapping the claims at every login."""

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        # The library checks the signature, the expiry and the nonce, but neither the issuer nor the
        # audience: a token the provider signed for another of its clients must not log in here. It checks
        # the algorithm only after looking for the token's key, which a token signed with the client
        # secret (HS256) does not name: refused here first, as the forgery it would allow.
        if jwt.get_unverified_header(token).get("alg") != self.OIDC_RP_SIGN_ALGO:
            raise SuspiciousOperation(f"The ID token is not signed with {self.OIDC_RP_SIGN_ALGO}.")
        payload = super().verify_token(token, **kwargs)
        audience = payload.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if payload.get("iss") != settings.OIDC_OP_ISSUER or self.OIDC_RP_CLIENT_ID not in audiences:
            raise SuspiciousOperation("The ID token was issued by another provider or for another client.")
        return payload

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> dict[str, Any]:
        # Providers put the role and workspace in the ID token (Entra ID, Keycloak's mappers) or in the
        # userinfo answer: both are read, the userinfo's winning, once it is known to be about the same person.
        userinfo = super().get_userinfo(access_token, id_token, payload)
        if userinfo.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("The userinfo answer is about another subject than the ID token.")
        return {**payload, **userinfo}

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        try:
            claims_read(claims)
        except SsoRefused as refusal:
            log.warning("Single sign-on refused for subject %r: %s", claims.get("sub"), refusal)
            messages.error(self.request, str(refusal))
            return False
        return True

    def get_user(self, user_id):
        # The library's get_user skips ModelBackend's is_active check: a person deactivated in Veredicto
        # would keep the session they had. Django's own rule instead: their next request is anonymous.
        user = super().get_user(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None

    def filter_users_by_claims(self, claims: dict[str, Any]):
        return selectors.sso_users(issuer=settings.OIDC_OP_ISSUER, subject=str(claims.get("sub", "")))

    def create_user(self, claims: dict[str, Any]):
        return services.sso_user_sync(issuer=settings.OIDC_OP_ISSUER, claims=claims_read(claims))

    def update_user(self, user, claims: dict[str, Any]):
        if not user.is_active:  # deactivated in Veredicto: the callback refuses them, and nothing is synced
            messages.error(self.request, _("Your Veredicto account is deactivated: ask an administrator."))
            return user
        return services.sso_user_sync(issuer=settings.OIDC_OP_ISSUER, claims=claims_read(claims), user=user)


def sso_callback(request: HttpRequest, credentials: Mapping[str, Any] | None = None) -> bool:
    """For django-axes (AXES_WHITELIST_CALLABLE): the provider's callback is no password guess. Passwords are
    typed, and throttled, at the provider; a refused callback (claims, an expired state) must not count
    towards locking out everyone behind the same address."""
    return request.path == reverse("oidc_authentication_callback")
