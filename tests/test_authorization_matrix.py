"""The authorization matrix: every URL pattern and every method its view accepts, asked by every kind of
actor, answers the status written in MATRIX, and nothing a foreign actor receives contains the other
workspace's data.

How it works. Two workspaces, `alpha` (the one asked about) and `beta`, each hold a rubric, judged calls
in review (alpha's in teams north and south), a calibration session and an experiment; each text that
could leak carries a marker (`ALPHA-…`, `BETA-…`). The test walks the URLconf (the admin's own URLs
aside: the admin is Django's permission system, its scoping is tested in tests/test_workspaces.py),
fills each URL's arguments with alpha's objects (ARGUMENTS), finds the methods the view accepts (a
superuser's request not answered 405), sends each method with an empty body as each actor, each
request inside a transaction rolled back afterwards, so no actor's request changes what the next sees.

The actors, one letter each:
    -  anonymous            A  alpha's admin          L  alpha's QA lead      O  alpha's rubric owner
    S  alpha's supervisor of team north (alpha's south calls are not theirs)
    G  alpha's agent (the agent of alpha's north call)
    X  beta's admin (a person of another workspace; one with roles in both is tests/test_workspaces.py's)
    K  a key of alpha (review, experiment and export rights)      Y  a key of beta (every right)
    B  a key of alpha bound to one source, alpha-crm (its north calls; the south calls are another
       system's): every right but other sources

MATRIX format: one line per URL name and method, `"name METHOD": "-302 A200 L200 ..."`, the status each
actor gets, in the order above (every actor listed). A URL or method without its line fails the test,
and so does a line for one that no longer exists. Adding a URL is adding its line(s) here (and, if its
arguments are new, one entry in ARGUMENTS). Besides the statuses, for every request: X and Y never
receive an ALPHA marker, no alpha actor receives a BETA marker, and neither S nor B receives alpha's
south call (a team S does not lead, a source B is not bound to).
"""

from __future__ import annotations

import copy
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone
from rest_framework.views import APIView

from access.models import Role
from access.services import member_add, workspace_create
from qa.api.services import api_key_create
from qa.models import Recording
from reviews.models import CalibrationCall, CalibrationSession
from experiments.models import Arm, Experiment
from disputes.models import Dispute, DisputedCriterion
from coaching.models import CoachedCriterion, CoachingSession
from reviews.services import review_create
from tests.factories import UserFactory, judged_recording, published_rubric

ACTORS = "-ALOSGXKBY"
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]

# Each line: "url-name METHOD": the status of each actor, in ACTORS' order.
MATRIX: dict[str, str] = {
    "home GET": "-302 A302 L302 O302 S302 G302 X302 K302 B302 Y302",
    "login GET": "-200 A200 L200 O200 S200 G200 X200 K200 B200 Y200",
    "login POST": "-200 A200 L200 O200 S200 G200 X200 K200 B200 Y200",
    "login PUT": "-200 A200 L200 O200 S200 G200 X200 K200 B200 Y200",
    "password_reset GET": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset POST": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset PUT": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset PATCH": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset DELETE": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_done GET": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_done POST": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_done PUT": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_done PATCH": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_done DELETE": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_confirm GET": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_confirm POST": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_confirm PUT": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_confirm PATCH": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_confirm DELETE": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_complete GET": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_complete POST": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_complete PUT": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_complete PATCH": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "password_reset_complete DELETE": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "logout POST": "-302 A302 L302 O302 S302 G302 X302 K302 B302 Y302",
    "password_change GET": "-302 A200 L200 O200 S200 G200 X200 K302 B302 Y302",
    "password_change POST": "-302 A200 L200 O200 S200 G200 X200 K302 B302 Y302",
    "password_change PUT": "-302 A200 L200 O200 S200 G200 X200 K302 B302 Y302",
    "password_change_done GET": "-302 A200 L200 O200 S200 G200 X200 K302 B302 Y302",
    "set_language GET": "-302 A302 L302 O302 S302 G302 X302 K302 B302 Y302",
    "set_language POST": "-302 A302 L302 O302 S302 G302 X302 K302 B302 Y302",
    "set_language PUT": "-302 A302 L302 O302 S302 G302 X302 K302 B302 Y302",
    "set_language PATCH": "-302 A302 L302 O302 S302 G302 X302 K302 B302 Y302",
    "set_language DELETE": "-302 A302 L302 O302 S302 G302 X302 K302 B302 Y302",
    "review-queue GET": "-302 A200 L200 O403 S200 G403 X200 K302 B302 Y302",
    "review-next POST": "-302 A302 L302 O403 S302 G403 X302 K302 B302 Y302",
    "review-detail GET": "-302 A200 L200 O403 S200 G403 X404 K302 B302 Y302",
    "review-detail POST": "-302 A200 L200 O403 S200 G403 X404 K302 B302 Y302",
    "review-release POST": "-302 A302 L302 O403 S302 G403 X404 K302 B302 Y302",
    "review-audio GET": "-302 A404 L404 O403 S404 G403 X404 K302 B302 Y302",
    "review-upload GET": "-302 A200 L200 O403 S200 G403 X200 K302 B302 Y302",
    "review-upload POST": "-302 A400 L400 O403 S400 G403 X400 K302 B302 Y302",
    "reports:index GET": "-302 A200 L200 O200 S200 G403 X200 K302 B302 Y302",
    "reports:deviation GET": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "reports:deviation-scores GET": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "reports:deviation-recordings GET": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "reports:evidence GET": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "reports:evidence-scores GET": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "reports:versions GET": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "calibration-list GET": "-302 A200 L200 O200 S200 G200 X200 K302 B302 Y302",
    "calibration-create GET": "-302 A200 L200 O403 S403 G403 X200 K302 B302 Y302",
    "calibration-create POST": "-302 A200 L200 O403 S403 G403 X200 K302 B302 Y302",
    "calibration-detail GET": "-302 A200 L200 O404 S200 G404 X404 K302 B302 Y302",
    "calibration-close POST": "-302 A302 L302 O404 S403 G404 X404 K302 B302 Y302",
    "calibration-agree POST": "-302 A302 L302 O403 S403 G403 X404 K302 B302 Y302",
    "calibration-score GET": "-302 A403 L200 O404 S200 G404 X404 K302 B302 Y302",
    "calibration-score POST": "-302 A403 L200 O404 S200 G404 X404 K302 B302 Y302",
    "reports-api:deviation GET": "-401 A200 L200 O200 S200 G403 X400 K200 B200 Y400",
    "reports-api:evidence GET": "-401 A200 L200 O200 S200 G403 X400 K200 B200 Y400",
    "reports-api:versions GET": "-401 A200 L200 O200 S200 G403 X400 K200 B200 Y400",
    "scorecards:scorecard GET": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards:scorecard POST": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards:scorecard PUT": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards:scorecard PATCH": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards:scorecard DELETE": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards:agent GET": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards:agent POST": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards:agent PUT": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards:agent PATCH": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards:agent DELETE": "-302 A200 L200 O200 S200 G403 X400 K302 B302 Y302",
    "scorecards-api:scorecard GET": "-401 A200 L200 O200 S200 G403 X400 K200 B200 Y400",
    "calibrations-api:list GET": "-401 A200 L200 O200 S200 G200 X200 K403 B403 Y403",
    "calibrations-api:detail GET": "-401 A200 L200 O404 S200 G404 X404 K403 B403 Y403",
    "calibrations-api:entries POST": "-401 A400 L400 O404 S400 G404 X404 K403 B403 Y403",
    "calibrations-api:close POST": "-401 A200 L200 O404 S403 G404 X404 K403 B403 Y403",
    "experiments:index GET": "-302 A200 L200 O200 S200 G403 X200 K302 B302 Y302",
    "experiments:index POST": "-302 A200 L403 O200 S403 G403 X200 K302 B302 Y302",
    "experiments:index PUT": "-302 A200 L200 O200 S200 G403 X200 K302 B302 Y302",
    "experiments:index PATCH": "-302 A200 L200 O200 S200 G403 X200 K302 B302 Y302",
    "experiments:index DELETE": "-302 A200 L200 O200 S200 G403 X200 K302 B302 Y302",
    "experiments:detail GET": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:detail POST": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:detail PUT": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:detail PATCH": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:detail DELETE": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:criterion GET": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:criterion POST": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:criterion PUT": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:criterion PATCH": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:criterion DELETE": "-302 A200 L200 O200 S404 G403 X404 K302 B302 Y302",
    "experiments:cancel POST": "-302 A302 L403 O302 S403 G403 X404 K302 B302 Y302",
    "experiments:promote GET": "-302 A200 L403 O200 S403 G403 X404 K302 B302 Y302",
    "experiments:promote POST": "-302 A302 L403 O302 S403 G403 X404 K302 B302 Y302",
    "experiments:promote PUT": "-302 A200 L403 O200 S403 G403 X404 K302 B302 Y302",
    "experiments:promote PATCH": "-302 A200 L403 O200 S403 G403 X404 K302 B302 Y302",
    "experiments:promote DELETE": "-302 A200 L403 O200 S403 G403 X404 K302 B302 Y302",
    "experiments-api:list GET": "-401 A200 L200 O200 S200 G403 X200 K200 B200 Y200",
    "experiments-api:list POST": "-401 A400 L403 O400 S403 G403 X400 K400 B400 Y400",
    "experiments-api:detail GET": "-401 A200 L200 O200 S404 G403 X404 K200 B200 Y404",
    "api:rubric-list GET": "-401 A200 L200 O200 S200 G403 X200 K200 B200 Y200",
    "api:rubric-detail GET": "-401 A200 L200 O200 S200 G403 X404 K200 B200 Y404",
    "api:rubric-lint GET": "-401 A200 L403 O200 S403 G403 X404 K200 B200 Y404",
    "api:rubric-routing GET": "-401 A200 L200 O200 S200 G403 X404 K200 B200 Y404",
    "api:recording-list GET": "-401 A200 L200 O200 S200 G403 X200 K200 B200 Y200",
    "api:recording-list POST": "-401 A403 L403 O403 S403 G403 X403 K400 B400 Y400",
    "api:recording-batch POST": "-401 A403 L403 O403 S403 G403 X403 K400 B400 Y400",
    "api:recording-rejudge POST": "-401 A403 L403 O403 S403 G403 X403 K202 B202 Y404",
    "api:recording-detail GET": "-401 A200 L200 O200 S200 G403 X404 K200 B200 Y404",
    "api:recording-review POST": "-401 A400 L400 O403 S400 G403 X404 K400 B400 Y404",
    "api:webhook-list GET": "-401 A403 L403 O403 S403 G403 X403 K200 B200 Y200",
    "api:webhook-list POST": "-401 A403 L403 O403 S403 G403 X403 K400 B400 Y400",
    "api:webhook-detail GET": "-401 A403 L403 O403 S403 G403 X403 K404 B404 Y404",
    "api:webhook-detail PATCH": "-401 A403 L403 O403 S403 G403 X403 K404 B404 Y404",
    "api:webhook-detail DELETE": "-401 A403 L403 O403 S403 G403 X403 K404 B404 Y404",
    "api:webhook-deliveries GET": "-401 A403 L403 O403 S403 G403 X403 K404 B404 Y404",
    "api:webhook-redeliver POST": "-401 A403 L403 O403 S403 G403 X403 K404 B404 Y404",
    "api:schema GET": "-401 A200 L200 O200 S200 G200 X200 K200 B200 Y200",
    "api:docs GET": "-302 A200 L200 O200 S200 G200 X200 K302 B302 Y302",
    "recording-review-alias POST": "-401 A400 L400 O403 S400 G403 X404 K400 B400 Y404",
    # The bulk export: a key with can_export, a person with the reports' capability, each their own scope (X and Y
    # their own workspace's rows). Rows of this test's open transaction are not exported yet (exports.selectors),
    # so the bodies are empty here: tests/exports/test_export.py checks the scope on committed rows.
    "export:scores GET": "-401 A200 L200 O200 S200 G403 X200 K200 B200 Y200",
    "export:reviews GET": "-401 A200 L200 O200 S200 G403 X200 K200 B200 Y200",
    "export:disputes GET": "-401 A200 L200 O200 S200 G403 X200 K200 B200 Y200",
    "export:calibration GET": "-401 A200 L200 O200 S200 G403 X200 K200 B200 Y200",
    # Single sign-on (off in the tests' settings: its pages answer 404), the review's Undo, the dashboard,
    # finding and assigning calls, agents' pages and disputes (added at merge).
    "oidc_authentication_init GET": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "oidc_authentication_init POST": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "oidc_authentication_init PUT": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "oidc_authentication_init PATCH": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "oidc_authentication_init DELETE": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "oidc_authentication_callback GET": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "oidc_authentication_callback POST": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "oidc_authentication_callback PUT": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "oidc_authentication_callback PATCH": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "oidc_authentication_callback DELETE": "-404 A404 L404 O404 S404 G404 X404 K404 B404 Y404",
    "review-undo POST": "-302 A403 L403 O403 S403 G403 X403 K302 B302 Y302",
    "dashboard GET": "-302 A200 L200 O200 S200 G403 X200 K302 B302 Y302",
    "calls:list GET": "-302 A200 L200 O200 S200 G403 X200 K302 B302 Y302",
    "calls:assign POST": "-302 A400 L400 O403 S403 G403 X400 K302 B302 Y302",
    "calls:reviewers GET": "-302 A200 L200 O403 S403 G403 X200 K302 B302 Y302",
    "calls:queue-bulk POST": "-302 A302 L302 O403 S403 G403 X302 K302 B302 Y302",
    "calls:saved-create POST": "-302 A400 L400 O400 S400 G403 X400 K302 B302 Y302",
    "calls:saved-delete POST": "-302 A404 L404 O404 S404 G403 X404 K302 B302 Y302",
    "calls-api:list GET": "-401 A200 L200 O200 S200 G403 X200 K403 B403 Y403",
    "agents:home GET": "-302 A403 L403 O403 S403 G200 X403 K302 B302 Y302",
    "agents:scorecard GET": "-302 A403 L403 O403 S403 G200 X403 K302 B302 Y302",
    "agents:call GET": "-302 A403 L403 O403 S403 G200 X403 K302 B302 Y302",
    "agents:acknowledge POST": "-302 A403 L403 O403 S403 G302 X403 K302 B302 Y302",
    "agents:dispute POST": "-302 A403 L403 O403 S403 G400 X403 K302 B302 Y302",
    "agents:self-review POST": "-302 A403 L403 O403 S403 G400 X403 K302 B302 Y302",
    "agents:self-review-skip POST": "-302 A403 L403 O403 S403 G302 X403 K302 B302 Y302",
    "disputes:list GET": "-302 A200 L200 O403 S403 G403 X200 K302 B302 Y302",
    "disputes:reviews GET": "-302 A200 L200 O403 S200 G403 X200 K302 B302 Y302",
    "disputes:detail GET": "-302 A200 L200 O403 S403 G403 X404 K302 B302 Y302",
    "disputes:detail POST": "-302 A400 L400 O403 S403 G403 X404 K302 B302 Y302",
    "api:dispute-list GET": "-401 A200 L200 O403 S403 G200 X200 K403 B403 Y403",
    "api:dispute-detail GET": "-401 A200 L200 O404 S404 G200 X404 K403 B403 Y403",
    "api:dispute-resolve POST": "-401 A400 L400 O403 S403 G403 X404 K403 B403 Y403",
    "api:review-dispute POST": "-401 A403 L403 O403 S403 G400 X403 K403 B403 Y403",
    "api:review-acknowledge POST": "-401 A403 L403 O403 S403 G200 X403 K403 B403 Y403",
    # Coaching: the coaches' pages (supervisors of the team, QA leads, admins), the agent's own, the API (people only).
    "coaching:list GET": "-302 A200 L200 O403 S200 G403 X200 K302 B302 Y302",
    "coaching:new GET": "-302 A200 L200 O403 S200 G403 X404 K302 B302 Y302",
    "coaching:new POST": "-302 A404 L404 O403 S404 G403 X404 K302 B302 Y302",
    "coaching:detail GET": "-302 A200 L200 O403 S200 G403 X404 K302 B302 Y302",
    "coaching:detail POST": "-302 A400 L400 O403 S400 G403 X404 K302 B302 Y302",
    "coaching:close POST": "-302 A302 L302 O403 S302 G403 X404 K302 B302 Y302",
    "coaching:mine GET": "-302 A403 L403 O403 S403 G200 X403 K302 B302 Y302",
    "coaching:mine-detail GET": "-302 A403 L403 O403 S403 G200 X403 K302 B302 Y302",
    "coaching:mine-detail POST": "-302 A403 L403 O403 S403 G400 X403 K302 B302 Y302",
    "coaching:mine-acknowledge POST": "-302 A403 L403 O403 S403 G302 X403 K302 B302 Y302",
    "api:coaching-list GET": "-401 A200 L200 O200 S200 G200 X200 K403 B403 Y403",
    "api:coaching-list POST": "-401 A400 L400 O403 S400 G403 X400 K403 B403 Y403",
    "api:coaching-detail GET": "-401 A200 L200 O404 S200 G200 X404 K403 B403 Y403",
    "api:coaching-acknowledge POST": "-401 A403 L403 O403 S403 G200 X403 K403 B403 Y403",
    "api:coaching-comments POST": "-401 A400 L400 O404 S400 G400 X404 K403 B403 Y403",
    # Twilio's recording callback: no login and no key opens it; only X-Twilio-Signature made with the
    # account's auth token does (tests/intake/test_twilio.py), so every actor here, unsigned, gets 403.
    "intake:twilio-recording POST": "-403 A403 L403 O403 S403 G403 X403 K403 B403 Y403",
}

# URL names left out, each with the reason.
NOT_ASKED = {
    "api/^": "the API's catch-all: a JSON 404 to anyone",
    "^recordings/[^/]+/review$": "the review alias's catch-all: a JSON 404 to anyone",
}


def url_patterns(resolver: URLResolver | None = None, namespace: str = "", prefix: str = "") -> list[tuple[str, str, URLPattern]]:
    """(name with its namespace, route, pattern) of every named URL, the admin's left out."""
    found = []
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            if entry.app_name == "admin":
                continue
            space = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            found += url_patterns(entry, space, route)
        else:  # an unnamed pattern (a catch-all) by its route
            found.append((namespace + entry.name if entry.name else route, route, entry))
    return found


@pytest.fixture
def world(db):
    alpha, beta = workspace_create(slug="alpha", name="ALPHA-WORKSPACE"), workspace_create(slug="beta", name="BETA-WORKSPACE")
    data = {}
    for workspace, mark in ((alpha, "ALPHA"), (beta, "BETA")):
        rubric = published_rubric(slug=f"{mark.lower()}-care", name=f"{mark}-RUBRIC", workspace=workspace)
        # The north calls come from the CRM (source alpha-crm, beta-crm), the south ones from another system.
        north = judged_recording(
            rubric=rubric, team="north", agent_id=f"{mark.lower()}-agent", agent_name=f"{mark}-AGENT",
            source=f"{mark.lower()}-crm",
            transcript=f"AGENTE: {mark}-TRANSCRIPT hola\nCLIENTE: buenas\n", external_id=f"{mark}-CALL-1",
            status=Recording.Status.IN_REVIEW, needs_review=True, review_reasons=["low_confidence"],
        )  # fmt: skip
        south = judged_recording(
            rubric=rubric, team="south", agent_id=f"{mark.lower()}-south", agent_name=f"{mark}-SOUTH-AGENT",
            transcript=f"AGENTE: {mark}-SOUTH-TRANSCRIPT hola\nCLIENTE: buenas\n", external_id=f"{mark}-CALL-2",
            status=Recording.Status.IN_REVIEW, needs_review=True, review_reasons=["low_confidence"],
        )  # fmt: skip
        for team, text in (("north", f"{mark}-REVIEWED"), ("south", f"{mark}-SOUTH-REVIEWED")):
            reviewed = judged_recording(
                rubric=rubric, team=team, agent_id=f"{mark.lower()}-agent" if team == "north" else f"{mark.lower()}-south",
                agent_name=f"{mark}-AGENT" if team == "north" else f"{mark}-SOUTH-AGENT", external_id=f"{text}-CALL",
                **({"source": f"{mark.lower()}-crm"} if team == "north" else {}),
                transcript=f"AGENTE: {text} hola\nCLIENTE: buenas\n", status=Recording.Status.JUDGED,
            )  # fmt: skip
            review = review_create(recording=reviewed, decision="approve", reviewer=f"{mark}-REVIEWER")
            if team == "north":  # the agent's reviewed call, its review, and (below) their dispute of it
                data[mark] = {"reviewed": reviewed, "review": review}
        data[mark].update(workspace=workspace, rubric=rubric, north=north, south=south)

    def person(name: str, workspace, role: str, **extra) -> User:
        user = User.objects.create_user(name, password="pass-word-123")
        member_add(user=user, workspace=workspace, role=role, **extra)
        return user

    people = {
        "A": person("alpha-admin", alpha, Role.ADMIN),
        "L": person("alpha-lead", alpha, Role.QA_LEAD),
        "O": person("alpha-owner", alpha, Role.RUBRIC_OWNER),
        "S": person("alpha-supervisor", alpha, Role.SUPERVISOR, teams=["north"]),
        "G": person("alpha-agent", alpha, Role.AGENT, agent_id="alpha-agent"),
        "X": person("beta-admin", beta, Role.ADMIN),
    }
    beta_supervisor = person("beta-supervisor", beta, Role.SUPERVISOR)
    beta_agent = person("beta-agent", beta, Role.AGENT, agent_id="beta-agent")
    for mark, agent in (("ALPHA", people["G"]), ("BETA", beta_agent)):
        reviewed = data[mark]["reviewed"]
        dispute = Dispute.objects.create(
            review=data[mark]["review"], recording=reviewed, agent_id=reviewed.agent_id, opened_by=agent,
            due_at=timezone.now() + timedelta(days=3),
        )  # fmt: skip
        DisputedCriterion.objects.create(
            dispute=dispute, criterion=data[mark]["rubric"].criteria.first(), proposed_value=1, reason=f"{mark}-REASON"
        )
        data[mark]["dispute"] = dispute
    for mark, lead, participant in (("ALPHA", people["L"], people["S"]), ("BETA", people["X"], beta_supervisor)):
        session = CalibrationSession.objects.create(name=f"{mark}-SESSION", rubric=data[mark]["rubric"], lead=lead)
        session.participants.set([lead, participant])
        CalibrationCall.objects.create(session=session, recording=data[mark]["north"], run=data[mark]["north"].current_run)
        experiment = Experiment.objects.create(
            workspace=data[mark]["workspace"], rubric_slug=data[mark]["rubric"].slug, recording_ids=[data[mark]["north"].pk]
        )
        Arm.objects.create(experiment=experiment, order=0, label=f"{mark}-ARM", rubric=data[mark]["rubric"], stored=True)
        arm = Arm.objects.create(experiment=experiment, order=1, label=f"{mark}-CANDIDATE", rubric=data[mark]["rubric"])
        data[mark].update(session=session, experiment=experiment, arm=arm)
        # Coaching sessions: the north agent's (the one asked about), and the south agent's, which a supervisor
        # of north must never receive.
        for team, agent, goal in (("north", f"{mark.lower()}-agent", f"{mark}-COACHING"), ("south", f"{mark.lower()}-south", f"{mark}-SOUTH-COACHING")):
            coaching = CoachingSession.objects.create(
                workspace=data[mark]["workspace"], rubric=data[mark]["rubric"], agent_id=agent, team=team, coach=lead,
                goal=goal, follow_up_on=timezone.localdate() + timedelta(days=14),
            )  # fmt: skip
            CoachedCriterion.objects.create(session=coaching, criterion=data[mark]["rubric"].criteria.first())
            if team == "north":
                data[mark]["coaching"] = coaching
    keys = {
        "K": api_key_create(
            name="alpha-system", workspace=alpha, can_review=True, can_run_experiments=True, all_sources=True,
            can_export=True,
        )[1],
        "B": api_key_create(
            name="alpha-crm-system", workspace=alpha, source="alpha-crm", can_review=True, can_run_experiments=True,
            can_export=True,
        )[1],
        "Y": api_key_create(
            name="beta-system", workspace=beta, can_review=True, can_run_experiments=True, all_sources=True, can_export=True
        )[1],
    }
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    return {"data": data, "people": people, "keys": keys, "root": root}


def arguments(name: str, pattern: URLPattern, alpha: dict) -> dict:
    """The URL's arguments, alpha's objects: what each kind of URL is about."""
    ARGUMENTS = {
        "slug": alpha["rubric"].slug,
        "key": "c1",
        "arm_id": alpha["arm"].pk,
        "action": "publish_rubric",
        "recording_id": alpha["north"].pk,
        "delivery_id": uuid.uuid4(),
        "uidb64": "MQ",  # the password reset's link: a made-up one, refused alike to all
        "token": "set-password",
        "account": "alpha-twilio",  # a Twilio account's slug (intake): refused alike whether it exists or not
    }
    found = {}
    for argument in pattern.pattern.converters:
        if argument == "pk":
            if name in ("review-undo", "api:review-acknowledge", "api:review-dispute"):
                found["pk"] = alpha["review"].pk
            elif name.startswith("agents:"):
                found["pk"] = alpha["reviewed"].pk  # the agent's reviewed call
            elif name.startswith(("disputes:", "api:dispute-")):
                found["pk"] = alpha["dispute"].pk
            elif name.startswith(("coaching:", "api:coaching-")):
                found["pk"] = alpha["coaching"].pk
            elif name.startswith("calibration"):
                found["pk"] = alpha["session"].pk
            elif name.startswith("experiments"):
                found["pk"] = alpha["experiment"].pk
            elif "webhook" in name:
                found["pk"] = 999_999  # the webhooks' subscriptions get their workspace in their own change
            else:
                found["pk"] = alpha["north"].pk
        else:
            found[argument] = ARGUMENTS[argument]
    return found


# The query a URL is asked with (its filters: alpha's rubric, so the pages show alpha's figures).
QUERY = {
    "reports:": "rubric=alpha-care", "reports-api:": "rubric=alpha-care", "scorecards:": "rubric=alpha-care",
    "scorecards-api:": "rubric=alpha-care", "scorecards:agent": "rubric=alpha-care&agent=alpha-agent",
    "coaching:new": "rubric=alpha-care&agent=alpha-agent&criterion=c1",
    "reports:deviation-scores": "rubric=alpha-care&criterion=c1", "reports:evidence-scores": "rubric=alpha-care&criterion=c1",
}  # fmt: skip


def query_for(name: str) -> str:
    found = QUERY.get(name) or next((query for prefix, query in QUERY.items() if name.startswith(prefix)), "")
    return f"?{found}" if found else ""


def methods_of(pattern: URLPattern, probe) -> list[str]:
    """The methods the view accepts: an API view's handlers, else those a superuser is not answered 405."""
    view_class = getattr(pattern.callback, "view_class", None) or getattr(pattern.callback, "cls", None)
    if view_class is not None and issubclass(view_class, APIView):
        return [method for method in METHODS if hasattr(view_class, method.lower())]
    return [method for method in METHODS if probe(method) != 405]


def client_for(actor: str, world: dict) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    if actor in world["people"]:
        client.force_login(world["people"][actor])
    elif actor in world["keys"]:
        client.defaults["HTTP_AUTHORIZATION"] = f"Api-Key {world['keys'][actor]}"
    elif actor == "root":
        client.force_login(world["root"])
    return client


def ask(client: Client, method: str, url: str):
    """One request whose every write is rolled back afterwards (a logout's too: the session row comes back
    with the rollback, and the client keeps its cookie)."""
    cookies = copy.deepcopy(client.cookies)
    with transaction.atomic():
        response = getattr(client, method.lower())(url, content_type="application/json") if method != "GET" else client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        transaction.set_rollback(True)
    client.cookies = cookies
    return response.status_code, body.decode(errors="replace")


# The matrix is asked in parts, each a test of its own, so the suite's parallel workers share its few
# thousand requests; the parts together ask every URL pattern once.
PARTS = 6


def patterns_of_part(part: int) -> list[tuple[str, str, URLPattern]]:
    asked = [entry for entry in url_patterns() if entry[0] not in NOT_ASKED]
    return asked[part::PARTS]


def observed_matrix(world: dict, part: int) -> tuple[dict[str, str], list[str], set[str]]:
    alpha = world["data"]["ALPHA"]
    rows, leaks, seen = {}, [], set()
    clients = {actor: client_for(actor, world) for actor in [*ACTORS, "root"]}
    for name, _route, pattern in patterns_of_part(part):
        if pattern.name is None:
            rows[f"{name} ?"] = "an unnamed pattern: ask it or give the reason in NOT_ASKED"
            continue
        url = reverse(name, kwargs=arguments(name, pattern, alpha)) + query_for(name)
        for method in methods_of(pattern, lambda method: ask(clients["root"], method, url)[0]):
            statuses = []
            for actor in ACTORS:
                status, body = ask(clients[actor], method, url)
                statuses.append(f"{actor}{status}")
                if actor in "XY" and "ALPHA-" in body:
                    leaks.append(f"{actor} {method} {url}: {body[body.index('ALPHA-'):][:40]}")
                if actor in "ALOSGKB" and "BETA-" in body:
                    leaks.append(f"{actor} {method} {url}: {body[body.index('BETA-'):][:40]}")
                if actor == "A" and "ALPHA-SOUTH" in body:
                    seen.add(f"{name} {method}")
                if actor in "SB" and "ALPHA-SOUTH" in body:
                    leaks.append(f"{actor} {method} {url}: alpha's south call")
            rows[f"{name} {method}"] = " ".join(statuses)
    return rows, leaks, seen


def matrix_name(line: str) -> str:
    return line.rpartition(" ")[0]


@pytest.mark.django_db
@pytest.mark.parametrize("part", range(PARTS))
def test_every_url_and_method_answers_each_actor_as_the_matrix_says_and_leaks_nothing(world, settings, part):
    settings.QA_API_DOCS_PUBLIC = False
    observed, leaks, seen = observed_matrix(world, part)
    assert leaks == []
    names = {name for name, _route, _pattern in patterns_of_part(part)}
    # The markers are there to be found: alpha's admin reads the south calls where the supervisor may not.
    markers = {"review-queue GET", "api:recording-list GET", "reports:deviation-recordings GET", "api:coaching-list GET"}
    assert {line for line in markers if matrix_name(line) in names} <= seen
    missing = {line: status for line, status in observed.items() if line not in MATRIX}
    assert missing == {}, "add these lines to MATRIX:\n" + "\n".join(f'    "{k}": "{v}",' for k, v in missing.items())
    expected = {line: status for line, status in MATRIX.items() if matrix_name(line) in names}
    assert expected.keys() - observed.keys() == set()  # a line for a method that is gone
    assert {line: observed[line] for line in expected} == expected


def test_every_matrix_line_names_a_url_that_is_asked():
    """A line for a URL that no longer exists (or is no longer asked) fails: each part checks only its own."""
    asked = {name for part in range(PARTS) for name, _route, _pattern in patterns_of_part(part)}
    assert {line for line in MATRIX if matrix_name(line) not in asked} == set()
    assert {"review-queue", "api:recording-list", "reports:deviation-recordings"} <= asked
