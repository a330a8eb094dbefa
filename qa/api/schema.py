"""Schema post-processing: the errors every API operation can answer with."""

from __future__ import annotations

from typing import Any

ERROR_COMPONENT = "Error"
ERROR_SCHEMA = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
COMMON_ERRORS = {
    "401": "No API key, or a wrong, revoked or expired one.",
    "403": "Authenticated, but not allowed to do this.",
    "429": "Too many requests for this key; retry after the Retry-After header's seconds.",
}
# The schema and its docs are public: they answer neither 401 nor 403.
PUBLIC_PATHS = ("/api/schema/", "/api/docs/")


def add_common_errors(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Document 401/403/429 on every operation, so clients (and schemathesis) can rely on them.

    A hook rather than per-view declarations, so the reports' endpoints get them too.
    """
    # Views that declare ErrorSerializer already produced this same component.
    result.setdefault("components", {}).setdefault("schemas", {}).setdefault(ERROR_COMPONENT, ERROR_SCHEMA)
    reference = {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}
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
