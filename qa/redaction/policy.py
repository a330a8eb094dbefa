"""The redaction policy: per entity type, mask at rest, mask for external models, or keep.

Defaults (issue 29; PCI DSS forbids keeping a card number in a stored transcript or recording): cards,
their expiry and security codes, and bank accounts (CBU, IBAN) are masked at rest; everything else is
masked for external models. settings.QA_REDACTION_POLICY overrides the defaults
("PERSON=keep,PHONE_NUMBER=mask_at_rest"), and the admin's redaction policies override both."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .models import Action, RedactionPolicy
from .types import (
    AR_CBU, ALL_TYPES, CARD_EXPIRY, CARD_SECURITY_CODE, CREDIT_CARD, IBAN_CODE,
)

DEFAULTS = {
    entity: Action.MASK_AT_REST if entity in {CREDIT_CARD, CARD_EXPIRY, CARD_SECURITY_CODE, AR_CBU, IBAN_CODE}
    else Action.MASK_FOR_LLM
    for entity in ALL_TYPES
}


def parse_setting(value: str) -> dict[str, str]:
    """QA_REDACTION_POLICY as written: TYPE=action pairs separated by commas; refused by name."""
    policy: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        entity, _, action = (piece.strip() for piece in item.partition("="))
        if entity not in ALL_TYPES:
            raise ImproperlyConfigured(
                f"QA_REDACTION_POLICY: unknown entity type {entity!r} (one of {', '.join(ALL_TYPES)})."
            )
        if action not in Action.values:
            raise ImproperlyConfigured(
                f"QA_REDACTION_POLICY: {entity}={action!r} is not one of {', '.join(Action.values)}."
            )
        policy[entity] = action
    return policy


def policy_get() -> dict[str, str]:
    """The action for every entity type now: defaults, then the setting, then the admin's rows."""
    policy = {**DEFAULTS, **parse_setting(settings.QA_REDACTION_POLICY)}
    policy.update(RedactionPolicy.objects.values_list("entity_type", "action"))
    return policy


def types_with(policy: dict[str, str], action: str) -> set[str]:
    return {entity for entity, chosen in policy.items() if chosen == action}
