"""What the redactor stores: the operator's policy per entity type, and per recording what was masked.

Registered as models of the qa app (qa.models imports this module)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from .types import ALL_TYPES


class Action(models.TextChoices):
    # The stored transcript, its audio and every page carry the placeholder; the value is gone.
    MASK_AT_REST = "mask_at_rest", _("Mask at rest")
    # Stored as said; replaced only in what is sent to a model that is not the local one.
    MASK_FOR_LLM = "mask_for_llm", _("Mask for external models")
    KEEP = "keep", _("Keep")


ENTITY_CHOICES = [
    ("CREDIT_CARD", _("Card number")), ("CARD_EXPIRY", _("Card expiry")),
    ("CARD_SECURITY_CODE", _("Card security code")), ("AR_DNI", _("Argentine DNI")),
    ("AR_CUIT", _("Argentine CUIT/CUIL")), ("ES_NIF", _("Spanish NIF")), ("ES_NIE", _("Spanish NIE")),
    ("CL_RUT", _("Chilean RUT")), ("MX_CURP", _("Mexican CURP")), ("AR_CBU", _("Argentine CBU")),
    ("IBAN_CODE", _("IBAN")), ("EMAIL_ADDRESS", _("E-mail address")), ("PHONE_NUMBER", _("Phone number")),
    ("US_SSN", _("US Social Security number")), ("PERSON", _("Person's name")), ("LOCATION", _("Place")),
]
assert [value for value, _label in ENTITY_CHOICES] == list(ALL_TYPES)


class RedactionPolicy(models.Model):
    """The operator's choice for one entity type, over the default (settings.QA_REDACTION_POLICY)."""

    entity_type = models.CharField(_("entity type"), max_length=32, choices=ENTITY_CHOICES, unique=True)
    action = models.CharField(_("action"), max_length=16, choices=Action.choices)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "qa"
        ordering = ["entity_type"]
        verbose_name = _("redaction policy")
        verbose_name_plural = _("redaction policies")

    def __str__(self) -> str:
        return f"{self.get_entity_type_display()}: {self.get_action_display()}"


class RecordingRedaction(models.Model):
    """A recording's pass through the redactor: how many entities of each type it masked at rest, and
    where in the stored transcript the ones masked for external models lie (offsets and types only:
    never the values), so each judgment builds the same redacted text without finding them again."""

    recording = models.OneToOneField("qa.Recording", on_delete=models.CASCADE, related_name="redaction")
    language = models.CharField(max_length=10)
    masked_at_rest = models.JSONField(_("masked at rest"), default=dict, help_text=_("Entities per type."))
    masked_for_llm = models.JSONField(_("masked for external models"), default=dict, help_text=_("Entities per type."))
    # [[type, start, end], ...] into the stored transcript, for the mask_for_llm types.
    llm_spans = models.JSONField(default=list)
    # [[start_ms, end_ms], ...]: where the stored audio was silenced over a mask_at_rest entity.
    silenced_ms = models.JSONField(_("audio silenced (ms)"), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "qa"
        verbose_name = _("redaction")
        verbose_name_plural = _("redactions")

    def __str__(self) -> str:
        return f"redaction of recording {self.recording_id}"
