"""The Spanish of the pages keeps one term per concept and one form of address, usted
(docs/dev/spanish.md): the walk met Panel and Cuadros de mando, Disputas and Reclamaciones, juez and
evaluador, and tú on the agent's pages beside usted everywhere else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

PO = Path(settings.BASE_DIR) / "locale" / "es" / "LC_MESSAGES" / "django.po"
ENTRY = re.compile(r'msgid ((?:"[^\n]*"\n)+)(?:msgid_plural (?:"[^\n]*"\n)+)?((?:msgstr(?:\[\d\])? (?:"[^\n]*"\n)+)+)')

# Forms of tú that no usted sentence has: the pronouns and possessives, and verbs in the second person.
# A tú imperative ("abre", "marca") is also the third person ("el título abre el informe"), so not listed.
TU = re.compile(
    r"\b(tú|tu|tus|te|ti|contigo|tuy[oa]s?|puedes|quieres|tienes|crees|debes|sabes|eres|estás|has|necesitas|"
    r"decidiste|enviaste|elegiste|marcaste|di)\b",
    re.IGNORECASE,
)
# A message that opens with a tú imperative is an instruction to the reader ("Da a «Saludo» un valor"): the
# same words inside a sentence are often the third person ("el juez da"), so only a message's first word.
TU_OPENING = re.compile(r"^(da|elige|escribe|pon|haz|indica|selecciona|pulsa|añade|marca|abre|introduce)\b", re.IGNORECASE)
# The terms not used, each beside the one that is (docs/dev/spanish.md).
NOT_USED = {
    r"cuadros? de mando": "panel (dashboard), ficha de puntuación (scorecard)",
    r"disputas?": "reclamación",
    r"evaluador(a|es|as)?": "juez",
    # The judge judges, but a judged call is evaluada: the third walk met «llamadas juzgadas» beside «evaluadas».
    r"(?:juzgad[oa]s?|juzgar)": "evaluada, evaluar (a call the judge scored)",
    r"tableros?": "panel",
    r"N/A": "«No aplica» (issue 41: the review page said «No aplica», the reports N/A)",
}
LABELS = {
    "Dashboard": "Panel",
    "Scorecards": "Fichas de puntuación",
    "My scorecard": "Mi ficha de puntuación",
    "Disputes": "Reclamaciones",
    "Disputes open": "Reclamaciones abiertas",
    "Judge": "Juez",
}


def _text(block: str) -> str:
    return "".join(re.findall(r'"(.*)"', block)).replace('\\"', '"')


def translations() -> dict[str, str]:
    return {_text(msgid): _text(msgstr) for msgid, msgstr in ENTRY.findall(PO.read_text(encoding="utf-8"))}


def test_the_spanish_says_usted_never_tu():
    found = {msgid: match.group(0) for msgid, text in translations().items() if (match := TU.search(text))}
    assert found == {}


@pytest.mark.parametrize("term", sorted(NOT_USED))
def test_one_term_per_concept(term):
    # Not \b after a term that ends in a symbol ("N/A"): no word character follows it to make a boundary.
    found = [text for text in translations().values() if re.search(rf"\b{term}(?!\w)", text, re.IGNORECASE)]
    assert found == [], f"use {NOT_USED[term]}"


def test_the_labels_name_each_concept_once():
    texts = translations()
    assert {msgid: texts[msgid] for msgid in LABELS} == LABELS


def test_no_message_opens_with_a_tu_imperative():
    found = {msgid: text for msgid, text in translations().items() if TU_OPENING.search(text)}
    assert found == {}, "usted: Dé, Elija, Escriba, Ponga, Haga, Indique, Seleccione, Pulse, Añada, Marque, Abra, Introduzca"
