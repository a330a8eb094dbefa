"""One error shape across the API.

400: `{field: message}`; a list or object field maps each bad position or
sub-field to its own error in the same shape, e.g.
`{"turns": {"2": "Each turn needs a non-empty text."}}`. Errors that belong to
no field are under `non_field_errors`. Every other error is `{"detail": message}`,
plus `recording` on a 409 for a conflicting resend.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler

from core.errors import ConflictError, InvalidInputError, TooLargeError

ErrorTree = str | dict[str, "ErrorTree"]


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, InvalidInputError):
        return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, TooLargeError):
        return Response({"detail": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    if isinstance(exc, ConflictError):
        return Response(exc.body(context["request"]), status=status.HTTP_409_CONFLICT)
    if isinstance(exc, RequestDataTooBig):
        # Django raises it while DRF reads the body; left alone it becomes a plain-text 400.
        return Response(
            {
                "detail": _("The request body is larger than %(limit)s bytes.")
                % {"limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}
            },
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    response = exception_handler(exc, context)
    if response is not None and isinstance(exc, ValidationError):
        response.data = error_tree(exc.detail, top=True)
    return response


def error_tree(detail: Any, *, top: bool = False) -> ErrorTree:
    """DRF's error detail (lists of messages, nested per item) as one message per field."""
    if isinstance(detail, dict):
        if not top and set(detail) == {api_settings.NON_FIELD_ERRORS_KEY}:
            # e.g. "Expected a list of items": it is the nested field's own error.
            return error_tree(detail[api_settings.NON_FIELD_ERRORS_KEY])
        return {str(key): error_tree(value) for key, value in detail.items()}
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            messages = " ".join(detail)
            return {api_settings.NON_FIELD_ERRORS_KEY: messages} if top else messages
        # A list of nested errors has an empty entry for each valid item.
        return {str(index): error_tree(item) for index, item in enumerate(detail) if item}
    return str(detail)
