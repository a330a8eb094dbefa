"""Request bodies bounded before anything reads them, whatever the authentication.

Django bounds only the parts of a body it keeps in memory (DATA_UPLOAD_MAX_MEMORY_SIZE, set from
QA_MAX_BODY_BYTES): a multipart file is streamed to a temporary file, whatever its size, and for a
browser session (or anyone with a CSRF cookie) the CSRF check reads the whole body before a view can
look at it. So this middleware refuses, from the Content-Length alone, a body over its view's limit:
QA_AUDIO_MAX_BYTES and a form's room for a multipart post to a view that takes an audio file,
QA_MAX_BODY_BYTES for every other. The WSGI request reads no more than its Content-Length (Django's LimitedStream; no
length, nothing is read), so that header bounds what is read. (Under ASGI the server reads the whole
body before Django sees it: deploy with gunicorn's WSGI workers, as the README does. gunicorn's sync
workers then close the connection on the unread rest.)

It runs in the request's way in, before any view middleware: the CSRF check reads the body in its
`process_view`.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve
from django.utils.translation import gettext as _

from qa.audio import audio_upload_limit

# The views that take an audio file, by URL name: the API's post, the supervisors' upload, the admin's add.
AUDIO_VIEWS = frozenset({"api:recording-list", "review-upload", "admin:qa_recording_add"})


def body_limit(request: HttpRequest) -> int | None:
    """The largest body `request`'s view accepts, in bytes (None: no limit)."""
    try:
        view = resolve(request.path_info, getattr(request, "urlconf", None)).view_name
    except Resolver404:
        view = ""
    if view in AUDIO_VIEWS and request.content_type == "multipart/form-data":
        return audio_upload_limit()
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _content_length(request: HttpRequest) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0  # as Django reads it: an unreadable length is no body


class BodyLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = _content_length(request)
        if length:
            limit = body_limit(request)
            if limit is not None and length > limit:
                return _too_large(request, length, limit)
        return self.get_response(request)


def _too_large(request: HttpRequest, length: int, limit: int) -> HttpResponse:
    message = _("The request body is %(size)s bytes; the limit is %(limit)s bytes.") % {
        "size": length,
        "limit": limit,
    }
    # The API's error shape for the API (and its review alias), a page for the site.
    if request.path_info.startswith(("/api/", "/recordings/")):
        return JsonResponse({"detail": message}, status=413)
    return render(request, "413.html", {"message": message}, status=413)
