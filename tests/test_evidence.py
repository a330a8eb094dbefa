"""Table tests for qa.evidence: every rule of the verifier, in Spanish and English, clean and ASR-style.

Plain pytest functions, no Django: run with ``python -m pytest tests/test_evidence.py -p no:django``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from qa.evidence import (
    PARAPHRASE_THRESHOLD,
    VERIFIER_VERSION,
    Closest,
    EvidenceCheck,
    Status,
    Turn,
    parse_turns,
    verify_evidence,
)
from qa import evidence as evidence_module

ES = """AGENTE: Buenas tardes, le habla Mariana de Telecom Norte. ¿En qué puedo ayudarle?
CLIENTE: Hola, llamo porque me cobraron dos veces la factura de octubre.
CLIENTE: Ya hice el reclamo la semana pasada y nadie me respondió.
AGENTE: Entiendo, disculpe las molestias. ¿Me confirma su número de documento?
CLIENTE: Sí, es el 30.456.789.
AGENTE: Gracias. Veo el doble cobro de 4.500 pesos en su cuenta.
CLIENTE: ¿Me mandan el comprobante hoy?
AGENTE: Sí, te lo mando hoy antes de las 18 por correo, con el número de reclamo.
CLIENTE: ¿Y cuándo me devuelven la plata? Porque ya pagué y encima me lo cobraron otra vez.
AGENTE: El reintegro se acredita en cinco días hábiles.
  Si no lo ve en su resumen, vuelva a llamarnos.
CLIENTE: Bueno, gracias. No quiero que vuelva a pasar.
AGENTE: Queda registrado. ¿Algo más en lo que pueda ayudarle?
CLIENTE: No, eso es todo. Gracias, Mariana.
"""

# The same call as an ASR engine writes it: no accents, no punctuation, lower-case labels, noise tags.
ES_ASR = """agente: buenas tardes le habla mariana de telecom norte en que puedo ayudarle
cliente: hola llamo porque me cobraron dos veces la factura de octubre
cliente: ya hice el reclamo la semana pasada y nadie me respondio
agente: entiendo disculpe las molestias me confirma su numero de documento
cliente: si es el 30 456 789
agente: gracias veo el doble cobro de 4500 pesos en su cuenta
cliente: me mandan el comprobante hoy
agente: si te lo mando hoy antes de las 18 [ruido] por correo con el numero de reclamo
cliente: y cuando me devuelven la plata porque ya pague y encima me lo cobraron otra vez
agente: el reintegro se acredita en cinco dias habiles si no lo ve en su resumen vuelva a llamarnos
cliente: <unk> bueno gracias no quiero que vuelva a pasar
"""

EN = """AGENT: Thank you for calling Northwind Bank, this is Sam. How can I help you today?
CUSTOMER: Hi, I'd like to dispute a charge of $49.99 from last Tuesday.
AGENT: I'm sorry to hear that. Can you confirm the last four digits of your card?
CUSTOMER: It's 4821.
AGENT: Thanks. I've opened a dispute and you'll get an e-mail within 24 hours.
CUSTOMER: Great. I don't want to be charged again.
AGENT: I won't let that happen: the card has been blocked and a new one ships tomorrow.
CUSTOMER: Perfect, thank you so much.
"""

EN_ASR = """agent: thank you for calling northwind bank this is sam how can i help you today
customer: hi id like to dispute a charge of 49 99 from last tuesday
agent: im sorry to hear that [noise] can you confirm the last four digits of your card
customer: its 4821
agent: thanks ive opened a dispute and youll get an e mail within 24 hours
customer: great i dont want to be charged again
"""

TRANSCRIPTS = {"es": ES, "es_asr": ES_ASR, "en": EN, "en_asr": EN_ASR}

# (transcript, evidence, expected status)
CASES = [
    # --- the issue's examples
    ("es", "AGENTE: Te lo mando hoy antes de las 18.", Status.VERIFIED),
    ("es", "“te lo mando hoy antes de las 18”", Status.VERIFIED),
    ("es", "agente: te lo mando hoy antes de las 17", Status.PARAPHRASE),
    ("es", "CLIENTE: te lo mando hoy antes de las 18", Status.WRONG_SPEAKER),
    ("es", "The agent did not provide a specific timeframe.", Status.NOT_FOUND),
    ("es", "CLIENTE: ... y encima me lo cobraron", Status.VERIFIED),
    # --- case, accents, punctuation, quote marks, whitespace
    ("es", "SI, TE LO MANDO HOY ANTES DE LAS 18 POR CORREO", Status.VERIFIED),
    ("es", "«el reintegro se acredita en cinco dias habiles»", Status.VERIFIED),
    ("es", "'te lo mando hoy' antes de las 18", Status.VERIFIED),
    ("es", "‘Sí’, te lo\n   mando hoy — antes de las 18!!", Status.VERIFIED),
    ("es", 'El "reintegro" se acredita en cinco días', Status.VERIFIED),
    ("es", "se acredita en cinco días hábiles. Si no lo ve en su resumen", Status.VERIFIED),  # continuation line
    ("es", "veo el doble cobro de 4.500 pesos", Status.VERIFIED),
    ("es", "veo el doble cobro de 4.600 pesos", Status.PARAPHRASE),
    ("es", "cliente: es el 30.456.789", Status.VERIFIED),
    # --- changed, added or dropped words are not literal
    ("es", "te lo mando mañana antes de las 18", Status.PARAPHRASE),
    ("es", "no te lo mando hoy antes de las 18", Status.PARAPHRASE),
    ("es", "te lo mando antes de las 18", Status.PARAPHRASE),
    ("es", "te lo mando hoy antes de las 1", Status.PARAPHRASE),  # a cut number is another number
    ("es", "El agente no ofreció un plazo concreto para el reintegro.", Status.NOT_FOUND),
    ("es", "El cliente dice que le cobraron dos veces.", Status.NOT_FOUND),
    # --- real quote plus a fabricated sentence, after or before
    ("es", "te lo mando hoy antes de las 18. Además le hacemos un descuento del 20%.", Status.NOT_FOUND),
    ("es", "Le pido disculpas en nombre de la empresa. Te lo mando hoy antes de las 18.", Status.NOT_FOUND),
    # --- ellipses: fragments in order, without overlap
    ("es", "te lo mando hoy ... con el número de reclamo", Status.VERIFIED),
    ("es", "te lo mando hoy … con el número de reclamo", Status.VERIFIED),
    ("es", "te lo mando hoy [...] con el número de reclamo", Status.VERIFIED),
    ("es", "te lo mando hoy (...) con el número de reclamo", Status.VERIFIED),
    ("es", "...te lo mando hoy antes de las 18...", Status.VERIFIED),
    ("es", "me cobraron dos veces ... te lo mando hoy ... cinco días hábiles", Status.VERIFIED),
    ("es", "con el número de reclamo ... te lo mando hoy", Status.OUT_OF_ORDER),
    ("es", "te lo mando hoy antes ... antes de las 18", Status.OUT_OF_ORDER),  # overlapping fragments
    ("es", "te lo mando hoy ... y le regalamos un mes gratis", Status.PARTIAL),
    ("es", "le regalamos un mes gratis ... te lo mando hoy", Status.PARTIAL),
    # --- speaker labels
    ("es", "AGENTE: con el número de reclamo", Status.VERIFIED),  # not the turn's start
    ("es", "Agente: El reintegro se acredita en cinco días hábiles", Status.VERIFIED),
    ("es", "CLIENTE: el reintegro se acredita en cinco días", Status.WRONG_SPEAKER),
    ("es", "AGENTE: ... y encima me lo cobraron", Status.WRONG_SPEAKER),
    ("es", "CLIENTE: ¿Me mandan el comprobante hoy? AGENTE: Sí, te lo mando hoy", Status.VERIFIED),
    ("es", "CLIENTE: ¿Me mandan el comprobante hoy?\nAGENTE: Sí, te lo mando hoy", Status.VERIFIED),
    ("es", "AGENTE: ¿Me mandan el comprobante hoy? CLIENTE: Sí, te lo mando hoy", Status.WRONG_SPEAKER),
    ("es", "¿Me mandan el comprobante hoy? CLIENTE: Sí, te lo mando hoy", Status.WRONG_SPEAKER),
    ("es", "te lo mando hoy AGENTE: antes de las 18", Status.WRONG_SPEAKER),  # no turn starts there
    ("es", "CLIENTE: ¿Me mandan el comprobante hoy? Sí, te lo mando hoy", Status.WRONG_SPEAKER),
    ("es", "¿Me mandan el comprobante hoy? Sí, te lo mando hoy", Status.VERIFIED),  # unattributed
    ("es", "CLIENTE: me cobraron dos veces la factura ... AGENTE: te lo mando hoy", Status.VERIFIED),
    ("es", "CLIENTE: me cobraron dos veces la factura ... te lo mando hoy", Status.VERIFIED),  # 2nd unattributed
    ("es", "CLIENTE: me cobraron dos veces la factura ... CLIENTE: te lo mando hoy", Status.WRONG_SPEAKER),
    ("es", "la factura de octubre. CLIENTE: Ya hice el reclamo", Status.VERIFIED),  # same speaker, next turn
    ("es", "CLIENTE: de octubre. Ya hice el reclamo", Status.VERIFIED),  # split turns of one speaker
    ("es", "SUPERVISOR: te lo mando hoy antes de las 18", Status.PARAPHRASE),  # not a label here: a word
    # --- too short or empty
    ("es", None, Status.EMPTY),
    ("es", "", Status.EMPTY),
    ("es", "  \n\t ", Status.EMPTY),
    ("es", "Sí.", Status.TOO_SHORT),
    ("es", "“cinco días”", Status.TOO_SHORT),
    ("es", "AGENTE: cinco días", Status.TOO_SHORT),  # labels don't count as words
    ("es", "AGENTE:", Status.TOO_SHORT),
    ("es", "...", Status.TOO_SHORT),
    ("es", "“ ” ¿? [...]", Status.TOO_SHORT),
    ("es", "CLIENTE: ... AGENTE: ...", Status.TOO_SHORT),
    ("es", "te lo mando hoy ... reclamo", Status.TOO_SHORT),  # a one-word fragment
    ("es", "[ruido] [ruido] hoy", Status.TOO_SHORT),
    # --- ASR transcript, quotes written with accents and punctuation
    ("es_asr", "AGENTE: Sí, te lo mando hoy antes de las 18 por correo, con el número de reclamo.", Status.VERIFIED),
    ("es_asr", "CLIENTE: “Ya hice el reclamo la semana pasada y nadie me respondió.”", Status.VERIFIED),
    ("es_asr", "agente: El reintegro se acredita en cinco días hábiles. Si no lo ve en su resumen", Status.VERIFIED),
    ("es_asr", "cliente: Bueno, gracias. No quiero que vuelva a pasar.", Status.VERIFIED),
    ("es_asr", "CLIENTE: ¿Y cuándo me devuelven la plata? … y encima me lo cobraron otra vez", Status.VERIFIED),
    ("es_asr", "agente: veo el doble cobro de 4500 pesos", Status.VERIFIED),
    ("es_asr", "agente: veo el doble cobro de 4.500 pesos", Status.PARAPHRASE),  # ASR wrote 4500 as one word
    ("es_asr", "CLIENTE: te lo mando hoy antes de las 18", Status.WRONG_SPEAKER),
    ("es_asr", "te lo mando hoy antes de las 19 por correo", Status.PARAPHRASE),
    ("es_asr", "El agente no confirmó el plazo de reintegro.", Status.NOT_FOUND),
    # --- English
    ("en", "AGENT: Thank you for calling Northwind Bank", Status.VERIFIED),
    ("en", "I'd like to dispute a charge of $49.99", Status.VERIFIED),
    ("en", "Id like to dispute a charge of 49.99", Status.VERIFIED),
    ("en", "I’d like to dispute a charge of $49.99", Status.VERIFIED),  # curly apostrophe
    ("en", "I would like to dispute a charge of $49.99", Status.PARAPHRASE),
    ("en", "a charge of $49.98 from last Tuesday", Status.PARAPHRASE),
    ("en", "customer: I don't want to be charged again", Status.VERIFIED),
    ("en", "customer: I want to be charged again", Status.PARAPHRASE),
    ("en", "I do want to be charged again", Status.PARAPHRASE),
    ("en", "I've opened a dispute and you'll get an e-mail within 24 hours", Status.VERIFIED),
    ("en", "I've opened a dispute and you'll get an e mail within 24 hours", Status.VERIFIED),
    ("en", "I've not opened a dispute", Status.PARAPHRASE),
    ("en", "you'll get an e-mail within 48 hours", Status.PARAPHRASE),
    ("en", "CUSTOMER: It's 4821. AGENT: Thanks. I've opened a dispute", Status.VERIFIED),
    ("en", "AGENT: It's 4821. CUSTOMER: Thanks. I've opened a dispute", Status.WRONG_SPEAKER),
    ("en", "CUSTOMER: I won't let that happen", Status.WRONG_SPEAKER),
    ("en", "AGENT: the card has been blocked and a new one ships tomorrow", Status.VERIFIED),  # after a colon
    ("en", "Thank you for calling … Can you confirm the last four digits", Status.VERIFIED),
    ("en", "Can you confirm the last four digits … Thank you for calling", Status.OUT_OF_ORDER),
    ("en", "I've opened a dispute. Your refund is guaranteed within 24 hours.", Status.NOT_FOUND),
    ("en", "Your refund is guaranteed. I've opened a dispute and you'll get an e-mail", Status.PARAPHRASE),
    ("en", "The agent did not provide a specific timeframe.", Status.NOT_FOUND),
    ("en", "The agent apologised and confirmed the card was blocked.", Status.NOT_FOUND),
    ("en", "CUSTOMER: It's 4821.", Status.TOO_SHORT),
    ("en", "Thank you for calling ... Sam", Status.TOO_SHORT),
    ("en", "Thanks.", Status.TOO_SHORT),
    ("en", "AGENT: ... the card has been blocked", Status.VERIFIED),
    ("en", "CUSTOMER: ... the card has been blocked", Status.WRONG_SPEAKER),
    # --- English ASR
    ("en_asr", "AGENT: I'm sorry to hear that. Can you confirm the last four digits of your card?", Status.VERIFIED),
    ("en_asr", "CUSTOMER: Hi, I'd like to dispute a charge of $49.99 from last Tuesday.", Status.VERIFIED),
    ("en_asr", "Great. I don't want to be charged again.", Status.VERIFIED),
    ("en_asr", "AGENT: I've opened a dispute and you'll get an e-mail within 24 hours.", Status.VERIFIED),
    ("en_asr", "AGENT: Great. I don't want to be charged again.", Status.WRONG_SPEAKER),
    ("en_asr", "you'll get an email within 24 hours", Status.PARAPHRASE),  # hyphens split: e-mail is two words
    ("en_asr", "The customer was told the card would be replaced.", Status.NOT_FOUND),
]


@pytest.mark.parametrize(("name", "evidence", "expected"), CASES)
def test_status_table(name: str, evidence: str | None, expected: Status) -> None:
    check = verify_evidence(evidence, TRANSCRIPTS[name])
    assert check.status == expected
    assert check.verified is (expected == Status.VERIFIED)


# Quotes of several fragments, labelled, unlabelled and mixed, found and not.
MANY_FRAGMENTS = [
    ("es", "AGENTE: te lo mando hoy ... CLIENTE: y cuándo me devuelven la plata ... cinco días hábiles"),
    ("es", "cinco días hábiles ... AGENTE: te lo mando hoy"),
    ("es", "CLIENTE: te lo mando hoy ... AGENTE: el reintegro se acredita"),
    ("es", "me cobraron dos veces ... nadie me respondió CLIENTE: ya hice el reclamo ... las 17 por correo"),
    ("es_asr", "doble cobro de 4500 pesos ... AGENTE: si te lo mando hoy ... cinco dias habiles si no lo ve"),
    ("en", "AGENT: I've opened a dispute ... CUSTOMER: Great. I don't want ... AGENT: I won't let that happen"),
    ("en", "four digits of your card CUSTOMER: It's 4821 ... a new card ships tomorrow"),
    ("en_asr", "hi id like to dispute ... youll get an e mail ... within 48 hours"),
]


@pytest.mark.parametrize(("name", "evidence"), [case[:2] for case in CASES if case[1]] + MANY_FRAGMENTS)
def test_latin1_table_gives_the_words_of_the_general_path(name: str, evidence: str) -> None:
    """A word outside Latin-1 (here Greek, in an added last turn) sends the whole transcript down the
    per-word path; the checks of every quote must not change (offsets included: the turn is appended)."""
    transcript = TRANSCRIPTS[name]
    assert verify_evidence(evidence, transcript + "AGENTE: λόγος\n") == verify_evidence(evidence, transcript)


def _words(text: str) -> list[str]:
    """A reference normalisation kept independent of the module: accents off, lower-case, words."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    plain = re.sub(r"\[[^\]]*\]|<[^>]*>", " ", plain.lower().replace("'", "").replace("’", ""))
    return re.findall(r"[a-z0-9]+", plain)


@pytest.mark.parametrize(("name", "evidence", "expected"), [case for case in CASES if case[2] == Status.VERIFIED])
def test_verified_spans_hold_the_quoted_words(name: str, evidence: str, expected: Status) -> None:
    transcript = TRANSCRIPTS[name]
    check = verify_evidence(evidence, transcript)
    fragments = [f for f in re.split(r"[\[(]?(?:\.\.\.|…)[\])]?", evidence) if _words(f)]
    quoted = [_words(re.sub(r"\b(?:AGENTE|CLIENTE|AGENT|CUSTOMER)\s*:", " ", f, flags=re.I)) for f in fragments]
    quoted = [words for words in quoted if words]  # a label alone before an ellipsis is no fragment
    assert len(check.spans) == len(quoted)
    for (start, end), words in zip(check.spans, quoted):
        passage = re.sub(r"(?m)^\s*\w+:", " ", transcript[start:end])  # labels inside the passage
        assert _words(passage) == words
    assert [start for start, _ in check.spans] == sorted(start for start, _ in check.spans)


def test_issue_example_spans_point_at_the_words() -> None:
    check = verify_evidence("AGENTE: Te lo mando hoy antes de las 18.", ES)
    [(start, end)] = check.spans
    assert ES[start:end] == "te lo mando hoy antes de las 18"


def test_span_across_a_noise_tag_and_turns() -> None:
    check = verify_evidence("antes de las 18 por correo", ES_ASR)
    [(start, end)] = check.spans
    assert ES_ASR[start:end] == "antes de las 18 [ruido] por correo"
    check = verify_evidence("CLIENTE: ¿Me mandan el comprobante hoy? AGENTE: Sí, te lo", ES)
    [(start, end)] = check.spans
    assert ES[start:end] == "Me mandan el comprobante hoy?\nAGENTE: Sí, te lo"


def test_elided_quote_has_one_span_per_fragment_in_order() -> None:
    check = verify_evidence("me cobraron dos veces ... te lo mando hoy ... cinco días hábiles", ES)
    assert [ES[s:e] for s, e in check.spans] == ["me cobraron dos veces", "te lo mando hoy", "cinco días hábiles"]


def test_repeated_phrase_picks_occurrences_in_order() -> None:
    transcript = "A: uno dos tres cuatro\nB: cinco seis\nA: uno dos tres cuatro\n"
    check = verify_evidence("cinco seis ... uno dos tres", transcript)
    assert check.verified
    assert [transcript[s:e] for s, e in check.spans] == ["cinco seis", "uno dos tres"]
    assert check.spans[1][0] > transcript.index("cinco")
    assert verify_evidence("B: cinco seis A: uno dos", transcript).verified
    assert verify_evidence("uno dos tres ... uno dos tres", transcript).verified
    assert verify_evidence("uno dos tres ... uno dos tres ... uno dos", transcript).status == Status.OUT_OF_ORDER


def test_unverified_quote_reports_closest_passage() -> None:
    check = verify_evidence("agente: te lo mando hoy antes de las 17", ES)
    assert check.closest == Closest("te lo mando hoy antes de las 18", ES.index("te lo mando"), ES.index(" por correo"), 0.875)
    assert check.spans == ()


def test_closest_is_none_when_no_word_is_shared() -> None:
    check = verify_evidence("lorem ipsum dolor sit amet", ES)
    assert check.status == Status.NOT_FOUND
    assert check.closest is None


def test_partial_points_at_found_fragment_and_closest_to_missing_one() -> None:
    check = verify_evidence("te lo mando hoy ... con el numero de expediente", ES)
    assert check.status == Status.PARTIAL
    assert [ES[s:e] for s, e in check.spans] == ["te lo mando hoy"]
    assert check.closest is not None
    assert check.closest.text == "con el número de reclamo"
    assert check.closest.similarity >= PARAPHRASE_THRESHOLD


def test_wrong_speaker_span_shows_the_real_passage() -> None:
    check = verify_evidence("CLIENTE: te lo mando hoy antes de las 18", ES)
    [(start, end)] = check.spans
    assert ES[start:end] == "te lo mando hoy antes de las 18"
    assert check.closest is None


def test_fabricated_tail_scores_below_paraphrase_but_closest_is_the_real_part() -> None:
    check = verify_evidence("te lo mando hoy antes de las 18. Además le hacemos un descuento del 20%.", ES)
    assert check.closest is not None
    assert check.closest.text.startswith("te lo mando hoy antes de las 18")
    assert check.closest.similarity < PARAPHRASE_THRESHOLD


def test_to_dict_is_json_ready_and_versioned() -> None:
    check = verify_evidence("agente: te lo mando hoy antes de las 17", ES)
    stored = json.loads(json.dumps(check.to_dict()))
    assert stored == {
        "status": "paraphrase",
        "verified": False,
        "spans": [],
        "closest": {"text": "te lo mando hoy antes de las 18", "start": check.closest.start, "end": check.closest.end, "similarity": 0.875},
        "version": VERIFIER_VERSION,
    }
    verified = verify_evidence("te lo mando hoy ... con el número de reclamo", ES).to_dict()
    assert verified["status"] == "verified" and verified["verified"] is True
    assert verified["spans"] == [list(span) for span in verify_evidence("te lo mando hoy ... con el número de reclamo", ES).spans]
    assert verified["closest"] is None


def test_check_is_frozen_and_verified_follows_status() -> None:
    check = EvidenceCheck(Status.VERIFIED, ((0, 3),))
    assert check.verified
    assert not EvidenceCheck(Status.PARTIAL).verified
    with pytest.raises(AttributeError):
        check.status = Status.NOT_FOUND  # type: ignore[misc]


def test_bad_input_is_a_clear_type_error() -> None:
    with pytest.raises(TypeError, match="evidence"):
        verify_evidence(["te lo mando hoy"], ES)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="transcript"):
        verify_evidence("te lo mando hoy", None)  # type: ignore[arg-type]


def test_empty_or_unlabelled_transcript() -> None:
    assert verify_evidence("te lo mando hoy", "").status == Status.NOT_FOUND
    plain = "te lo mando hoy antes de las 18 por correo"
    assert verify_evidence("te lo mando hoy", plain).verified
    assert verify_evidence("AGENTE: te lo mando hoy", plain).status == Status.PARAPHRASE  # no labels there


def test_labels_are_the_transcripts_own_in_any_case() -> None:
    transcript = "Speaker 1: we will refund the full amount\nspeaker 2: thanks a lot for that\n"
    assert verify_evidence("SPEAKER 1: we will refund the full amount", transcript).verified
    assert verify_evidence("speaker 2: we will refund the full amount", transcript).status == Status.WRONG_SPEAKER
    assert verify_evidence("full amount Speaker 2: thanks a lot", transcript).verified


def test_transcript_without_words_and_a_word_that_normalises_to_nothing() -> None:
    # "ʼ" alone is a word that normalises to "": the previous verifier gave a wordless transcript one
    # phantom empty word, voted a window for it and failed with IndexError.
    check = verify_evidence("a ʼ b", "CLIENTE: [noise]\nAGENTE: \n")
    assert check.status == Status.NOT_FOUND and check.closest is None


def test_decomposed_accents_in_transcript() -> None:
    transcript = "AGENTE: el reintegro se acredita en cinco di\u0301as ha\u0301biles\n"
    check = verify_evidence("cinco días hábiles", transcript)
    assert check.verified
    [(start, end)] = check.spans
    assert transcript[start:end] == "cinco di\u0301as ha\u0301biles"


def test_repeated_calls_reuse_the_prepared_transcript() -> None:
    transcript = ES + "AGENTE: una línea única para este test de caché.\n"
    before = evidence_module._prepare.cache_info()
    for quote in ["te lo mando hoy", "cinco días hábiles", "la factura de octubre", "no existe esta frase"]:
        verify_evidence(quote, transcript)
    after = evidence_module._prepare.cache_info()
    assert after.misses - before.misses == 1
    assert after.hits - before.hits == 3
    assert after.maxsize is not None  # bounded


# --- parse_turns


def test_parse_turns_offsets_labels_and_continuations() -> None:
    transcript = "Nota previa sin etiqueta\nAGENTE:  Hola.\n  sigue el agente\n\ncliente : 10:30 está bien\n"
    turns = parse_turns(transcript)
    assert turns == [
        Turn(None, "Nota previa sin etiqueta", 0, 24),
        Turn("AGENTE", "Hola.\n  sigue el agente", 34, 57),
        Turn("cliente", "10:30 está bien", 69, 84),
    ]
    for turn in turns:
        assert transcript[turn.start : turn.end] == turn.text


def test_parse_turns_rejects_times_and_long_prefixes_as_labels() -> None:
    turns = parse_turns("10:30 llamada entrante\nesto no es una etiqueta: texto\nAGENTE DE VENTAS: hola\n")
    assert [turn.speaker for turn in turns] == [None, "AGENTE DE VENTAS"]
    assert turns[0].text == "10:30 llamada entrante\nesto no es una etiqueta: texto"


def test_parse_turns_keeps_empty_labelled_line_for_next_line() -> None:
    transcript = "AGENTE:\n  buenas tardes\r\nCLIENTE: hola\r\n"
    assert [(t.speaker, t.text) for t in parse_turns(transcript)] == [("AGENTE", "buenas tardes"), ("CLIENTE", "hola")]


# --- real data: Harper Valley calls, human reference vs ASR

HARPER_VALLEY = Path(__file__).resolve().parent / "data" / "harper-valley"  # vendored, with its Apache-2.0 notice


def _render(segments: list[dict], field: str) -> str:
    return "".join(f"{segment['speaker_role']}: {segment[field]}\n" for segment in segments)


def _calls() -> dict[str, list[dict]]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(HARPER_VALLEY.glob("*.json"))}


def test_harper_valley_human_quotes_verify_against_human_rendering() -> None:
    calls = _calls()
    checked = 0
    for segments in calls.values():
        human = _render(segments, "human_transcript")
        asr = _render(segments, "transcript")
        for segment in segments:
            text = segment["human_transcript"]
            if len(_words(text)) < 3:
                continue
            quote = f"{segment['speaker_role'].upper()}: {text.capitalize()}."
            assert verify_evidence(quote, human).verified, quote
            # Where the ASR heard the segment right, the quote verifies against the ASR rendering too.
            if _words(segment["transcript"]) == _words(text):
                assert verify_evidence(quote, asr).verified, quote
            checked += 1
    assert checked >= 25


@pytest.mark.parametrize(
    ("call", "quote", "asr_status", "asr_closest"),
    [
        # "harper valley" heard as "happy valley"; "this is" as "mr"; "can you send" as "you send".
        ("0002f70f7386445b", "agent: hello this is harper valley national bank", Status.PARAPHRASE, "hello mr harper valley national bank"),
        ("0002f70f7386445b", "agent: which card would you like to replace", Status.PARAPHRASE, "which part that you like replace"),
        ("0002f70f7386445b", "caller: no that was going to be it", Status.PARAPHRASE, "no that was going to be at"),
        ("004860b1ab2e4c88", "agent: this is harper valley national bank", Status.PARAPHRASE, "this is happy valley national bank"),
        ("004860b1ab2e4c88", "caller: can you send me a new one", Status.PARAPHRASE, "you send me a new one"),
        ("004860b1ab2e4c88", "agent: uh which card would you like to replace", Status.PARAPHRASE, None),
        ("0091a706bc604188", "caller: that was going to be it", Status.PARAPHRASE, "i was going to be at"),
    ],
)
def test_harper_valley_misrecognised_words_do_not_verify_against_asr(
    call: str, quote: str, asr_status: Status, asr_closest: str | None
) -> None:
    segments = _calls()[call]
    assert verify_evidence(quote, _render(segments, "human_transcript")).verified
    check = verify_evidence(quote, _render(segments, "transcript"))
    assert check.status == asr_status
    if asr_closest is not None:
        assert check.closest is not None and check.closest.text == asr_closest


def test_harper_valley_noise_tags_and_split_turns() -> None:
    segments = _calls()["0002f70f7386445b"]
    human = _render(segments, "human_transcript")
    # "my" and "debit card" are two caller segments: one speaker, contiguous words.
    assert verify_evidence("CALLER: which card would you like to replace CALLER: my debit card", human).status == Status.WRONG_SPEAKER
    assert verify_evidence("AGENT: which card would you like to replace CALLER: my CALLER: debit card", human).verified
    assert verify_evidence("caller: have a great day", human).status == Status.WRONG_SPEAKER
    # Same words in both renderings, with "[noise]" tags around: verified against each.
    for field in ("human_transcript", "transcript"):
        assert verify_evidence("AGENT: thank you for calling have a great day", _render(segments, field)).verified
    # The caller's "bye" was heard as "hi": quoting the goodbye fails against the ASR.
    assert verify_evidence("have a great day ... caller: bye", human).status == Status.TOO_SHORT
    assert verify_evidence("have a great day caller: bye", human).verified
    assert not verify_evidence("have a great day caller: bye", _render(segments, "transcript")).verified


# --- the benchmark corpus, small: keeps its accuracy claims under test


def test_benchmark_corpus_is_all_correct_and_has_teeth() -> None:
    from bench.verifier import baseline, corpus

    cases = corpus.call_corpus(seed=7, per_kind=2)
    wrong = [case for case in cases if verify_evidence(case.evidence, case.transcript).verified is not case.accept]
    assert wrong == []
    # The plain substring baseline is fooled by some refused quotes and refuses some true ones.
    baseline_accepts = {case.kind for case in cases if baseline.baseline_verify(case.evidence, case.transcript) and not case.accept}
    assert {"reversed", "too_short"} <= baseline_accepts
    assert any(case.accept and not baseline.baseline_verify(case.evidence, case.transcript) for case in cases)
