"""Evidence by turn reference (qa.evidence.verify_references): each cited turn's words, in that turn only.

Plain pytest functions, no database.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from qa.evidence import Reference, Status, parse_turns, references_parse, references_text, verify_references
from tests.test_evidence_properties import _key, _keys, _noisy, _span_keys, transcripts

TRANSCRIPT = (
    "AGENTE: Buenas tardes, le atiende Marta de Telco Sur.\n"
    "CLIENTE: Me cobraron dos veces la factura de octubre.\n"
    "AGENTE: Lo siento mucho. Le devuelvo el cobro duplicado hoy antes de las 18.\n"
    "CLIENTE: [ruido]\n"
)


def spans_text(check, transcript: str = TRANSCRIPT) -> list[str]:
    return [transcript[start:end] for start, end in check.spans]


def test_words_of_the_cited_turn_verify_with_their_span():
    check = verify_references([Reference(3, "le devuelvo el cobro")], TRANSCRIPT, "agent")
    assert check.status is Status.VERIFIED
    assert spans_text(check) == ["Le devuelvo el cobro"]


def test_words_in_another_turn_than_the_one_cited_fail_and_show_where_they_are():
    # "dos veces la factura" is the customer's turn 2; cited as turn 3 it is not evidence of turn 3.
    check = verify_references([Reference(3, "dos veces la factura")], TRANSCRIPT)
    assert check.status is Status.WRONG_TURN and not check.verified
    assert spans_text(check) == ["dos veces la factura"]
    # The same words quoted (quote mode) verify: reference mode is stricter.
    assert verify_references([Reference(2, "dos veces la factura")], TRANSCRIPT).verified


def test_a_whole_turn_cite_verifies_and_spans_the_turn():
    check = verify_references([Reference(1)], TRANSCRIPT, "agent")
    assert check.status is Status.VERIFIED
    assert spans_text(check) == ["Buenas tardes, le atiende Marta de Telco Sur."]
    assert verify_references([Reference(1, "   ")], TRANSCRIPT).verified  # blank words: the whole turn


def test_the_cited_turn_must_be_the_subject_s():
    check = verify_references([Reference(2)], TRANSCRIPT, "agent")
    assert check.status is Status.WRONG_SUBJECT
    assert spans_text(check) == ["Me cobraron dos veces la factura de octubre."]
    assert verify_references([Reference(2)], TRANSCRIPT, "customer").verified
    # One of the subject's turns among the references is enough, as a quote spanning both sides.
    assert verify_references([Reference(2), Reference(3, "Lo siento")], TRANSCRIPT, "agent").verified


@pytest.mark.parametrize("turn", [0, 5, 99, -1])
def test_a_turn_the_transcript_does_not_have_is_a_bad_reference(turn):
    check = verify_references([Reference(1), Reference(turn, "Buenas tardes")], TRANSCRIPT)
    assert check.status is Status.BAD_REFERENCE and not check.verified
    assert check.spans == () and check.to_dict()["verified"] is False


def test_words_not_in_the_turn_get_the_quote_statuses_within_it():
    check = verify_references([Reference(3, "el cobro triplicado hoy")], TRANSCRIPT)
    assert check.status is Status.PARAPHRASE
    assert check.closest is not None and TRANSCRIPT[check.closest.start : check.closest.end] == check.closest.text
    assert check.closest.text == "el cobro duplicado hoy"
    assert verify_references([Reference(3, "quetzal walrus")], TRANSCRIPT).status is Status.NOT_FOUND
    # A label inside the words holds as in a quote: the customer's label cannot stand in an agent's turn.
    assert not verify_references([Reference(3, "CLIENTE: Lo siento mucho")], TRANSCRIPT).verified


def test_one_word_is_located_by_its_turn():
    check = verify_references([Reference(3, "cobro")], TRANSCRIPT)
    assert check.verified and spans_text(check) == ["cobro"]
    assert verify_references([Reference(2, "cobro")], TRANSCRIPT).status is Status.WRONG_TURN


def test_empty_and_wordless_references():
    assert verify_references([], TRANSCRIPT).status is Status.EMPTY
    assert verify_references([Reference(4)], TRANSCRIPT).status is Status.EMPTY  # "[ruido]": no words to show
    assert verify_references([Reference(1, "...")], TRANSCRIPT).status is Status.TOO_SHORT


def test_every_reference_must_verify():
    check = verify_references([Reference(1, "Buenas tardes"), Reference(3, "walrus quetzal")], TRANSCRIPT)
    assert check.status is Status.NOT_FOUND
    assert spans_text(check) == ["Buenas tardes"]  # what was found, not highlighted as evidence


def test_references_read_as_words_and_back():
    references = [Reference(1), Reference(3, "el   cobro\nduplicado"), Reference(99)]
    text = references_text(references, TRANSCRIPT)
    assert text == "[1] Buenas tardes, le atiende Marta de Telco Sur.\n[3] “el cobro duplicado”\n[99]"
    assert references_parse(text) == [Reference(1), Reference(3, "el cobro duplicado"), Reference(99)]
    assert references_parse("AGENTE: Buenas tardes, le atiende Marta") is None  # a quote
    assert references_parse("") is None


def test_turns_are_counted_as_parse_turns_counts_them():
    transcript = "Hola antes de nada\nAGENTE: primera\nlinea seguida\n\nCLIENTE: segunda"
    assert [turn.text for turn in parse_turns(transcript)] == ["Hola antes de nada", "primera\nlinea seguida", "segunda"]
    assert verify_references([Reference(2, "linea seguida")], transcript).verified
    assert verify_references([Reference(1, "antes de nada")], transcript).verified
    assert verify_references([Reference(4)], transcript).status is Status.BAD_REFERENCE


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_noisy_copy_of_words_of_a_turn_verifies_in_that_turn_only(data: st.DataObject) -> None:
    rendered = data.draw(transcripts())
    turn = data.draw(st.integers(0, len(rendered.speakers) - 1))
    positions = [position for position, of in enumerate(rendered.turn_of) if of == turn]
    first = data.draw(st.integers(positions[0], positions[-1]))
    last = data.draw(st.integers(first, positions[-1]))
    words = rendered.words[first : last + 1]
    check = verify_references([Reference(turn + 1, _noisy(data.draw, words))], rendered.text)
    assert check.verified, check
    [span] = check.spans
    assert _span_keys(rendered, span) == _keys(words)
    assert all(rendered.turn_of[position] == turn for position, (s, e) in enumerate(rendered.spans) if span[0] <= s and e <= span[1])

    other = data.draw(st.integers(0, len(rendered.speakers) - 1).filter(lambda number: number != turn))
    other_keys = [_key(word) for word, of in zip(rendered.words, rendered.turn_of) if of == other]
    keys = _keys(words)
    assume(not any(other_keys[start : start + len(keys)] == keys for start in range(len(other_keys))))
    assert not verify_references([Reference(other + 1, " ".join(words))], rendered.text).verified


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_any_number_outside_the_turns_is_a_bad_reference(data: st.DataObject) -> None:
    rendered = data.draw(transcripts())
    count = len(parse_turns(rendered.text))
    assert count == len(rendered.speakers)
    turn = data.draw(st.one_of(st.integers(max_value=0), st.integers(min_value=count + 1)))
    check = verify_references([Reference(turn)], rendered.text)
    assert check.status is Status.BAD_REFERENCE and check.spans == ()
