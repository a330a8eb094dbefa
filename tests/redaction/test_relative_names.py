"""A family member's name said after the relation (issue 46: "Mi hija Valentina Pérez llamará..." was
left as said while "Mi esposo Joaquín Ruiz" was masked): any relation word after a possessive, then a
capitalised name, in Spanish and English (qa.redaction.recognizers.RelativeNameRecognizer)."""

from __future__ import annotations

import pytest

from qa.redaction.engine import find, model_available

FOUND = {
    "es": [
        ("CLIENTE: Mi hija Valentina Pérez llamará…\n", "Valentina Pérez"),
        ("CLIENTE: Mi hija Valentina llamará mañana.\n", "Valentina"),
        ("CLIENTE: Mi hermano Tomás va a pasar por la sucursal.\n", "Tomás"),
        ("CLIENTE: Mi esposo Joaquín Ruiz es el titular.\n", "Joaquín Ruiz"),
        ("CLIENTE: La cuenta la paga mi suegra, Rosa Díaz de la Fuente.\n", "Rosa Díaz de la Fuente"),
        ("CLIENTE: Ayer vino su nieto Bruno a pagar.\n", "Bruno"),
        ("AGENTE: ¿Su padre Ernesto sigue siendo el titular?\n", "Ernesto"),
    ],
    "en": [
        ("CUSTOMER: My brother Tom will call tomorrow.\n", "Tom"),
        ("CUSTOMER: My daughter Emily Carter set it up.\n", "Emily Carter"),
        ("CUSTOMER: Her son Will Smith paid it.\n", "Will Smith"),
        ("CUSTOMER: My mother-in-law Ann pays that bill.\n", "Ann"),
        ("AGENT: Is your husband, Mark, on the account?\n", "Mark"),
    ],
}

KEPT = {
    "es": [
        "CLIENTE: Mi hija llamará mañana.\n",
        "CLIENTE: Son las cinco, mi hermano llega tarde.\n",
        "CLIENTE: Mi hija.\nAGENTE: Perfecto.\n",  # the label on the next line is not her name
    ],
    "en": ["CUSTOMER: My son. Okay, thanks.\n", "CUSTOMER: my brother will call.\n"],
}


@pytest.mark.parametrize(("language", "text", "name"), [(lang, t, n) for lang, cases in FOUND.items() for t, n in cases])
@pytest.mark.parametrize("with_model", [True, False])
def test_a_relatives_name_is_found(language, text, name, with_model, monkeypatch):
    if with_model and not model_available(language):
        pytest.skip("the name model is not installed")
    if not with_model:  # the rule alone, as on a machine without the model
        monkeypatch.setattr("qa.redaction.engine.model_available", lambda language, model=None: False)
        from qa.redaction import engine

        engine.analyzer.cache_clear()
    try:
        found = [(item.type, text[item.start : item.end]) for item in find(text, language)]
    finally:
        if not with_model:
            monkeypatch.undo()
            engine.analyzer.cache_clear()
    assert ("PERSON", name) in found, found


@pytest.mark.parametrize(("language", "text"), [(lang, t) for lang, texts in KEPT.items() for t in texts])
def test_a_relation_without_a_name_masks_nothing(language, text):
    assert [item for item in find(text, language) if item.type == "PERSON"] == []
