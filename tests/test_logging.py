"""What the server's log says about a refused request: one line, no traceback. A 403 is the access rules
working (a supervisor opening a lead's page), not an error; it printed its traceback twice, once through
Django's own console handler and once through the root's."""

from __future__ import annotations

import io
import logging

import pytest

from tests.factories import UserFactory


@pytest.fixture
def console():
    """What the log's stream handlers write (the root's and Django's own), into one buffer: the handlers
    are the configured ones, only their stream is this test's (pytest's capture holds the original)."""
    buffer = io.StringIO()
    loggers = [logging.getLogger()] + [
        logger for logger in logging.Logger.manager.loggerDict.values() if isinstance(logger, logging.Logger)
    ]
    handlers = {h for logger in loggers for h in logger.handlers if type(h) is logging.StreamHandler}
    assert handlers, "no stream handler configured"
    before = {handler: handler.setStream(buffer) for handler in handlers}
    yield buffer
    for handler, stream in before.items():
        handler.setStream(stream)


@pytest.mark.django_db
def test_a_403_logs_one_line_without_a_traceback(client, settings, console):
    settings.DEBUG = True  # as `runserver` and the demo run: Django's console handler prints too
    client.force_login(UserFactory(groups=["Supervisors"]))
    assert client.get("/calls/reviewers/").status_code == 403
    err = console.getvalue()
    assert err.count("Forbidden (Permission denied): /calls/reviewers/") == 1, err
    assert "Traceback" not in err, err


@pytest.mark.django_db
def test_a_server_error_still_logs_its_traceback(client, settings, console):
    """The filter is for the expected refusals only: an exception keeps its traceback, printed once."""
    from tests import test_logging as here

    settings.DEBUG = True
    settings.ROOT_URLCONF = here.__name__
    settings.DEBUG_PROPAGATE_EXCEPTIONS = False
    client.raise_request_exception = False
    assert client.get("/boom/").status_code == 500
    err = console.getvalue()
    assert err.count("Traceback") == 1 and "RuntimeError: boom" in err, err


def _boom(request):
    raise RuntimeError("boom")


from django.urls import path  # noqa: E402

from config.urls import urlpatterns as _site  # noqa: E402

urlpatterns = [path("boom/", _boom), *_site]  # the site's own, so its error page renders


def test_tasks_run_in_process_print_nothing(tmp_path):
    """The embedded first run (no broker: tasks in the process) prints no line per task and no warning about
    a broker host it does not use; the demo's progress is all that shows."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {key: value for key, value in os.environ.items()
           if key not in ("CELERY_BROKER_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "LOG_LEVEL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings.local'; django.setup()\n"
        "from config.celery import app\n"
        "@app.task(name='tests.noop')\n"
        "def noop(): return 'done'\n"
        "print(noop.delay().get())\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parent.parent, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    assert result.stderr == ""
