"""The login, single sign-on and password-reset pages. A reset is offered only where e-mail is configured
(settings.QA_PASSWORD_RESET: EMAIL_URL or EMAIL_HOST): otherwise its pages answer 404 and the login
page says whom to ask, instead of a form that sends nothing. Single sign-on's two pages (access.sso) answer
404 unless it is configured (settings.QA_SSO); the password login stays either way."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.urls import path
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from access import public


def password_reset_available() -> bool:
    return bool(settings.QA_PASSWORD_RESET)


def _when_available(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def gated(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not password_reset_available():
            raise Http404("No password reset: this installation sends no e-mail.")
        return view(request, *args, **kwargs)

    return gated


def _when_sso(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def gated(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not settings.QA_SSO:
            raise Http404("No single sign-on: this installation has no identity provider configured.")
        return view(request, *args, **kwargs)

    return gated


class LoginView(auth_views.LoginView):
    def get_context_data(self, **kwargs):
        return {
            **super().get_context_data(**kwargs),
            "password_reset_available": password_reset_available(),
            "sso_available": settings.QA_SSO,
            "sso_provider": settings.QA_OIDC_PROVIDER_NAME,
        }


class SsoCallbackView(OIDCAuthenticationCallbackView):
    """A refused login goes back to the login page, where access.sso's message says why."""

    @property
    def failure_url(self) -> str:
        return resolve_url(settings.LOGIN_URL)


# Before django.contrib.auth.urls in config/urls.py, under the same names, so these answer.
urlpatterns = [
    path("login/", public(LoginView.as_view()), name="login"),
    path("password_reset/", _when_available(auth_views.PasswordResetView.as_view()), name="password_reset"),
    path(
        "password_reset/done/", _when_available(auth_views.PasswordResetDoneView.as_view()), name="password_reset_done"
    ),
    path(
        "reset/<uidb64>/<token>/",
        _when_available(auth_views.PasswordResetConfirmView.as_view()),
        name="password_reset_confirm",
    ),
    path("reset/done/", _when_available(auth_views.PasswordResetCompleteView.as_view()), name="password_reset_complete"),
]

# Under /oidc/ (config/urls.py), named as mozilla-django-oidc reverses them. The request view keeps a `next`
# only when it is on this site (url_has_allowed_host_and_scheme): no open redirect after login.
sso_urlpatterns = [
    path(
        "authenticate/",
        public(_when_sso(OIDCAuthenticationRequestView.as_view())),
        name="oidc_authentication_init",
    ),
    path("callback/", public(_when_sso(SsoCallbackView.as_view())), name="oidc_authentication_callback"),
]
