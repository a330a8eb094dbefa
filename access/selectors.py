"""Reads of workspaces and people, for single sign-on."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from access.models import Workspace


def workspace_by_slug(slug: str) -> Workspace | None:
    return Workspace.objects.filter(slug=slug).first()


def sso_users(*, issuer: str, subject: str) -> QuerySet:
    """The user the provider's (issuer, subject) signs in as: none or one (the pair is unique)."""
    return get_user_model().objects.filter(sso_identities__issuer=issuer, sso_identities__subject=subject)
