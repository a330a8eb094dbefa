from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.permissions import BasePermission

from qa.models import ApiKey

if TYPE_CHECKING:  # DRF imports the default permission and throttle classes while loading rest_framework.views
    from rest_framework.request import Request
    from rest_framework.views import APIView


class IsApiKeyOrPermitted(BasePermission):
    """Any valid key (an external system); a person only with the permission the view names for
    the method in `session_permissions`, from their groups, as on the pages: Supervisors and Rubric
    owners read, nobody posts recordings or rejudges by session unless granted it. Staff status
    alone opens nothing.

    The default for every API view.
    """

    def has_permission(self, request: Request, view: APIView) -> bool:
        if isinstance(request.auth, ApiKey):
            return True
        user = request.user
        if not (user and user.is_authenticated and user.is_active):
            return False
        method = "GET" if request.method in ("HEAD", "OPTIONS") else request.method
        permission = getattr(view, "session_permissions", {}).get(method)
        return bool(permission) and user.has_perm(permission)


class CanReview(BasePermission):
    """A key created with review rights, or a person allowed to review (the Supervisors group)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if isinstance(request.auth, ApiKey):
            return request.auth.can_review
        return bool(request.user and request.user.is_authenticated and request.user.has_perm("reviews.add_review"))


class CanReadApiDocs(BasePermission):
    """The OpenAPI schema and docs: any logged-in user or key, or anyone with QA_API_DOCS_PUBLIC."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        from django.conf import settings

        if settings.QA_API_DOCS_PUBLIC or isinstance(request.auth, ApiKey):
            return True
        return bool(request.user and request.user.is_authenticated)
