"""Cross-cutting answers of the site."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _


class NoStoreWhenPrivate:
    """`Cache-Control: no-store` on every answer to a logged-in user or an API key: the pages and
    exports behind a login carry transcripts (the review page, the queue, the reports' drill-downs
    and CSVs, the scorecards' CSV, the API's recordings), which no browser cache or proxy may keep
    after the user leaves. Static files never get here (WhiteNoise answers them first)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if (user is not None and user.is_authenticated) or "HTTP_AUTHORIZATION" in request.META:
            patch_cache_control(response, private=True, no_store=True)
        return response


class NulInAdminQueryRefused:
    """400 for an admin request whose query string holds a NUL character (`?team__exact=%00`): the
    admin's list filters hand a parameter's value to the database, and PostgreSQL refuses NUL in text
    (psycopg's DataError, a 500). One check for every changelist, and every admin page, present and
    to come, rather than one per filter: no admin parameter has a use for NUL."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(_admin_prefix()) and any(
            "\x00" in key or any("\x00" in value for value in values) for key, values in request.GET.lists()
        ):
            return HttpResponseBadRequest(
                _("A query parameter holds a NUL character, which no filter or search accepts."),
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)


def _admin_prefix() -> str:
    from django.urls import reverse

    return reverse("admin:index")
