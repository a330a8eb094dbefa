"""The redaction policy: its defaults, the setting, the admin, and the per-recording counts shown there."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from qa.redaction.models import RecordingRedaction, RedactionPolicy
from qa.redaction.policy import parse_setting, policy_get
from qa.redaction.services import recording_redact
from tests.factories import RecordingFactory

pytestmark = pytest.mark.django_db

CALL = ("AGENTE: Le atiende Marta.\nCLIENTE: Soy Lucía Fernández, la tarjeta es 4111 1111 1111 1111, el código "
        "de seguridad 123 y mi correo lucia@example.com; el CBU 0170099220000067797370.\n")


def test_defaults_mask_cards_and_bank_accounts_at_rest_and_the_rest_for_external_models():
    policy = policy_get()
    assert {kind for kind, action in policy.items() if action == "mask_at_rest"} == {
        "CREDIT_CARD", "CARD_EXPIRY", "CARD_SECURITY_CODE", "AR_CBU", "IBAN_CODE"
    }
    assert policy["PERSON"] == policy["EMAIL_ADDRESS"] == policy["AR_DNI"] == "mask_for_llm"


def test_the_setting_then_the_admin_override_the_defaults(settings):
    settings.QA_REDACTION_POLICY = "PERSON=keep, PHONE_NUMBER=mask_at_rest"
    assert policy_get()["PERSON"] == "keep" and policy_get()["PHONE_NUMBER"] == "mask_at_rest"
    RedactionPolicy.objects.create(entity_type="PERSON", action="mask_at_rest")
    assert policy_get()["PERSON"] == "mask_at_rest"


@pytest.mark.parametrize("value, message", [
    ("CARD=keep", "unknown entity type 'CARD'"),
    ("PERSON=hide", "PERSON='hide' is not one of mask_at_rest, mask_for_llm, keep"),
])
def test_a_wrong_setting_is_refused_by_name(value, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        parse_setting(value)


def test_at_rest_masking_and_the_counts(settings):
    recording = RecordingFactory(transcript=CALL, agent_name="Marta Quiroga", language="es")
    redaction = recording_redact(recording_id=recording.pk)
    recording.refresh_from_db()
    assert "4111" not in recording.transcript and "0170099220000067797370" not in recording.transcript
    assert "[TARJETA_1]" in recording.transcript and "[CODIGO_SEGURIDAD_1]" in recording.transcript
    assert "Lucía Fernández" in recording.transcript and "lucia@example.com" in recording.transcript
    assert redaction.masked_at_rest == {"CREDIT_CARD": 1, "CARD_SECURITY_CODE": 1, "AR_CBU": 1}
    assert redaction.masked_for_llm == {"PERSON": 1, "EMAIL_ADDRESS": 1}
    # The positions kept for the external judge point at the values in the stored (masked) transcript.
    assert [recording.transcript[start:end] for _kind, start, end in redaction.llm_spans] == [
        "Lucía Fernández", "lucia@example.com"
    ]
    assert recording_redact(recording_id=recording.pk) == redaction  # once only


def test_the_admin_sets_the_policy_and_shows_the_counts(admin_client):
    response = admin_client.post("/admin/qa/redactionpolicy/add/", {"entity_type": "EMAIL_ADDRESS", "action": "mask_at_rest"})
    assert response.status_code == 302
    recording = RecordingFactory(transcript=CALL, agent_name="Marta Quiroga", language="es")
    recording_redact(recording_id=recording.pk)
    recording.refresh_from_db()
    assert "lucia@example.com" not in recording.transcript and "[EMAIL_1]" in recording.transcript
    page = admin_client.get(f"/admin/qa/recording/{recording.pk}/change/").content.decode()
    assert "Card number: 1" in page and "E-mail address: 1" in page and "Person&#x27;s name: 1" in page
    assert RecordingRedaction.objects.get(recording=recording).masked_at_rest["EMAIL_ADDRESS"] == 1


def test_check_deploy_refuses_a_policy_that_masks_names_without_the_name_model():
    from tests.test_deployment import PRODUCTION, manage

    missing = manage("check", "--deploy", **PRODUCTION, QA_REDACTION_NAME_MODELS="es=es_core_news_not_installed")
    assert missing.returncode != 0
    assert "qa.E001" in missing.stderr and "'es_core_news_not_installed'" in missing.stderr
    kept = manage(
        "check", "--deploy", **PRODUCTION, QA_REDACTION_NAME_MODELS="es=es_core_news_not_installed",
        QA_REDACTION_POLICY="PERSON=keep,LOCATION=keep",
    )  # fmt: skip
    assert "qa.E001" not in kept.stderr, kept.stderr
