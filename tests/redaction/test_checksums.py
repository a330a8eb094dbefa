"""The check digits the redactor trusts: each format accepts a valid identifier as written and
refuses it with one digit changed (which is what tells an order number from a card)."""

from __future__ import annotations

import random

import pytest

from bench.redaction import corpus
from qa.redaction import checksums

VALID = [
    (checksums.luhn, "4111 1111 1111 1111"),
    (checksums.luhn, "3782-822463-10005"),
    (checksums.luhn, "5425233430109903"),
    (checksums.cuit, "20-31420102-8"),
    (checksums.nif, "12345678Z"),
    (checksums.nie, "X1234567L"),
    (checksums.rut, "12.345.678-5"),
    (checksums.curp, "HEGG560427MVZRRL04"),
    (checksums.cbu, "0170099220000067797370"),
    (checksums.iban, "ES91 2100 0418 4502 0005 1332"),
    (checksums.iban, "GB82 WEST 1234 5698 7654 32"),
    (checksums.ssn, "123-45-6789"),
]


@pytest.mark.parametrize("check, value", VALID)
def test_valid_identifiers_pass(check, value):
    assert check(value)


# An SSN has no check digit: its rules are the ranges below.
@pytest.mark.parametrize("check, value", [(check, value) for check, value in VALID if check is not checksums.ssn])
def test_one_digit_changed_fails(check, value):
    position = max(index for index, char in enumerate(value[:-1]) if char.isdigit())
    changed = value[:position] + str((int(value[position]) + 1) % 10) + value[position + 1 :]
    assert not check(changed)


def test_ssn_ranges_the_ssa_never_issues():
    for value in ("000-12-3456", "666-12-3456", "912-34-5678", "123-00-4567", "123-45-0000"):
        assert not checksums.ssn(value), value


def test_generated_values_pass_their_own_check():
    """The corpus's values are made with the real check digits, so its recall means something."""
    rng = random.Random(7)
    for _ in range(200):
        assert checksums.luhn(corpus.card_number(rng))
        assert not checksums.luhn(corpus.not_a_card(rng))
        assert checksums.cuit(corpus.cuit(rng))
        assert checksums.cbu(corpus.cbu(rng))
        assert checksums.iban(corpus.iban(rng))
        assert checksums.rut(corpus.rut(rng))
        assert checksums.curp(corpus.curp(rng))
        assert checksums.nif(corpus.nif(rng))
        assert checksums.nie(corpus.nie(rng))
