from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.webhook_receiver import WebhookReceiver

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def receiver(settings):
    """The suite's receiver on loopback, whose address and port the setting allows (as an operator would
    list an internal host's)."""
    settings.QA_WEBHOOK_RETRY_BASE = 0.0  # in-process tests call the next attempt at once
    settings.QA_WEBHOOK_TIMEOUT = 1.0
    with WebhookReceiver() as server:
        settings.QA_WEBHOOK_ALLOWED_HOSTS = [f"127.0.0.1:{server.port}"]
        yield server


def readme_verify():
    """The receiver's check, exactly as the webhooks page shows it."""
    section = (ROOT / "docs/api/webhooks.md").read_text()
    [snippet] = [block for block in re.findall(r"```python\n(.*?)```", section, re.DOTALL) if "def verify(" in block][:1]
    namespace: dict = {}
    exec(compile(snippet, "docs/api/webhooks.md (verify)", "exec"), namespace)
    return namespace["verify"]


def readme_receiver(*, secret: str, handle):
    """The webhooks page's whole receiver (its `Receiver` class), with its `verify`, the secret and a `handle`."""
    section = (ROOT / "docs/api/webhooks.md").read_text()
    [snippet] = [block for block in re.findall(r"```python\n(.*?)```", section, re.DOTALL) if "class Receiver(" in block]
    namespace: dict = {"verify": readme_verify(), "handle": handle, "__name__": "readme"}
    exec(compile(snippet, "docs/api/webhooks.md (receiver)", "exec"), namespace)
    namespace["SECRET"] = secret
    return namespace["Receiver"]
