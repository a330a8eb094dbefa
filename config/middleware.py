"""Cross-cutting answers of the site."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control


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
