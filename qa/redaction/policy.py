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
    AR_CBU, ALL_TYPES, CARD_EXPIRY, CARD_SECURITY_CODE, CREDIT_CARD, IBAN_CODE, LANGUAGES, MODEL_TYPES,
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


def name_models() -> dict[str, str]:
    """The spaCy package that finds names and places, per language: the engine's, then
    settings.QA_REDACTION_NAME_MODELS ("es=es_core_news_md"), refused by name."""
    from .engine import MODELS

    models = dict(MODELS)
    for item in filter(None, (part.strip() for part in settings.QA_REDACTION_NAME_MODELS.split(","))):
        language, _, model = (piece.strip() for piece in item.partition("="))
        if language not in LANGUAGES or not model:
            raise ImproperlyConfigured(
                f"QA_REDACTION_NAME_MODELS: {item!r} is not LANGUAGE=package with a language of {', '.join(LANGUAGES)}."
            )
        models[language] = model
    return models


def name_model_missing(policy: dict[str, str], language: str) -> str:
    """Why names cannot be redacted in `language` under `policy`, or "" when they can: the policy masks
    names or places, which only the name model finds, and that model is not installed. Redacting then
    would pass every name through as if none were said, so callers refuse instead."""
    from .engine import model_available

    masked = [entity for entity in MODEL_TYPES if policy.get(entity) != Action.KEEP]
    model = name_models().get(language, "")
    if not masked or model_available(language, model):
        return ""
    return (
        f"the redaction policy masks {', '.join(masked)}, but the name model {model!r} for language "
        f"{language!r} is not installed: install it (scripts/spacy-models.txt), point QA_REDACTION_NAME_MODELS "
        f"at one that is, or set {'=keep,'.join(masked)}=keep in the policy."
    )
