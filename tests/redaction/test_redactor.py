"""The redactor's rules on small calls: what is masked, what survives, the placeholders, the labels,
and how offsets in the redacted text map back to the transcript."""

from __future__ import annotations

import pytest

from qa.redaction.engine import PLACEHOLDER, find, model_available, redact

ES_CALL = """AGENTE: Buenos días, le atiende Marta de Telco Sur. ¿Con quién hablo?
CLIENTE: Hola, soy María Gómez. La tarjeta es 4111 1111 1111 1111, vence 03/27, el código de seguridad 123.
AGENTE: Gracias, señora Gómez. Repito la tarjeta: 4111-1111-1111-1111. Su reclamo es el 4417-22 por 18.450 pesos.
CLIENTE: Mi otra tarjeta es la 5425 2334 3010 9903 y mi correo maria.gomez@gmail.com.
"""


def spans(text, found):
    return [(item.type, text[item.start : item.end]) for item in found]


def test_spanish_call_masks_card_data_and_names_and_keeps_what_the_judge_quotes():
    found = find(ES_CALL, "es", keep_names=["Marta Quiroga"])
    got = spans(ES_CALL, found)
    assert ("CREDIT_CARD", "4111 1111 1111 1111") in got
    assert ("CREDIT_CARD", "4111-1111-1111-1111") in got
    assert ("CARD_EXPIRY", "03/27") in got
    assert ("CARD_SECURITY_CODE", "123") in got
    assert ("PERSON", "María Gómez") in got
    assert ("EMAIL_ADDRESS", "maria.gomez@gmail.com") in got
    masked_text = "".join(ES_CALL[item.start : item.end] for item in found)
    for survivor in ("4417-22", "18.450", "Marta", "AGENTE", "CLIENTE", "señora"):
        assert survivor not in masked_text


def test_placeholders_are_typed_numbered_per_call_and_consistent():
    found = find(ES_CALL, "es", keep_names=["Marta Quiroga"])
    spanish = redact(ES_CALL, found, placeholder_language="es")
    # The same card said twice (spaced, then dashed) is [TARJETA_1] both times; the other is _2.
    assert spanish.text.count("[TARJETA_1]") == 2
    assert spanish.text.count("[TARJETA_2]") == 1
    assert "[NOMBRE_1]" in spanish.text and "[CODIGO_SEGURIDAD_1]" in spanish.text
    assert "4111" not in spanish.text and "María" not in spanish.text
    # "señora Gómez" after "María Gómez": a surname of a name already said is that person again.
    assert spanish.text.count("[NOMBRE_1]") == 2 and "[NOMBRE_2]" not in spanish.text
    english = redact(ES_CALL, found, placeholder_language="en")
    assert english.text.count("[CARD_1]") == 2 and "[NAME_1]" in english.text
    assert all(PLACEHOLDER.fullmatch(item.placeholder) for item in spanish.masked)
    assert spanish.counts()["CREDIT_CARD"] == 3


def test_only_the_chosen_types_are_replaced():
    found = find(ES_CALL, "es")
    card_only = redact(ES_CALL, found, placeholder_language="es", types={"CREDIT_CARD", "CARD_SECURITY_CODE"})
    assert "María Gómez" in card_only.text and "maria.gomez@gmail.com" in card_only.text
    assert "4111" not in card_only.text and "[CODIGO_SEGURIDAD_1]" in card_only.text


def test_offsets_map_back_onto_the_source():
    found = find(ES_CALL, "es")
    redaction = redact(ES_CALL, found, placeholder_language="es")
    out = redaction.text
    # A stretch outside placeholders maps to the same words in the source.
    phrase = "Su reclamo es el 4417-22"
    start = out.index(phrase)
    source_start, source_end = redaction.to_source(start, start + len(phrase))
    assert ES_CALL[source_start:source_end] == phrase
    # A span that covers a placeholder covers the whole entity in the source.
    start = out.index("La tarjeta es [TARJETA_1]")
    end = start + len("La tarjeta es [TARJETA_1]")
    source_start, source_end = redaction.to_source(start, end)
    assert ES_CALL[source_start:source_end] == "La tarjeta es 4111 1111 1111 1111"
    # Every entity's recorded output span is its placeholder.
    for item in redaction.masked:
        assert out[item.out_start : item.out_end] == item.placeholder
        assert redaction.to_source(item.out_start, item.out_end) == (item.start, item.end)


def test_speaker_labels_are_never_redacted():
    text = "María Gómez: Hola, buenos días.\nAGENTE: Buenos días, María Gómez.\n"
    found = find(text, "es")
    assert [text[item.start : item.end] for item in found] == ["María Gómez"]
    assert found[0].start > text.index("\n")


@pytest.mark.parametrize(
    "text",
    [
        "AGENTE: El número de caso es 4417-22.\n",
        "AGENTE: Le abro el reclamo 88123456, anótelo.\n",
        "CLIENTE: Mi pedido es el 1234567890.\n",
        "AGENTE: El total es $ 1.250.000, con el recargo.\n",
        "AGENTE: La devolución tarda 10 días hábiles, el 15% del total, el 20/11/2026 a las 18:30.\n",
        "AGENTE: El número de operación es 4111 1111 1111 1112.\n",
        "AGENT: The case number is 4417-22 and your order 4155550123 ships November 5, 2026.\n",
    ],
)
def test_lookalikes_survive(text):
    language = "en" if text.startswith("AGENT:") else "es"
    assert find(text, language) == []


def test_agent_name_survives_unless_not_given():
    text = "AGENTE: Buenos días, le atiende Marta Quiroga. ¿En qué puedo ayudarle?\n"
    assert find(text, "es", keep_names=["Marta Quiroga"]) == []
    assert [item.type for item in find(text, "es")] == ["PERSON"]


def test_patterns_alone_find_no_names():
    text = "CLIENTE: Soy María Gómez, la tarjeta es 4111 1111 1111 1111.\n"
    assert [item.type for item in find(text, "es", names=False)] == ["CREDIT_CARD"]


def test_both_models_are_installed():
    """scripts/test installs both (scripts/spacy-models.txt); without one, that language's names are not redacted."""
    assert model_available("es") and model_available("en")


def test_unknown_language_is_refused_by_name():
    with pytest.raises(ValueError, match="redaction language must be one of es, en, not 'pt'"):
        find("A: hola\n", "pt")
    with pytest.raises(ValueError, match="placeholder language must be one of es, en, not 'fr'"):
        redact("A: hola\n", [], placeholder_language="fr")
