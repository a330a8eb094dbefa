"""The permissions a person's memberships give: each membership's role's groups' permissions
(access.models.ROLE_GROUPS, as the operator set them), read from the scope.

With it, what a person may do comes from their memberships, as what they may see does: the global
groups `access.services.user_groups_sync` keeps in step with the memberships are no longer what opens
a page, a template's `perms` or an API method (a member whose groups were never synced still gets
them). The groups still count where an operator gives one by hand (Django's ModelBackend, before this
one): the webhooks' permissions, which no role holds.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.backends import BaseBackend

from access.scope import scope_for


class MembershipBackend(BaseBackend):
    """Authenticates no one (the other backends do); answers `has_perm` from the memberships' roles."""

    def get_all_permissions(self, user_obj: Any, obj: object = None) -> set[str]:
        if obj is not None or not getattr(user_obj, "is_active", False) or user_obj.is_anonymous:
            return set()
        scope = scope_for(user_obj)  # once per request, kept on the user
        return {
            permission
            for workspace_id in scope.workspace_ids
            for permission in scope.permissions_in(workspace_id)
        }

    def has_perm(self, user_obj: Any, perm: str, obj: object = None) -> bool:
        return perm in self.get_all_permissions(user_obj, obj)
