"""What each pytest-xdist worker must have of its own, given before the worker starts.

pytest-django gives every worker a test database of its own (`test_<name>_gw0`, ...). Redis is the other
thing the workers would share: a worker's tests start real Celery workers that consume the broker's queues,
and read the LLM quota kept there, so two workers on one database would take each other's tasks. Each
worker gets a Redis database of its own, numbered from WORKER_REDIS_DBS, in the environment its process
starts with, so its settings, the Celery app and every process its tests start read the same one.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

import pytest

# Databases 0-9 are left to whoever runs the suite serially (and to a developer's own services);
# Redis has 16 by default.
WORKER_REDIS_DBS = range(10, 16)
REDIS_SETTINGS = ("CELERY_BROKER_URL", "REDIS_URL")


def redis_url_for_worker(url: str, index: int) -> str:
    """`url` on the Redis database of worker number `index` (0 for gw0)."""
    if index >= len(WORKER_REDIS_DBS):
        raise pytest.UsageError(
            f"At most {len(WORKER_REDIS_DBS)} xdist workers: each needs a Redis database of its own "
            f"({WORKER_REDIS_DBS.start}-{WORKER_REDIS_DBS.stop - 1}); ask for fewer with -n."
        )
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        raise pytest.UsageError(f"A Redis URL is needed to give each xdist worker its own database, not {url!r}.")
    return urlunsplit(parts._replace(path=f"/{WORKER_REDIS_DBS[index]}"))


def worker_environment_send(gateway) -> None:
    """Set the Redis URLs of worker `gateway` (gw0, gw1, ...) in its process's environment, before pytest
    starts there."""
    index = int(gateway.id.removeprefix("gw"))
    environment = {name: redis_url_for_worker(url, index) for name in REDIS_SETTINGS if (url := os.environ.get(name))}
    channel = gateway.remote_exec("import os; os.environ.update(channel.receive())")
    channel.send(environment)
    channel.waitclose()
