"""Writes for API keys. The admin and `manage.py create_api_key` both go through here."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext as _

from access.models import Workspace, default_workspace_id
from core.errors import InvalidInputError
from access.models import ApiKey
from qa.models import Recording
from access.models import has_control_characters

SOURCE_MAX_LENGTH = Recording._meta.get_field("source").max_length


def api_key_create(
    *,
    name: str,
    source: str = "",
    all_sources: bool = False,
    can_review: bool = False,
    can_run_experiments: bool = False,
    can_export: bool = False,
    expires_at: datetime | None = None,
    workspace: Workspace | None = None,
) -> tuple[ApiKey, str]:
    """Store a new key for the external system `name`, bound to `source` (default: the name), or to
    every source with `all_sources` (`source` is then the one it posts under when a body names none);
    return it with the full key. It acts inside `workspace` (default: the default workspace) alone.

    The full key is returned once and never stored: only its hash is kept.
    """
    source = source.strip() or name  # the name was the source a key posted under before keys had one
    if len(source) > SOURCE_MAX_LENGTH or has_control_characters(source):
        raise InvalidInputError(
            {"source": _("A source is at most %(max)s characters, without control characters.") % {"max": SOURCE_MAX_LENGTH}}
        )
    prefix, key = ApiKey.generate()
    api_key = ApiKey.objects.create(
        name=name,
        source=source,
        all_sources=all_sources,
        prefix=prefix,
        key_hash=ApiKey.hash(key),
        can_review=can_review,
        can_run_experiments=can_run_experiments,
        can_export=can_export,
        expires_at=expires_at,
        workspace_id=workspace.pk if workspace is not None else default_workspace_id(),
    )
    return api_key, key


def api_key_revoke(*, api_key: ApiKey) -> None:
    """Stop accepting the key from now on; revoking twice keeps the first date."""
    ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
