"""Telling people what waits for them: the top bar's count (in-app), and an e-mail where the operator set
one up (EMAIL_URL, or EMAIL_HOST): a dispute opened goes to its lead (or every QA lead), an outcome to
the agent. Mail is sent after the commit, and a mail server that fails never fails the dispute."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.db import transaction
from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext as _

from access import Capability
from access.models import Role
from access.scope import scope_for
from disputes.selectors import waiting_for
from disputes.models import Dispute

logger = logging.getLogger(__name__)


def top_bar(request: HttpRequest) -> dict:
    """The context processor: `waiting` (count and url_name), read only where the page shows it, and
    `is_agent`, whether the reader is an agent somewhere: a superuser holds the agents' capability too, and
    their "My calls / My scorecard / My coaching" opened empty pages (issue 41), so the top bar shows those to
    agents only. Both are callables, read only by a page that asks."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"waiting": SimpleLazyObject(lambda: waiting_for(user)), "is_agent": lambda: bool(scope_for(user).as_agent().grants)}


def email_configured() -> bool:
    return bool(getattr(settings, "EMAIL_URL", "") or getattr(settings, "EMAIL_HOST", ""))


def _link(path: str) -> str:
    base = getattr(settings, "QA_PUBLIC_URL", "")
    return base.rstrip("/") + path if base else path


def _send(subject: str, body: str, recipients: list[str]) -> None:
    recipients = sorted({address for address in recipients if address})
    if not recipients or not email_configured():
        return

    def send() -> None:
        try:
            send_mail(subject, body, None, recipients)
        except Exception:  # the dispute is stored; the count in the top bar still tells them
            logger.exception("Could not send %r to %s", subject, recipients)

    transaction.on_commit(send)


def _leads(dispute: Dispute) -> list[AbstractBaseUser]:
    if dispute.assigned_to_id is not None:
        return [dispute.assigned_to]
    # The QA leads (and admins) of the call's workspace: a lead elsewhere is not told of it.
    return list(
        get_user_model().objects.filter(
            is_active=True,
            memberships__workspace_id=dispute.recording.workspace_id,
            memberships__role__in=[Role.QA_LEAD, Role.ADMIN],
        )
    )


def dispute_opened_notify(*, dispute: Dispute) -> None:
    _send(
        _("Dispute %(id)s: call %(call)s") % {"id": dispute.pk, "call": dispute.recording.external_id},
        _("Agent %(agent)s disputes a review of call %(call)s. Resolve it by %(due)s: %(url)s")
        % {
            "agent": dispute.agent_id,
            "call": dispute.recording.external_id,
            "due": dispute.due_at.date().isoformat(),
            "url": _link(reverse("disputes:detail", args=[dispute.pk])),
        },
        [lead.email for lead in _leads(dispute)],
    )


def dispute_resolved_notify(*, dispute: Dispute) -> None:
    _send(
        _("Your dispute of call %(call)s was resolved") % {"call": dispute.recording.external_id},
        _("A QA lead resolved your dispute of call %(call)s: %(url)s")
        % {
            "call": dispute.recording.external_id,
            "url": _link(reverse("agents:call", args=[dispute.recording_id])),
        },
        [dispute.opened_by.email],
    )
