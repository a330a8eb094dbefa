"""The login and password-reset pages. A reset is offered only where e-mail is configured
(settings.QA_PASSWORD_RESET: EMAIL_URL or EMAIL_HOST): otherwise its pages answer 404 and the login
page says whom to ask, instead of a form that sends nothing."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import path

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


class LoginView(auth_views.LoginView):
    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "password_reset_available": password_reset_available()}


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
