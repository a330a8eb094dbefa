"""Phones in the formats of the held-out set (bench/redaction/heldout.py: groupings, prefixes, parentheses,
extensions, spoken dashes, digits read as words, a number dictated across two turns) are found, and the
numbers that look like them survive. Pattern recognizers only: the set holds no names."""

from __future__ import annotations

import pytest

from bench.redaction.corpus import measure
from bench.redaction.heldout import heldout
from qa.redaction.engine import find
from qa.redaction.recognizers import CREDIT_CARD, PHONE_NUMBER, spoken_numbers


def finder(text, language, keep_names):
    return find(text, language, names=False, keep_names=keep_names)


@pytest.mark.parametrize("half", ["dev", "test"])
def test_phone_recall_and_lookalikes_on_the_heldout_set(half):
    scores = measure(heldout(half), finder)
    assert scores.total[PHONE_NUMBER] >= 150
    assert scores.recall(PHONE_NUMBER) >= 0.98, scores.misses[:20]
    assert {"amount", "date", "time", "order", "ticket", "policy", "invoice", "customer", "tracking",
            "percentage", "year", "duration", "words", "operation"} <= set(scores.lookalikes)
    assert scores.kept_rate() == 1.0, scores.masked_lookalikes[:20]
    assert scores.labels_touched == 0


def test_the_halves_are_disjoint_and_both_languages():
    dev, test = heldout("dev"), heldout("test")
    assert not {call.id for call in dev} & {call.id for call in test}
    assert len(dev) + len(test) >= 100
    assert {call.language for call in dev} == {call.language for call in test} == {"es", "en"}


@pytest.mark.parametrize("text, expected", [
    ("cuatro cinco tres nueve, uno cuatro ocho ocho, cero tres cuatro tres, seis cuatro seis siete", CREDIT_CARD),
    ("four five three nine one four eight eight zero three four three six four six seven", CREDIT_CARD),
    ("seis uno dos, tres cuatro cinco, seis siete ocho", PHONE_NUMBER),
    ("uno dos tres cuatro, cinco seis", None),  # six digits: too few for a phone
    ("dos o tres veces, uno o dos minutos", None),
    ("two one two, doble... seven three, oh one three four", None),
    ("three oh five, double seven two, four one eight nine", PHONE_NUMBER),
    ("612 guion 345 guion 678", PHONE_NUMBER),
])
def test_numbers_read_out_in_words(text, expected):
    found = list(spoken_numbers(f"CLIENTE: {text}."))
    assert [kind for kind, _start, _end in found] == ([expected] if expected else [])


def test_a_card_read_out_that_fails_luhn_is_not_a_card():
    assert list(spoken_numbers("cuatro cinco tres nueve uno cuatro ocho ocho cero tres cuatro tres seis cuatro seis ocho")) == []


@pytest.mark.parametrize("text, expected", [
    ("Sí, es 4, 5, 3, 9, 1, 4, 8, 8, 0, 3, 4, 3, 6, 4, 6, 7.", CREDIT_CARD),  # as Whisper wrote a dictation
    ("Yes, it is 4 -5 -3 -9, 1 -4 -8 -8, 0 -3 -4 -3, 6 -4 -6 -7.", CREDIT_CARD),
    ("Es el 6, 1, 2, 3, 4, 5, 6, 7, 8.", PHONE_NUMBER),
    ("Yes, it is 4 -3 -0 -1, 3 -0 -7 -I -N, 6 -8 -22, 2 -7 -0 -0.", None),  # digits lost: nothing to check
    ("Pagué 1, 2 y 3 cuotas; quedan 4, 5, 6.", None),
])
def test_digits_written_one_at_a_time(text, expected):
    found = list(spoken_numbers(f"CLIENTE: {text}"))
    assert [kind for kind, _start, _end in found] == ([expected] if expected else [])
