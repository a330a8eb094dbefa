"""Filters for the server's log."""

from __future__ import annotations

import logging


class ExpectedRefusal(logging.Filter):
    """A 403 keeps its one line, without the traceback Django attaches (`PermissionDenied`'s): a refusal is
    the access rules working (a supervisor opening a lead's page), and a traceback per refusal buries the
    errors that need one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
