"""E-mail to the agent when a session is opened for them, where the operator set mail up (EMAIL_URL or
EMAIL_HOST): sent after the commit, and a mail server that fails never fails the session."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils.translation import gettext as _

from access.models import Role
from coaching.models import CoachingSession

logger = logging.getLogger(__name__)


def email_configured() -> bool:
    return bool(getattr(settings, "EMAIL_URL", "") or getattr(settings, "EMAIL_HOST", ""))


def _agent_addresses(session: CoachingSession) -> list[str]:
    # The people whose agent membership in the session's workspace names its agent id: only they.
    users = get_user_model().objects.filter(
        is_active=True,
        memberships__workspace_id=session.workspace_id,
        memberships__role=Role.AGENT,
        memberships__agent_id=session.agent_id,
    )
    return sorted({user.email for user in users if user.email})


def coaching_created_notify(*, session: CoachingSession) -> None:
    recipients = _agent_addresses(session)
    if not recipients or not email_configured():
        return
    base = getattr(settings, "QA_PUBLIC_URL", "")
    path = reverse("coaching:mine-detail", args=[session.pk])
    subject = _("Coaching session: %(goal)s") % {"goal": session.goal[:80]}
    body = _("%(coach)s opened a coaching session with you. Goal: %(goal)s. Follow-up on %(date)s: %(url)s") % {
        "coach": session.coach.get_full_name() or session.coach.get_username(),
        "goal": session.goal,
        "date": session.follow_up_on.isoformat(),
        "url": base.rstrip("/") + path if base else path,
    }

    def send() -> None:
        try:
            send_mail(subject, body, None, recipients)
        except Exception:  # the session is stored; the agent's page lists it
            logger.exception("Could not send %r to %s", subject, recipients)

    transaction.on_commit(send)
