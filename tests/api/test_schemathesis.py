"""schemathesis with all its checks (`st run --checks all`) over every operation of the API's own
schema, as each role with API access: an external system's key, and the sessions of a supervisor and
a rubric owner. In-process (the WSGI app, inside the test's transaction on PostgreSQL), derandomized,
with a bounded number of examples per operation.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, connections
from django.middleware.csrf import CSRF_SESSION_KEY
from django.test import Client
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events, from_schema
from schemathesis.transport.wsgi import WSGITransport

from core.api.throttling import ApiKeyRateThrottle
from tests.api.conftest import new_key
from tests.factories import UserFactory, judged_recording, published_rubric

SEED = 11
MAX_EXAMPLES = 2  # per operation and phase, to keep the module near a minute on 2 cores
CSRF_SECRET = "c" * 32
# What `positive_data_acceptance` takes as accepting a valid request (its defaults), plus 400 on the
# operations that answer 400, naming the field, to rules an OpenAPI schema cannot state: a rubric,
# version or judge that must exist; dates from 1900 to 2999; one of transcript, turns or audio; a
# reviewer named when a key posts a review; a reject that says what was wrong; each criterion of the
# rubric once in a calibration entry. Every other operation must accept every valid request.
ACCEPTED = ["2xx", "3xx", "400", "401", "403", "404", "409", "429", "5xx"]
BUSINESS_RULES = [
    "POST /api/recordings/",
    "POST /api/recordings/{id}/review/",
    "POST /recordings/{id}/review",
    "POST /api/experiments/",
    "POST /api/calibrations/{id}/entries/",
    # A well-formed cursor ahead of the database (from another one) is refused by what the database holds.
    "GET /api/export/scores/",
    "GET /api/export/reviews/",
    "GET /api/export/disputes/",
    "GET /api/export/calibration/",
    "GET /api/reports/deviation/",
    "GET /api/reports/evidence/",
    "GET /api/reports/versions/",
    "GET /api/scorecards/",
    # A webhook's URL must be allowed by QA_WEBHOOK_ALLOWED_HOSTS (empty in the tests: every URL a 400).
    "POST /api/webhooks/",
    "PATCH /api/webhooks/{id}/",
    # A coaching session needs an agent with judged calls on a rubric the person may coach, a follow-up after today.
    "POST /api/coaching/",
]
PER_ITEM_ANSWERS = "POST /api/recordings/batch/"
# `negative_data_rejection`'s default statuses for refusing a request.
REJECTED = ["400", "401", "403", "404", "405", "406", "409", "415", "422", "428", "429", "5xx"]


@dataclass
class Run:
    failures: list[str] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)  # (operation, status) -> responses

    def operations(self) -> set[str]:
        return {operation for operation, _status in self.statuses}

    def succeeded(self, operation: str) -> bool:
        return any(200 <= status < 300 for (label, status) in self.statuses if label == operation)


@pytest.fixture
def wsgi_app_in_the_test_transaction(db):
    """The WSGI app, answering from schemathesis's worker threads on the test's own connection (as
    Django's test client does in one thread), so the data is the test's and is rolled back after it."""
    shared = connections["default"]
    shared.inc_thread_sharing()
    # Closing "old" connections at the end of a request would end the test's transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    application = get_wsgi_application()

    def app(environ, start_response):
        connections["default"] = shared
        return application(environ, start_response)

    yield app
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
    shared.dec_thread_sharing()


@pytest.fixture(autouse=True)
def _probes_without_a_session_reach_the_app(monkeypatch):
    """schemathesis 4.32's `ignored_auth` probes drop the requests session but keep its socket
    options, which its in-process WSGI transport passes on to Werkzeug (a TypeError); over HTTP
    they would simply apply. Drop them there too."""
    send = WSGITransport.send

    def send_without_socket_options(self, case, *, session=None, **kwargs):
        if session is None:
            for name in ("max_redirects", "verify", "cert", "proxies"):
                kwargs.pop(name, None)
        return send(self, case, session=session, **kwargs)

    monkeypatch.setattr(WSGITransport, "send", send_without_socket_options)


def credentials(role: str, settings) -> tuple[dict, dict]:
    """schemathesis's `[auth.openapi]` for the role's security scheme, and extra headers."""
    if role == "key":
        # For all sources: it reads the fixtures' recordings and posts under any source it generates.
        _api_key, key = new_key("schemathesis", can_review=True, can_run_experiments=True, all_sources=True)
        return {"ApiKeyAuth": {"api_key": f"Api-Key {key}"}}, {}
    # A browser's session: the CSRF secret kept in the session and sent back in the header, as the
    # pages' forms do (the API checks CSRF on a session's POST).
    settings.CSRF_USE_SESSIONS = True
    client = Client()
    client.force_login(UserFactory(groups=["Supervisors" if role == "supervisor" else "Rubric owners"]))
    session = client.session
    session[CSRF_SESSION_KEY] = CSRF_SECRET
    session.save()
    return {"cookieAuth": {"api_key": client.cookies["sessionid"].value}}, {"X-CSRFToken": CSRF_SECRET}


def run_schemathesis(app, *, role: str, settings) -> tuple[Run, int]:
    auth, headers = credentials(role, settings)
    config = SchemathesisConfig.from_dict(
        {
            "seed": SEED,
            "workers": 1,
            "headers": headers,
            "auth": {"openapi": auth},
            # Every phase of `st run` for the key. For a person, the coverage phase (each parameter's
            # boundaries and wrong types, undeclared methods: input handling, the same for every
            # caller) runs on what only people may call, the calibrations, and the stateful phase
            # (chains of calls through the links schemathesis infers) not again.
            "phases": {"stateful": {"enabled": role == "key"}},
            "operations": [
                {"include-name": BUSINESS_RULES, "checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}}},
                # The batch answers 200 with a 400 per bad item (the others stored), by design (#18);
                # tests/api/test_batch.py holds each item's and the whole body's refusals.
                {
                    "include-name": [PER_ITEM_ANSWERS],
                    "checks": {"negative_data_rejection": {"expected-statuses": ["200", *REJECTED]}},
                },
                *(
                    []
                    if role == "key"
                    else [{"exclude-path-regex": "^/api/calibrations/", "phases": {"coverage": {"enabled": False}}}]
                ),
            ],
            "generation": {
                "max-examples": MAX_EXAMPLES,
                "deterministic": True,
                "database": "none",
                # A person's session would be overridden by a generated `Authorization: Api-Key`.
                "with-security-parameters": role == "key",
            },
        }
    )
    config.projects.override.checks.update(included_check_names=["all"])  # --checks all
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", app, config=config)
    if role != "key":
        # Ingest is for systems (a person's session gets a 403 however the body varies); its
        # hundreds of generated bodies run once, with the key.
        schema = schema.exclude(method="POST", path="/api/recordings/")
    operations = sum(1 for _operation in schema.get_all_operations())
    run = Run()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for case_id, checks in event.recorder.checks.items():
                for check in checks:
                    if check.failure_info is not None:
                        failure = check.failure_info.failure
                        run.failures.append(f"{event.label}: {check.name}: {failure.title}\n{failure.message}\n"
                                            f"{check.failure_info.code_sample}")
            for interaction in event.recorder.interactions.values():
                # Run-wide probes (label None) are not an operation's.
                if event.label is not None and interaction.response is not None:
                    run.statuses[event.label, interaction.response.status_code] += 1
        elif isinstance(event, events.NonFatalError):
            run.failures.append(f"{event.label}: error: {event.info.message}")
        elif isinstance(event, events.FatalError):
            raise event.exception
        elif isinstance(event, events.EngineFinished):
            run.failures.extend(f"{failure.title}: {failure.message}" for failure in event.failures)
    return run, operations


# An operation each role must really get a 2xx from: proof that its credentials work.
ALLOWED = {"key": "POST /api/recordings/{id}/rejudge/", "supervisor": "GET /api/recordings/", "rubric owner": "GET /api/rubrics/"}


@pytest.mark.parametrize("role", ["key", "supervisor", "rubric owner"])
def test_every_operation_passes_all_checks(role, wsgi_app_in_the_test_transaction, settings, monkeypatch):
    # Hypothesis sends hundreds of requests with one key: don't let the throttle answer them.
    monkeypatch.setattr(ApiKeyRateThrottle, "rate", "1000000/min", raising=False)
    published_rubric(slug="support")
    judged_recording()

    run, operations = run_schemathesis(wsgi_app_in_the_test_transaction, role=role, settings=settings)

    assert not run.failures, "\n\n".join(run.failures)
    assert operations >= (20 if role == "key" else 19)
    assert len(run.operations()) == operations  # every operation was called
    assert run.succeeded(ALLOWED[role]), sorted(run.statuses.items())
