"""Check digits of the identifiers the redactor looks for: a run of digits that fails its format's
checksum is not that identifier (an order number, an amount), so it is left as said.

Each function takes the identifier as written (spaces, dots and dashes allowed) and returns whether
its check digits hold."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[\s.\-/]")


def compact(value: str) -> str:
    """The identifier without its separators, upper-cased."""
    return _SEPARATORS.sub("", value).upper()


def luhn(value: str) -> bool:
    """Payment cards (ISO/IEC 7812): 13 to 19 digits whose Luhn sum is a multiple of 10."""
    digits = compact(value)
    if not digits.isdigit() or not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        digit = int(char)
        if index % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def cuit(value: str) -> bool:
    """Argentine CUIT/CUIL: 11 digits, type prefix 20/23/24/27/30/33/34, mod 11 check digit."""
    digits = compact(value)
    if not digits.isdigit() or len(digits) != 11 or digits[:2] not in {"20", "23", "24", "27", "30", "33", "34"}:
        return False
    weights = (5, 4, 3, 2, 7, 6, 5, 4, 3, 2)
    remainder = sum(int(d) * w for d, w in zip(digits, weights)) % 11
    check = 0 if remainder == 0 else 11 - remainder
    return check != 10 and check == int(digits[10])


_NIF_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def nif(value: str) -> bool:
    """Spanish DNI/NIF: 8 digits and the letter of their value mod 23."""
    code = compact(value)
    return bool(re.fullmatch(r"\d{8}[A-Z]", code)) and _NIF_LETTERS[int(code[:8]) % 23] == code[8]


def nie(value: str) -> bool:
    """Spanish NIE: X, Y or Z (read as 0, 1, 2), 7 digits and the mod 23 letter."""
    code = compact(value)
    if not re.fullmatch(r"[XYZ]\d{7}[A-Z]", code):
        return False
    number = int(str("XYZ".index(code[0])) + code[1:8])
    return _NIF_LETTERS[number % 23] == code[8]


def rut(value: str) -> bool:
    """Chilean RUT/RUN: 7 or 8 digits and a mod 11 check digit (0-9 or K)."""
    code = compact(value)
    if not re.fullmatch(r"\d{7,8}[0-9K]", code):
        return False
    body, check = code[:-1], code[-1]
    total = sum(int(d) * (2 + index % 6) for index, d in enumerate(reversed(body)))
    expected = 11 - total % 11
    return check == {11: "0", 10: "K"}.get(expected, str(expected))


_CURP_ALPHABET = "0123456789ABCDEFGHIJKLMNÑOPQRSTUVWXYZ"


def curp(value: str) -> bool:
    """Mexican CURP: 18 characters whose last is a check digit over the other 17."""
    code = compact(value)
    if not re.fullmatch(r"[A-Z][AEIOUX][A-Z]{2}\d{6}[HMX][A-Z]{5}[0-9A-Z]\d", code):
        return False
    total = sum(_CURP_ALPHABET.index(char) * (18 - index) for index, char in enumerate(code[:17]))
    return (10 - total % 10) % 10 == int(code[17])


def cbu(value: str) -> bool:
    """Argentine CBU: 22 digits in two blocks (bank and branch, account), each ending in its check digit."""
    digits = compact(value)
    if not digits.isdigit() or len(digits) != 22 or len(set(digits)) == 1:
        return False

    def block_ok(block: str, weights: tuple[int, ...]) -> bool:
        total = sum(int(d) * w for d, w in zip(block[:-1], weights))
        return (10 - total % 10) % 10 == int(block[-1])

    return block_ok(digits[:8], (7, 1, 3, 9, 7, 1, 3)) and block_ok(
        digits[8:], (3, 9, 7, 1, 3, 9, 7, 1, 3, 9, 7, 1, 3)
    )


_IBAN_LENGTHS = {"AR": 0, "ES": 24, "DE": 22, "FR": 27, "GB": 22, "IT": 27, "PT": 25, "NL": 18, "BE": 16, "MX": 0}


def iban(value: str) -> bool:
    """IBAN (ISO 13616): country, two check digits, the account; the whole is 1 mod 97."""
    code = compact(value)
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", code):
        return False
    expected = _IBAN_LENGTHS.get(code[:2])
    if expected and len(code) != expected:
        return False
    rearranged = code[4:] + code[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def ssn(value: str) -> bool:
    """US Social Security number: 9 digits whose area, group and serial are ones the SSA issues."""
    digits = compact(value)
    if not digits.isdigit() or len(digits) != 9 or len(set(digits)) == 1:
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in {"000", "666"} and area[0] != "9" and group != "00" and serial != "0000"
