from __future__ import annotations

from typing import Any


class InvalidInputError(Exception):
    """Input refused before anything was written.

    `errors` maps each bad field to its message, or, for a list field, to a
    dict of {position: message}; the API returns it as the 400 body and the
    review form shows each message at its field.
    """

    def __init__(self, errors: dict[str, Any]) -> None:
        super().__init__(errors)
        self.errors = errors


class ConflictError(Exception):
    """The request is valid but the stored state does not allow it now (the API answers 409 with the message).

    Every app subclasses it for its own conflicts, so the API's error mapping needs no import of them.
    `fields` travel beside the message in the 409's body (e.g. who holds a claim, and until when).
    """

    def __init__(self, message: str = "", **fields: Any) -> None:
        super().__init__(message)
        self.fields = fields

    def body(self, request: Any) -> dict[str, Any]:
        """The 409's body; a conflict that links to a resource builds its URL from the request."""
        return {"detail": str(self), **self.fields}


class TooLargeError(Exception):
    """The input is over a size limit (the API answers 413, not 400, with the message)."""
