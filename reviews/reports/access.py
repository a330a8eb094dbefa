"""Who may read the reports: Supervisors and Rubric owners (both hold
qa.view_score, which is what is checked, so a custom role can be granted it
too), and, through the API, external systems with a key. Staff status alone
grants nothing, as on the review pages."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from qa.models import ApiKey

REPORT_PERMISSION = "qa.view_score"


def can_view_reports(user: AbstractBaseUser | AnonymousUser) -> bool:
    return bool(user.is_authenticated and user.is_active and user.has_perm(REPORT_PERMISSION))


class CanViewReports(BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.auth, ApiKey) or can_view_reports(request.user)
