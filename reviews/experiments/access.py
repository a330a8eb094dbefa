"""Who may do what with experiments: rubric owners (and keys made with
--can-run-experiments) create, cancel and promote; supervisors read."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from qa.models import ApiKey

READ_PERMISSION = "experiments.view_experiment"
RUN_PERMISSION = "experiments.add_experiment"


def can_read_experiments(user: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(user.is_authenticated and user.is_active and user.has_perm(READ_PERMISSION))


def can_run_experiments(user: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(user.is_authenticated and user.is_active and user.has_perm(RUN_PERMISSION))


class ExperimentAccess(BasePermission):
    """Reading: any key, or a person who may read experiments. Writing: a rubric owner's key or person."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if isinstance(request.auth, ApiKey):
            return request.method in SAFE_METHODS or request.auth.can_run_experiments
        if request.method in SAFE_METHODS:
            return can_read_experiments(request.user)
        return can_run_experiments(request.user)
