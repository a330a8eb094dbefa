"""The API's error shapes in the schema: the responses views declare, and the
errors every operation can answer with (added by a hook).

The components `Error` and `ValidationError` are always in the schema, so a layer
that cannot import this module (rubrics) refers to them by `$ref`.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

ERROR_COMPONENT = "Error"
ERROR_SCHEMA = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
VALIDATION_ERROR_COMPONENT = "ValidationError"
VALIDATION_ERROR_SCHEMA = {
    "type": "object",
    "description": "One message per bad field; a list or object field maps each bad position or sub-field "
    "to its own error in the same shape.",
    "additionalProperties": {"oneOf": [{"type": "string"}, {"type": "object"}]},
    "example": {
        "transcript": "The transcript has no speaker turns.",
        "turns": {"2": "Each turn needs a non-empty text."},
    },
}
COMMON_ERRORS = {
    "401": "No API key, or a wrong, revoked or expired one.",
    "403": "Authenticated, but not allowed to do this.",
    "429": "Too many requests for this key; retry after the Retry-After header's seconds.",
}
# The schema and its docs are public: they answer neither 401 nor 403.
PUBLIC_PATHS = ("/api/schema/", "/api/docs/")


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()


def component_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


BAD_REQUEST = OpenApiResponse(
    component_ref(VALIDATION_ERROR_COMPONENT), description=_("Bad input, one message per field.")
)
NOT_FOUND = OpenApiResponse(ErrorSerializer, description=_("No such object."))
NO_PAGE = OpenApiResponse(ErrorSerializer, description=_("No such page."))
TOO_LARGE = OpenApiResponse(
    ErrorSerializer, description=_("The body is larger than QA_MAX_BODY_BYTES, or the audio than QA_AUDIO_MAX_BYTES.")
)


def add_common_errors(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Document 401/403/429 on every operation, so clients (and schemathesis) can rely on them.

    A hook rather than per-view declarations, so the reports' endpoints get them too.
    """
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    # Views that declare ErrorSerializer already produced this same component.
    schemas.setdefault(ERROR_COMPONENT, ERROR_SCHEMA)
    schemas.setdefault(VALIDATION_ERROR_COMPONENT, VALIDATION_ERROR_SCHEMA)
    reference = component_ref(ERROR_COMPONENT)
    for path, operations in result.get("paths", {}).items():
        if path in PUBLIC_PATHS:
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for code, description in COMMON_ERRORS.items():
                responses.setdefault(
                    code, {"description": description, "content": {"application/json": {"schema": reference}}}
                )
    return result


def allow_empty_optional_query_parameters(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """Say that an optional query parameter may be sent empty (`?team=`, `?date_from=`): the
    serializers and forms that read them take an empty value as not given, so it filters nothing
    rather than being a 400 (a date's format, say, does not apply to it)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query" and not parameter.get("required"):
                    parameter["allowEmptyValue"] = True
    return result
