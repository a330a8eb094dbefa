"""The pattern recognizers, as Presidio recognizers: each finds one entity type by a regular
expression and, where the format has one, keeps only what passes its checksum (qa.redaction.checksums).

Codes that have no checksum and look like many harmless numbers (an Argentine DNI is 7-8 digits, a
security code 3-4, a card's expiry a month and a year) are taken only where the call says what they
are just before them ("documento", "código de seguridad", "vence"...): the same digits elsewhere are an
amount, a date or a case number, and those must survive for the judge to quote them."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import regex
from presidio_analyzer import LocalRecognizer, RecognizerResult
import phonenumbers

from qa.evidence import parse_turns

from . import checksums

from .types import (  # noqa: F401  (re-exported: the types are named here and there)
    ALL_TYPES, AR_CBU, AR_CUIT, AR_DNI, CARD_EXPIRY, CARD_SECURITY_CODE, CL_RUT, CREDIT_CARD, EMAIL_ADDRESS,
    ES_NIE, ES_NIF, IBAN_CODE, LANGUAGES, LOCATION, MODEL_TYPES, MX_CURP, PATTERN_TYPES, PERSON, PHONE_NUMBER,
    PRIORITY, US_SSN,
)

_NOT_DIGIT_BEFORE = r"(?<![\d\w.,/-])"
_NOT_DIGIT_AFTER = r"(?![\d\w]|[.,/-]\d)"
# Up to this many characters (no digits: a number in between means the context was about that one)
# may stand between a context phrase and the code it announces, a turn change included.
_GAP = r"[^\d]{0,60}?"


@dataclass(frozen=True)
class Rule:
    entity: str
    pattern: str
    validate: Callable[[str], bool] | None = None
    # The regex group holding the entity (the rest is its context).
    group: int | str = 0
    score: float = 0.9
    # A string the text must hold for the pattern to be tried at all (cheap to check, saves a scan).
    required: str | None = None


class RegexRecognizer(LocalRecognizer):
    """One entity type by regular expressions, with an optional checksum on the matched text."""

    def __init__(self, entity: str, rules: Sequence[Rule], language: str):
        self.rules = tuple(rules)
        self.compiled = tuple(regex.compile(rule.pattern, regex.IGNORECASE | regex.VERSION1) for rule in rules)
        super().__init__(supported_entities=[entity], supported_language=language, name=f"{entity}_{language}")

    def load(self) -> None:  # nothing to load: the patterns are compiled in __init__
        pass

    def analyze(self, text, entities, nlp_artifacts=None):
        results = []
        for rule, compiled in zip(self.rules, self.compiled):
            if rule.required and rule.required not in text:
                continue
            for match in compiled.finditer(text, overlapped=False):
                start, end = match.span(rule.group)
                if start < 0 or start == end:
                    continue
                if rule.validate and not rule.validate(text[start:end]):
                    continue
                results.append(RecognizerResult(rule.entity, start, end, rule.score))
        return results


def _words(*phrases: str) -> str:
    """An alternation of context phrases; spaces in a phrase match any run of spaces."""
    return "(?:" + "|".join(phrase.replace(" ", r"\s+") for phrase in phrases) + ")"



_EXPIRY_CONTEXT = _words(
    "vence", "vencimiento", "vto", "expira", "caduca", "válida hasta", "valida hasta", "venc",
    "expiry", "expiration", "expires", "exp", "valid thru", "valid through", "good thru",
)
_MONTHS = _words(
    "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "setiembre",
    "octubre", "noviembre", "diciembre", "january", "february", "march", "april", "may", "june", "july",
    "august", "september", "october", "november", "december",
)
_EXPIRY = (
    r"\b" + _EXPIRY_CONTEXT + r"\b" + _GAP + r"(?P<value>"
    + r"(?<!\d)(?:0?[1-9]|1[0-2])\s*(?:/|-|\s+del?\s+|\s+of\s+)\s*(?:20)?\d{2}(?!\d)"
    + r"|" + _MONTHS + r"(?:\s+(?:de|del|of))?\s+(?:20)?\d{2}(?!\d)"
    + r")"
)

_SECURITY_CONTEXT = _words(
    "código de seguridad", "codigo de seguridad", "código de atrás", "codigo de atras", "código del dorso",
    "codigo del dorso", "código verificador", "codigo verificador", "cvv2", "cvv", "cvc", "cvc2",
    "números de atrás", "numeros de atras", "dígitos de atrás", "digitos de atras", "números del dorso",
    "numeros del dorso", "dígitos del dorso", "digitos del dorso",
    "security code", "card verification", "code on the back", "digits on the back", "numbers on the back",
    "verification code",
)
_SECURITY_CODE = r"\b" + _SECURITY_CONTEXT + r"\b" + _GAP + r"(?<![\d.,])(?P<value>\d{3,4})(?![\d.,:]\d|\d)"

# An Argentine DNI is 7-8 digits, written 31.420.102 or 31420102: without checksum, so only after
# its name ("DNI", "documento"), within this same or the previous turn.
_DNI_CONTEXT = _words("dni", "d.n.i.", "d.n.i", "documento", "document", "national id", "id number")
_DNI = (
    r"\b" + _DNI_CONTEXT + r"(?![\w])" + r"[^\d]{0,80}?"
    + r"(?<![\d.,])(?P<value>\d{1,2}\.?\d{3}\.?\d{3})(?![\d]|[.,]\d)"
)

_CUIT = _NOT_DIGIT_BEFORE + r"(?:\d{2}-\d{8}-\d|\d{2} \d{8} \d|\d{11})" + _NOT_DIGIT_AFTER
_NIF = r"(?<![\w.-])\d{2}\.?\d{3}\.?\d{3}[ -]?[A-Z](?![\w])"
_NIE = r"(?<![\w.-])[XYZ][ -]?\d{7}[ -]?[A-Z](?![\w])"
_RUT = r"(?<![\w.-])\d{1,2}\.?\d{3}\.?\d{3}-[0-9K](?![\w])"
_CURP = r"(?<![\w])[A-Z]{4}\d{6}[HMX][A-Z]{5}[0-9A-Z]\d(?![\w])"
_CBU = _NOT_DIGIT_BEFORE + r"(?:\d{22}|\d{8}[ -]\d{14}|\d{4}(?:[ -]\d{4}){4}[ -]\d{2})" + _NOT_DIGIT_AFTER
_IBAN = r"(?<![\w])[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,4})?(?![\w])"

# E-mail as written (as said aloud: SpokenEmailRecognizer).
_EMAIL_USER = regex.compile(r"(?<![\w.+-])[\w.+-]{1,64}$")
_EMAIL_DOMAIN = regex.compile(r"[\w-]+(?:\.[\w-]+)*\.[a-z]{2,24}(?![\w])", regex.IGNORECASE)
_SSN = _NOT_DIGIT_BEFORE + r"\d{3}[- ]\d{2}[- ]\d{4}" + _NOT_DIGIT_AFTER
_SSN_CONTEXT = _words("social security", "ssn", "seguro social")
_SSN_RUN = r"\b" + _SSN_CONTEXT + r"\b" + _GAP + r"(?<![\d])(?P<value>\d{9})(?!\d)"

PHONE_REGIONS = ("AR", "ES", "MX", "US")


def _rules() -> dict[str, list[Rule]]:
    return {
        CARD_EXPIRY: [Rule(CARD_EXPIRY, _EXPIRY, group="value", score=0.8)],
        CARD_SECURITY_CODE: [Rule(CARD_SECURITY_CODE, _SECURITY_CODE, group="value", score=0.8)],
        AR_DNI: [Rule(AR_DNI, _DNI, group="value", score=0.7)],
        AR_CUIT: [Rule(AR_CUIT, _CUIT, checksums.cuit)],
        ES_NIF: [Rule(ES_NIF, _NIF, checksums.nif)],
        ES_NIE: [Rule(ES_NIE, _NIE, checksums.nie)],
        CL_RUT: [Rule(CL_RUT, _RUT, checksums.rut)],
        MX_CURP: [Rule(MX_CURP, _CURP, checksums.curp)],
        AR_CBU: [Rule(AR_CBU, _CBU, checksums.cbu)],
        IBAN_CODE: [Rule(IBAN_CODE, _IBAN, checksums.iban)],

        US_SSN: [Rule(US_SSN, _SSN, checksums.ssn, score=0.7), Rule(US_SSN, _SSN_RUN, checksums.ssn, group="value")],
    }


def pattern_recognizers(language: str) -> list[LocalRecognizer]:
    """Every pattern recognizer for one language (the formats are the same in both: a Spanish call
    can carry a US number and an English one an Argentine DNI)."""
    recognizers: list[LocalRecognizer] = [
        RegexRecognizer(entity, rules, language) for entity, rules in _rules().items()
    ]
    recognizers.append(CardNumberRecognizer(language))
    recognizers.append(EmailRecognizer(language))
    recognizers.append(PhoneNumberRecognizer(language))
    recognizers.append(SpokenEmailRecognizer(language))
    recognizers.append(SpokenNumberRecognizer(language))
    return recognizers


# What may stand between a card's digit groups, as said or typed: any space (the no-break and the
# ideographic ones too), an invisible format character (a zero-width space, a direction mark), a dash
# of any kind, a dot. Up to three in a row ("4539 - 5787").
_CARD_SEPARATOR = r"[\s\p{Zs}\p{Cf}\p{Pd}.\u00b7\u2024\uff0e]"
_DIGIT_CHAIN = regex.compile(r"(?<!\w)\d+(?:" + _CARD_SEPARATOR + r"{1,3}\d+)*(?!\w)")
_DIGITS = regex.compile(r"\d+")


def _card_grouping(lengths: Sequence[int]) -> bool:
    """Whether digit groups of these lengths are written as a card is: one run of 13-19 digits, blocks
    of four (16-19 digits, a block's separator may be left out), or 4-6-4/5 (American Express, Diners).
    Other groupings of as many digits are phone numbers, amounts or dates said together."""
    total = sum(lengths)
    if len(lengths) == 1:
        return 13 <= total <= 19
    cuts, at = set(), 0
    for length in lengths[:-1]:
        at += length
        cuts.add(at)
    if 16 <= total <= 19 and all(cut % 4 == 0 and cut <= 16 for cut in cuts):
        return True
    return total in (14, 15) and cuts <= {4, 10}


def card_numbers(text: str) -> Iterable[tuple[int, int]]:
    """(start, end) of each card number in `text`, a transcript of ``SPEAKER: text`` lines: digit groups
    written with any separator (_CARD_SEPARATOR) and read on across a turn change, since a caller
    dictating a card often finishes it in their next turn ("es 4539 5787" / "CLIENTE: 6362 1486"); a span
    that crosses a turn change covers the label between, which the caller clips to the turns' text.
    Only groupings a card is written in (_card_grouping) that pass the Luhn check are taken."""
    turns = [(turn.start, turn.end) for turn in parse_turns(text)] or [(0, len(text))]
    # The turns' text joined by one space: a card split by a label reads as one split by a separator.
    joined, starts, offset = [], [], 0
    for start, end in turns:
        starts.append((offset, start))
        joined.append(text[start:end])
        offset += end - start + 1
    flat = " ".join(joined)
    virtual = [virtual_start for virtual_start, _real in starts]

    def real(position: int) -> int:
        virtual_start, real_start = starts[bisect.bisect_right(virtual, position) - 1]
        return real_start + position - virtual_start

    for chain in _DIGIT_CHAIN.finditer(flat):
        groups = [(group.start(), group.end()) for group in _DIGITS.finditer(flat, chain.start(), chain.end())]
        first = 0
        while first < len(groups):
            # The longest card starting at this group: at most 19 digits on, so a long run of numbers
            # costs linear time.
            found, lengths, total = None, [], 0
            for last in range(first, len(groups)):
                lengths.append(groups[last][1] - groups[last][0])
                total += lengths[-1]
                if total > 19:
                    break
                if total >= 13 and _card_grouping(lengths):
                    digits = "".join(flat[a:b] for a, b in groups[first : last + 1])
                    if checksums.luhn(digits):
                        found = last
            if found is None:
                first += 1
                continue
            yield real(groups[first][0]), real(groups[found][1] - 1) + 1
            first = found + 1


class CardNumberRecognizer(LocalRecognizer):
    """Payment card numbers (card_numbers)."""

    def __init__(self, language: str):
        super().__init__(supported_entities=[CREDIT_CARD], supported_language=language, name=f"CREDIT_CARD_{language}")

    def load(self) -> None:
        pass

    def analyze(self, text, entities, nlp_artifacts=None):
        return [RecognizerResult(CREDIT_CARD, start, end, 0.9) for start, end in card_numbers(text)]


# A family member named after the relation ("mi hija Valentina Pérez", "my brother Tom"): the small
# models miss many of these names, since a relation word is not one of the cues they learned (a title,
# "soy", "me llamo"). Only after a possessive, so that "la Madre Teresa" or a sentence's "Padre" is not
# read as one; only a capitalised name of up to three words, on the same line.
_RELATIONS = (
    "hija", "hijo", "hijas", "hijos", "hijastra", "hijastro", "esposa", "esposo", "marido", "mujer", "pareja",
    "novia", "novio", "prometida", "prometido", "madre", "padre", "mamá", "mama", "papá", "papa", "madrastra",
    "padrastro", "hermana", "hermano", "hermanas", "hermanos", "abuela", "abuelo", "tía", "tia", "tío", "tio",
    "prima", "primo", "sobrina", "sobrino", "nieta", "nieto", "suegra", "suegro", "cuñada", "cuñado", "yerno",
    "nuera", "daughter", "son", "stepdaughter", "stepson", "wife", "husband", "partner", "girlfriend",
    "boyfriend", "fiancée", "fiancee", "fiancé", "fiance", "mother", "father", "mom", "mum", "dad",
    "stepmother", "stepfather", "sister", "brother", "grandmother", "grandfather", "grandma", "grandpa",
    "granddaughter", "grandson", "aunt", "uncle", "cousin", "niece", "nephew", "mother-in-law",
    "father-in-law", "daughter-in-law", "son-in-law", "sister-in-law", "brother-in-law",
)
_POSSESSIVES = ("mi", "mis", "su", "sus", "tu", "tus", "nuestra", "nuestro", "nuestras", "nuestros",
                "my", "his", "her", "their", "our", "your")
_NAME_WORD = r"\p{Lu}[\p{L}\p{M}'’-]+"
_RELATIVE = regex.compile(
    r"(?<![\w])(?i:" + "|".join(_POSSESSIVES) + r")[ \t]+(?i:"
    + "|".join(sorted((regex.escape(word) for word in _RELATIONS), key=len, reverse=True))
    + r")(?![\w-]),?[ \t]+(?P<name>" + _NAME_WORD
    + r"(?:[ \t]+(?:(?:de|del|de la)[ \t]+)?" + _NAME_WORD + r"){0,2})"
)


class RelativeNameRecognizer(LocalRecognizer):
    """A name said right after a family relation and a possessive (_RELATIVE); it then goes through the
    engine's rules for names as the model's do (not the agent's own, not a stop word)."""

    def __init__(self, language: str):
        super().__init__(supported_entities=[PERSON], supported_language=language, name=f"RELATIVE_NAME_{language}")

    def load(self) -> None:
        pass

    def analyze(self, text, entities, nlp_artifacts=None):
        return [
            RecognizerResult(PERSON, match.start("name"), match.end("name"), 0.85)
            for match in _RELATIVE.finditer(text)
        ]


def name_recognizers(language: str) -> list[LocalRecognizer]:
    """The name recognizers that need no model, run when names are redacted."""
    return [RelativeNameRecognizer(language)]


# A stretch that may hold a phone number: digits with one separator at a time between them (a space,
# a dot, or a dash with a space either side: "93 - 766 - 33 - 46"; so "8901. 18.450" is two stretches),
# maybe after a "+" or a "(+34)", of 8 to 15 digits (E.164's longest; no region here has fewer).
_PHONE_CANDIDATE = regex.compile(
    r"(?<![\w+(])(?:\(\s?\+\s?\d{1,3}\s?\)\s?|\+\s?)?\(?\d(?:\d|(?:[ .]| ?- ?)\(?(?=\d)|\)(?:[ .]| ?- ?)?(?=\d))*(?!\w)"
)


def _valid_phone(candidate: str) -> bool:
    """Whether a numbering plan of one of PHONE_REGIONS allows the number."""
    for region in PHONE_REGIONS:
        try:
            number = phonenumbers.parse(candidate, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(number):
            return True
        # Mexico's mobile "1" after +52, dropped from the plan in 2019 and still said.
        if number.country_code == 52 and str(number.national_number).startswith("1"):
            number.national_number = int(str(number.national_number)[1:])
            if phonenumbers.is_valid_number(number):
                return True
    return False


def _phone_digits(candidate: str) -> int:
    return sum(char.isdigit() for char in candidate)


class PhoneNumberRecognizer(LocalRecognizer):
    """Phone numbers by Google's phonenumbers, as Presidio's PhoneRecognizer judges them (a number that
    a numbering plan of one of these regions allows), but parsing only the stretches of digits:
    Presidio's runs phonenumbers' matcher over the whole text once per region, 20 ms a 6 KB call.
    A number dictated across two turns ("Es el 91 654" / "AGENTE: Sí..." / "CLIENTE: 63 44") is read
    as one when a turn ends in a stretch and one of the next two starts with one, with nothing but a
    digitless turn between."""

    def __init__(self, language: str):
        super().__init__(supported_entities=[PHONE_NUMBER], supported_language=language, name=f"PHONE_NUMBER_{language}")

    def load(self) -> None:
        pass

    def analyze(self, text, entities, nlp_artifacts=None):
        results = []
        for candidate in _PHONE_CANDIDATE.finditer(text):
            if 8 <= _phone_digits(candidate.group()) <= 15 and _valid_phone(candidate.group()):
                results.append(RecognizerResult(PHONE_NUMBER, candidate.start(), candidate.end(), 0.6))
        results.extend(self._across_turns(text))
        return results

    def _across_turns(self, text: str) -> list[RecognizerResult]:
        turns = parse_turns(text)
        results = []
        for index, turn in enumerate(turns[:-1]):
            ending = _TURN_END_DIGITS.search(turn.text)
            if not ending or _phone_digits(ending.group()) >= 13:
                continue
            for later in turns[index + 1 : index + 3]:
                opening = _TURN_START_DIGITS.match(later.text)
                if opening:
                    joined = ending.group() + " " + opening.group()
                    if 8 <= _phone_digits(joined) <= 15 and _valid_phone(joined):
                        results.append(RecognizerResult(PHONE_NUMBER, turn.start + ending.start(), turn.start + ending.end(), 0.6))
                        results.append(RecognizerResult(PHONE_NUMBER, later.start + opening.start(), later.start + opening.end(), 0.6))
                    break
                if any(char.isdigit() for char in later.text):
                    break
        return results


# A stretch of digits that ends a turn (only punctuation after it), and one that opens a turn.
_TURN_END_DIGITS = regex.compile(_PHONE_CANDIDATE.pattern + r"(?=[\s.,;:…-]*$)")
_TURN_START_DIGITS = regex.compile(r"(?<=^)\d(?:\d|(?:[ .]| ?- ?)(?=\d))*(?!\w)")


# Numbers read aloud digit by digit, as a transcriber may write them: "seis uno dos, tres cuatro cinco",
# "two one two, five five five, oh one three four", "doble siete"; or digit groups joined by a spoken
# dash ("26 guión 1273 guión 2761"). A run of 8-15 digits that a numbering plan allows is a phone; one of
# 13-19 that passes the Luhn check a card. Everyday number words ("dos o tres días") are far too few in
# a row to be either.
_DIGIT_WORDS = {
    "cero": "0", "uno": "1", "un": "1", "una": "1", "dos": "2", "tres": "3", "cuatro": "4", "cinco": "5",
    "seis": "6", "siete": "7", "ocho": "8", "nueve": "9",
    "zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9",
}
_REPEAT_WORDS = {"doble": 2, "double": 2, "triple": 3}
_SPOKEN_DASH = ("guion", "guión", "dash", "hyphen")
_DIGIT_WORD = "(?:" + "|".join(sorted(_DIGIT_WORDS, key=len, reverse=True)) + ")"
_SPOKEN_TOKEN = r"(?:(?:" + "|".join(_REPEAT_WORDS) + r")\s+)?" + _DIGIT_WORD + r"(?![\w])|\d+(?![\w])"
_SPOKEN_GAP = r"(?:(?:[ \t]*[,.;:…-]+[ \t]*|[ \t]+)(?:(?:" + "|".join(_SPOKEN_DASH) + r")[ \t]+)?)"
_SPOKEN_CHAIN = regex.compile(
    r"(?<![\w])(?:" + _SPOKEN_TOKEN + r")(?:" + _SPOKEN_GAP + r"(?:" + _SPOKEN_TOKEN + r"))+",
    regex.IGNORECASE,
)
_SPOKEN_PART = regex.compile(
    r"(?P<repeat>" + "|".join(_REPEAT_WORDS) + r")?\s*(?P<word>" + _DIGIT_WORD + r")(?![\w])|(?P<digits>\d+)|(?P<dash>"
    + "|".join(_SPOKEN_DASH) + r")(?![\w])",
    regex.IGNORECASE,
)


def spoken_numbers(text: str) -> Iterable[tuple[str, int, int]]:
    """(entity type, start, end) of each phone or card number read out (_SPOKEN_CHAIN) in `text`: in
    words, with a spoken dash, or one digit at a time as a transcriber writes a dictation ("4, 5, 3, 9,
    1, 4..." or "4 -3 -0 -1"); other runs of digit groups are left to the written finders."""
    for chain in _SPOKEN_CHAIN.finditer(text):
        digits, spoken = [], False
        for part in _SPOKEN_PART.finditer(chain.group()):
            if part.group("word"):
                count = _REPEAT_WORDS.get((part.group("repeat") or "").casefold(), 1)
                digits.append(_DIGIT_WORDS[part.group("word").casefold()] * count)
                spoken = True
            elif part.group("digits"):
                digits.append(part.group("digits"))
            elif part.group("dash"):
                spoken = True
        number = "".join(digits)
        if not spoken and not all(len(group) == 1 for group in digits):
            continue
        if 13 <= len(number) <= 19 and checksums.luhn(number):
            yield CREDIT_CARD, chain.start(), chain.end()
        elif 8 <= len(number) <= 15 and _valid_phone(number):
            yield PHONE_NUMBER, chain.start(), chain.end()


class SpokenNumberRecognizer(LocalRecognizer):
    """Phone and card numbers read out in words (spoken_numbers)."""

    def __init__(self, language: str):
        super().__init__(supported_entities=[PHONE_NUMBER, CREDIT_CARD], supported_language=language,
                         name=f"SPOKEN_NUMBER_{language}")

    def load(self) -> None:
        pass

    def analyze(self, text, entities, nlp_artifacts=None):
        return [RecognizerResult(kind, start, end, 0.7) for kind, start, end in spoken_numbers(text)]


class EmailRecognizer(LocalRecognizer):
    """A written e-mail address, found from its "@" outwards: a pattern starting at the user part would
    be tried at every word of the transcript (7 ms a call)."""

    def __init__(self, language: str):
        super().__init__(supported_entities=[EMAIL_ADDRESS], supported_language=language, name=f"EMAIL_{language}")

    def load(self) -> None:
        pass

    def analyze(self, text, entities, nlp_artifacts=None):
        results = []
        at = text.find("@")
        while at >= 0:
            user = _EMAIL_USER.search(text, max(0, at - 64), at)
            domain = _EMAIL_DOMAIN.match(text, at + 1)
            if user and domain:
                results.append(RecognizerResult(EMAIL_ADDRESS, user.start(), domain.end(), 0.9))
            at = text.find("@", at + 1)
        return results


# A spoken e-mail is found from its domain ("arroba gmail punto com"), the rare part, then extended
# back over the user part said before it: a pattern that starts at every word would cost 7 ms a call.
_SPOKEN_DOMAIN = regex.compile(
    r"(?<![\w])(?:arroba|at)\s+[a-z0-9-]+(?:\s+(?:punto|dot)\s+[a-z0-9-]+)*"
    r"\s+(?:punto|dot)\s+(?:com|net|org|edu|gov|es|ar|mx|cl|uy|co|io|info|biz)(?:\s+(?:punto|dot)\s+[a-z]{2})?(?![\w])",
    regex.IGNORECASE,
)
_SPOKEN_USER = regex.compile(
    r"(?:[a-z0-9ñáéíóú]+\s+(?:punto|guion bajo|guion|guión bajo|guión|dot|underscore|dash)\s+)*[a-z0-9ñáéíóú]+\s+$",
    regex.IGNORECASE,
)


class SpokenEmailRecognizer(LocalRecognizer):
    """An e-mail address as said aloud in a transcript: "maria punto gomez arroba gmail punto com"."""

    def __init__(self, language: str):
        super().__init__(supported_entities=[EMAIL_ADDRESS], supported_language=language, name=f"SPOKEN_EMAIL_{language}")

    def load(self) -> None:
        pass

    def analyze(self, text, entities, nlp_artifacts=None):
        results = []
        for domain in _SPOKEN_DOMAIN.finditer(text):
            user = _SPOKEN_USER.search(text, max(0, domain.start() - 120), domain.start())
            if user:
                results.append(RecognizerResult(EMAIL_ADDRESS, user.start(), domain.end(), 0.8))
        return results
