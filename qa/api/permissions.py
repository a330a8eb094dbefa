from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.permissions import BasePermission

from qa.models import ApiKey

if TYPE_CHECKING:  # DRF imports the default permission and throttle classes while loading rest_framework.views
    from rest_framework.request import Request
    from rest_framework.views import APIView


class IsApiKeyOrStaff(BasePermission):
    """Any valid key may post and read recordings; people use the API with a staff session.

    The default for every API view, including the reports.
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        if isinstance(request.auth, ApiKey):
            return True
        return bool(request.user and request.user.is_authenticated and request.user.is_staff)


class CanReview(BasePermission):
    """A key created with review rights, or a person allowed to review (the Supervisors group)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if isinstance(request.auth, ApiKey):
            return request.auth.can_review
        return bool(request.user and request.user.is_authenticated and request.user.has_perm("reviews.add_review"))
