"""A real `celery worker` process on the test broker and the test database, for the tests that need one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The test database as a DATABASE_URL, so the worker writes the rows the test reads."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@contextmanager
def celery_worker(*arguments: str, env: dict[str, str]) -> Iterator[subprocess.Popen]:
    """`celery -A config worker` with `arguments` and `env` over the test settings, in a process group of
    its own; stopped when the block ends (killed if it does not stop within 20 s)."""
    if not settings.CELERY_BROKER_URL or connection.vendor != "postgresql":
        pytest.skip("A real worker needs CELERY_BROKER_URL and the test database on PostgreSQL.")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel=WARNING", *arguments,
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            **env,
        },
        start_new_session=True,
    )
    try:
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def pool_processes(worker: subprocess.Popen) -> list[int]:
    """The pids of a prefork `celery_worker`'s pool processes (its children), which run the tasks."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if parent == worker.pid:
            children.append(int(stat.parent.name))
    return children
