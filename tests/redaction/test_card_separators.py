"""Card numbers written with other separators (issue 46's probe): no-break and zero-width spaces, dots,
a number dictated across two turns. They were stored as said and sent to the judge in full; dashes,
no separators and full-width digits were caught. Checked where it matters: what `manage.py redact`
writes and what the scripted LLM server received."""

from __future__ import annotations

import json

import pytest

from bench.redaction.corpus import card_variants, measure
from qa.models import JudgeRun
from qa.redaction.engine import find
from tests.factories import RecordingFactory
from tests.judge.conftest import judge_rubric
from tests.redaction.test_command import redact
from tests.redaction.test_judging import judge, sent_transcripts

CARD = "4539578763621486"  # passes Luhn

# The probe's cases (and the ones that were already caught, which must stay so): (transcript, the
# digits' groups as written, in order).
PROBE = {
    "no-break spaces": "CLIENTE: Es 4539\u00a05787\u00a06362\u00a01486, gracias\n",
    "narrow no-break spaces": "CLIENTE: Es 4539\u202f5787\u202f6362\u202f1486, gracias\n",
    "zero-width spaces": "CLIENTE: Es 4539\u200b5787\u200b6362\u200b1486, gracias\n",
    "dots": "CLIENTE: Es 4539.5787.6362.1486, gracias\n",
    "a space and a format character": "CLIENTE: Es 4539 \u200b5787 \u200b6362 \u200b1486, gracias\n",
    "two turns": "CLIENTE: La tarjeta es 4539 5787\nCLIENTE: 6362 1486\nAGENTE: Gracias.\n",
    "two turns, agent between labels": "AGENTE: ¿El número?\nCLIENTE: Es 4539 5787\nCLIENTE: 6362 1486, listo\n",
    "dashes": "CLIENTE: Es 4539-5787-6362-1486, gracias\n",
    "no separators": "CLIENTE: Es 4539578763621486, gracias\n",
    "full-width digits": "CLIENTE: Es ４５３９ ５７８７ ６３６２ １４８６, gracias\n",
}

# Look-alikes written the same ways, which the judge must still be able to quote.
KEPT = {
    "an operation number (fails Luhn) with no-break spaces": "AGENTE: Operación 4539\u00a05787\u00a06362\u00a01487.\n",
    "an amount with dots": "AGENTE: El saldo es $1.250.000.\n",
    "a date": "AGENTE: Vence el 2026-11-03.\n",
    "an order number": "CLIENTE: Mi pedido es 1234567890.\n",
    "a phone number across turns": "AGENTE: Lo llamo al 11 4567\nCLIENTE: 8901, sí.\n",
    "numbers that end one turn and start the next": "AGENTE: Son 4539 5787\nCLIENTE: 6362 pesos, y 1486.\n",
}


def digits(text: str) -> str:
    return "".join(char for char in text if char.isdigit())


def test_manage_py_redact_masks_every_separator_and_a_card_split_across_turns():
    lines = [json.dumps({"id": name, "text": text}, ensure_ascii=False) for name, text in PROBE.items()]
    result = redact(lines, "--language", "es")
    assert result.returncode == 0, result.stderr
    out = {line["id"]: line for line in map(json.loads, result.stdout.splitlines())}
    assert set(out) == set(PROBE)
    for name, text in PROBE.items():
        redacted = out[name]["text"]
        # Not one group of four digits of the card is left (as written, full-width or not).
        assert not any(group in digits(redacted) for group in ("4539", "5787", "6362", "1486")), (name, redacted)
        assert "[TARJETA_" in redacted, name
        cards = [entity for entity in out[name]["entities"] if entity["type"] == "CREDIT_CARD"]
        covered = "".join(digits(text[entity["start"] : entity["end"]]) for entity in cards)
        assert covered.translate(str.maketrans("０１２３４５６７８９", "0123456789")) == CARD, name
    # The split card's labels are left as they were: only the digits of each turn are replaced.
    assert out["two turns"]["text"].startswith("CLIENTE: La tarjeta es [TARJETA_")
    assert "\nCLIENTE: [TARJETA_" in out["two turns"]["text"]


def test_look_alikes_written_the_same_ways_are_kept():
    for name, text in KEPT.items():
        assert [item for item in find(text, "es", names=False) if item.type == "CREDIT_CARD"] == [], name


@pytest.mark.django_db
def test_no_card_reaches_the_judge_whatever_its_separators(fake_llm):
    rubric = judge_rubric(language="es")
    for text in PROBE.values():
        run = judge(RecordingFactory(rubric=rubric, transcript="AGENTE: Buenos días, le atiende Marta.\n" + text,
                                     agent_name="Marta Quiroga", language="es"))
        assert run.status == JudgeRun.Status.SUCCEEDED, run.error
    assert len(fake_llm.requests) == len(PROBE)
    everything = json.dumps(fake_llm.requests, ensure_ascii=False)
    for group in ("4539", "5787", "6362", "1486", "４５３９", "１４８６"):
        assert group not in everything
    assert all("[TARJETA_" in sent for sent in sent_transcripts(fake_llm))


@pytest.mark.parametrize("language", ["es", "en"])
def test_the_benchmarks_card_variants_are_all_found_and_their_look_alikes_kept(language):
    measured = measure(card_variants(language), lambda text, language, keep: find(text, language, names=False))
    assert measured.total["CREDIT_CARD"] >= 120
    assert not measured.misses, measured.misses[:10]
    assert not measured.masked_lookalikes, measured.masked_lookalikes[:10]
