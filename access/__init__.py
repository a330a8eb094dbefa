"""Who may do what: the one place pages, API views and services ask (the workspaces' scope joins it).

A capability is a Django permission that a role's group holds (`reviews` 0002 and later migrations
give the groups theirs), so an operator can grant one to a group of their own; staff status alone
grants nothing. Pages are wrapped in `page_requires` (anonymous users go to the login page, others
get a 403); API views use `ApiAccess`, the REST framework's default, configured per view by
`session_permissions` (a person's capability per method) and `key_permissions` (what a system's key
needs); services and templates call `may`. `tests/test_access.py` fails on a view that decides
access any other way.

Layers: this package sits below every app (it imports none of them), since scope, which the
workspaces bring, is below the rubrics they own.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import wraps
from typing import TYPE_CHECKING, Any, ClassVar

from django.conf import settings
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

# This package is also the `access` app (workspaces, access.models): it is imported while the app
# registry loads, so nothing here may import django.contrib.auth's models or views at module level.
if TYPE_CHECKING:  # DRF imports the default permission class while loading rest_framework.views
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from django.http import HttpRequest, HttpResponse
    from rest_framework.request import Request
    from rest_framework.views import APIView

    User = AbstractBaseUser | AnonymousUser


class Capability(StrEnum):
    """What a person may do, named by the permission that grants it."""

    REVIEW = "reviews.add_review"  # Supervisors: the queue, the review page, uploads, calibration entries
    READ_RECORDINGS = "qa.view_recording"
    ADD_RECORDINGS = "qa.add_recording"
    REJUDGE = "qa.add_judgerun"
    READ_RUBRICS = "rubrics.view_rubric"
    EDIT_RUBRICS = "rubrics.change_rubric"  # Rubric owners
    READ_REPORTS = "qa.view_score"  # Supervisors and rubric owners: reports and scorecards
    RUN_CALIBRATION = "reviews.run_calibration"  # QA leads
    ASSIGN = "reviews.add_assignment"  # QA leads: assign calls to supervisors, read the reviewers' throughput
    # Agents: their own calls, scorecard and reviews; acknowledging and disputing those reviews.
    DISPUTE = "disputes.add_dispute"
    RESOLVE_DISPUTES = "disputes.resolve_dispute"  # QA leads
    COACH = "coaching.add_coachingsession"  # Supervisors and QA leads: open coaching sessions for agents
    READ_EXPERIMENTS = "experiments.view_experiment"
    RUN_EXPERIMENTS = "experiments.add_experiment"  # Rubric owners
    # Webhook subscriptions and their deliveries: for whoever an operator grants them (no role has them).
    READ_WEBHOOKS = "webhooks.view_subscription"
    ADD_WEBHOOKS = "webhooks.add_subscription"
    CHANGE_WEBHOOKS = "webhooks.change_subscription"
    DELETE_WEBHOOKS = "webhooks.delete_subscription"
    READ_DELIVERIES = "webhooks.view_delivery"
    REDELIVER = "webhooks.change_delivery"


# A view that only needs a signed-in person; what they then see is decided per object (a calibration
# session they lead or take part in).
SIGNED_IN = "signed_in"
# The OpenAPI schema and docs: any signed-in person (and any key), or anyone where the operator opened
# them (QA_API_DOCS_PUBLIC).
API_DOCS = "api_docs"
# For `key_permissions`: any valid key may (the default for every method), or none may.
ANY_KEY = "any"
NO_KEY = None


def signed_in(user: User | None) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active)


def may(user: User | None, capability: Capability | str) -> bool:
    """Whether `user` may do what `capability` names (SIGNED_IN: any active, signed-in person): a role of
    their memberships carries it (access.backends.MembershipBackend, so a page opens for a member whose
    global groups were never synced), or a group of theirs holds it (one an operator gave by hand: the
    webhooks' permissions, which no role holds). What they then see is cut by their scope either way."""
    if not signed_in(user):
        return False
    return capability == SIGNED_IN or user.has_perm(str(capability))


def require(user: User | None, capability: Capability | str, message: str = "") -> None:
    """PermissionDenied unless `user` may: for services, whoever calls them."""
    if not may(user, capability):
        raise PermissionDenied(message)


def may_coach(user: User | None, scope: Any, workspace_id: int, team: str) -> bool:
    """Whether `user` (whose scope is `scope`, access.scope.scope_for) may open a coaching session for an agent
    of `team` in the workspace: their role there carries COACH and the team is theirs (a supervisor of it, or of
    every team; a QA lead). The coaching service refuses everyone else; the scorecard links a cell for no one
    else."""
    return may(user, Capability.COACH) and scope.may(Capability.COACH, workspace_id) and scope.sees_team(workspace_id, team)


def page_requires(capability: Capability | str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A page for those who may (`capability`, or SIGNED_IN): anonymous users go to the login page,
    signed-in users who may not get a 403. The wrapper says what it requires (`access_capability`),
    which the access test reads."""

    from django.contrib.auth.decorators import login_required

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            require(request.user, capability)
            return view(request, *args, **kwargs)

        wrapped.access_capability = capability
        return wrapped

    return decorate


class PageAccessMixin:
    """`page_requires` for a class-based view: set `access_capability`."""

    access_capability: ClassVar[Capability | str]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            from django.contrib.auth.views import redirect_to_login

            return redirect_to_login(request.get_full_path())
        require(request.user, self.access_capability)
        return super().dispatch(request, *args, **kwargs)


def public(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A page anyone may open (the login page's neighbours): marked, so the access test knows it was meant."""
    view.access_capability = None
    return view


class ApiAccess(BasePermission):
    """Every API view's permission (the REST framework's default).

    A person: the capability the view names for the method in `session_permissions` (HEAD and OPTIONS
    as GET); a method it does not name is refused. A system's key: `key_permissions` for the method,
    ANY_KEY (the default: a key acts for its system), NO_KEY, or the name of the key's flag that must be
    set (`can_review`, `can_run_experiments`, `can_export`).
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        method = "GET" if request.method in ("HEAD", "OPTIONS") else request.method
        if is_api_key(request.auth):
            rule = getattr(view, "key_permissions", {}).get(method, ANY_KEY)
            return rule == ANY_KEY or (rule is not NO_KEY and bool(getattr(request.auth, rule, False)))
        capability = getattr(view, "session_permissions", {}).get(method)
        if capability == API_DOCS:
            return settings.QA_API_DOCS_PUBLIC or signed_in(request.user)
        return capability is not None and may(request.user, capability)


def is_api_key(auth: object) -> bool:
    """Whether the request was authenticated by a system's key rather than a person's session."""
    from access.models import ApiKey  # this package's __init__ runs before the app registry is ready

    return isinstance(auth, ApiKey)
