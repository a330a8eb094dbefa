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
