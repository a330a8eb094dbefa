"""Running a curl command from the docs, as written, against the test's live server."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

DOCUMENTED_SERVER = "http://localhost:8000"


def curl_run(command: str, *, server: str, key: str, cwd: Path | None = None, timeout: int = 30) -> tuple[str, str]:
    """Run `command` with the documented server replaced by `server` and `$KEY` set to `key`;
    return the response body and the HTTP status code curl reports."""
    result = subprocess.run(
        command.replace(DOCUMENTED_SERVER, server) + " -sS -w '\\n%{http_code}'",
        shell=True,
        cwd=cwd,
        env={**os.environ, "KEY": key, "NO_PROXY": "*"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    body, status = result.stdout.rsplit("\n", 1)
    return body, status
