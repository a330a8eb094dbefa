"""`manage.py check --deploy`: a production that would redact names without the model that finds them
is refused before it judges a call (each call is refused too: qa.redaction.services)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError

from .policy import DEFAULTS, name_model_missing, parse_setting, policy_get
from .types import LANGUAGES


@register(Tags.security, deploy=True)
def name_models_check(app_configs=None, **kwargs) -> list[Error]:
    try:
        try:
            policy = policy_get()
        except DatabaseError:  # no database yet (a check before migrate): the settings' policy
            policy = {**DEFAULTS, **parse_setting(settings.QA_REDACTION_POLICY)}
        reasons = [reason for language in LANGUAGES if (reason := name_model_missing(policy, language))]
    except ImproperlyConfigured as error:
        return [Error(str(error), id="qa.E002")]
    return [
        Error(
            f"Names cannot be redacted: {reason}",
            hint="Without the model no name is found, so every call would be refused before judging.",
            id="qa.E001",
        )
        for reason in reasons
    ]
