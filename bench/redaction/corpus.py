"""A labelled corpus of contact-center calls for the redactor, in Spanish and English.

Every call is a transcript of ``SPEAKER: text`` lines built from phrasings a caller or an agent uses,
each labelled as it is written: the personal data it carries (type and character span) and the
look-alikes that must survive (amounts, dates, times, durations, percentages, case, ticket and order
numbers, digit runs that fail a card's checksum, the agent's own name). The values are made with
their formats' real check digits (a phone is one ``phonenumbers`` calls valid), from a fixed seed, so
the same corpus comes out every time and its figures can be compared run to run.

``corpus(language)`` returns the calls; tests/redaction measures recall and survival on them, the
bench times the redactor on them, and the "nothing raw leaves" test sends them to a judge.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field

import phonenumbers

from qa.redaction import checksums


@dataclass(frozen=True)
class Span:
    kind: str  # an entity type (qa.redaction.recognizers) or, for a look-alike, what it is
    start: int
    end: int
    value: str


@dataclass
class Call:
    id: str
    language: str
    agent_name: str
    text: str = ""
    entities: list[Span] = field(default_factory=list)
    lookalikes: list[Span] = field(default_factory=list)

    def add(self, speaker: str, *parts) -> None:
        """One line; parts are strings, ``("E", type, value)`` entities or ``("K", kind, value)`` look-alikes."""
        self.text += f"{speaker}: "
        for part in parts:
            if isinstance(part, str):
                self.text += part
                continue
            tag, kind, value = part
            span = Span(kind, len(self.text), len(self.text) + len(value), value)
            (self.entities if tag == "E" else self.lookalikes).append(span)
            self.text += value
        self.text += "\n"


def E(kind: str, value: str) -> tuple:
    return ("E", kind, value)


def K(kind: str, value: str) -> tuple:
    return ("K", kind, value)


# --- values with their real check digits


def _digits(rng: random.Random, count: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(count))


def _luhn_digit(body: str) -> str:
    for digit in string.digits:
        if checksums.luhn(body + digit):
            return digit
    raise AssertionError(body)


def card_number(rng: random.Random) -> str:
    brand = rng.choice(["visa", "visa", "master", "amex", "discover", "visa19"])
    prefix, length = {
        "visa": ("4", 16), "master": (str(rng.randint(51, 55)), 16), "amex": (rng.choice(["34", "37"]), 15),
        "discover": ("6011", 16), "visa19": ("4", 19),
    }[brand]
    number = prefix + _digits(rng, length - len(prefix) - 1)
    number += _luhn_digit(number)
    style = rng.choice(["space", "space", "dash", "run"])
    if brand == "amex" and style != "run":
        sep = " " if style == "space" else "-"
        return sep.join([number[:4], number[4:10], number[10:]])
    if style == "run":
        return number
    sep = " " if style == "space" else "-"
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


def not_a_card(rng: random.Random) -> str:
    """Sixteen digits in groups of four that fail the Luhn check: an operation number, not a card."""
    while True:
        number = "4" + _digits(rng, 15)
        if not checksums.luhn(number):
            return " ".join(number[i : i + 4] for i in range(0, 16, 4))


# Separators a card is written with besides a space and a dash: a no-break space (a word processor's,
# a CRM's), a narrow one, a zero-width space (pasted from a web form), dots, a space and a format
# character together.
CARD_SEPARATORS = {"nbsp": "\u00a0", "narrow_nbsp": "\u202f", "zwsp": "\u200b", "dot": ".", "space_zwsp": " \u200b"}


def card_digits(rng: random.Random) -> str:
    number = "4" + _digits(rng, 14)
    return number + _luhn_digit(number)


def cuit(rng: random.Random) -> str:
    while True:
        number = rng.choice(["20", "23", "27", "30"]) + _digits(rng, 8)
        for digit in string.digits:
            if checksums.cuit(number + digit):
                value = number + digit
                return rng.choice([f"{value[:2]}-{value[2:10]}-{value[10]}", value])


def dni(rng: random.Random) -> str:
    number = str(rng.randint(10_000_000, 45_999_999))
    return rng.choice([f"{number[:2]}.{number[2:5]}.{number[5:]}", number])


def nif(rng: random.Random) -> str:
    number = _digits(rng, 8)
    letter = "TRWAGMYFPDXBNJZSQVHLCKE"[int(number) % 23]
    return rng.choice([number + letter, f"{number}-{letter}", f"{number} {letter}"])


def nie(rng: random.Random) -> str:
    first = rng.choice("XYZ")
    number = _digits(rng, 7)
    letter = "TRWAGMYFPDXBNJZSQVHLCKE"[int(str("XYZ".index(first)) + number) % 23]
    return rng.choice([f"{first}{number}{letter}", f"{first}-{number}-{letter}"])


def rut(rng: random.Random) -> str:
    body = str(rng.randint(5_000_000, 25_999_999))
    for check in "0123456789K":
        if checksums.rut(body + check):
            dotted = f"{int(body):,}".replace(",", ".")
            return rng.choice([f"{dotted}-{check}", f"{body}-{check}"])
    raise AssertionError(body)


def curp(rng: random.Random) -> str:
    consonants = "BCDFGHJKLMNPQRSTVWXZ"
    while True:
        code = (
            rng.choice(consonants) + rng.choice("AEIOU") + rng.choice(string.ascii_uppercase)
            + rng.choice(string.ascii_uppercase)
            + f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
            + rng.choice("HM") + rng.choice(["DF", "JC", "NL", "MC", "PL", "VZ", "GT"])
            + "".join(rng.choice(consonants) for _ in range(3)) + rng.choice(string.digits)
        )
        for digit in string.digits:
            if checksums.curp(code + digit):
                return code + digit


def cbu(rng: random.Random) -> str:
    def block(body: str, weights: tuple[int, ...]) -> str:
        total = sum(int(d) * w for d, w in zip(body, weights))
        return body + str((10 - total % 10) % 10)

    value = block(_digits(rng, 7), (7, 1, 3, 9, 7, 1, 3)) + block(_digits(rng, 13), (3, 9, 7, 1, 3, 9, 7, 1, 3, 9, 7, 1, 3))
    assert checksums.cbu(value)
    return rng.choice([value, f"{value[:8]} {value[8:]}"])


def iban(rng: random.Random) -> str:
    country, bban = rng.choice([
        ("ES", _digits(rng, 20)), ("DE", _digits(rng, 18)),
        ("GB", "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + _digits(rng, 14)),
        ("FR", _digits(rng, 23)),
    ])
    numeric = "".join(str(int(char, 36)) for char in bban + country + "00")
    check = 98 - int(numeric) % 97
    value = f"{country}{check:02d}{bban}"
    assert checksums.iban(value), value
    return rng.choice([value, " ".join(value[i : i + 4] for i in range(0, len(value), 4))])


def ssn(rng: random.Random) -> str:
    while True:
        value = f"{rng.randint(1, 899):03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
        if checksums.ssn(value):
            return rng.choice([f"{value[:3]}-{value[3:5]}-{value[5:]}", f"{value[:3]} {value[3:5]} {value[5:]}"])


def ssn_run(rng: random.Random) -> str:
    while True:
        value = f"{rng.randint(1, 899):03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
        if checksums.ssn(value):
            return value


_PHONE_FORMATS = {
    "AR": ["11 {4}-{4}", "+54 9 11 {4}-{4}", "011 {4}-{4}", "351 {3}-{4}", "11 15-{4}-{4}"],
    "ES": ["6{2} {3} {3}", "+34 6{2} {2} {2} {2}", "91 {3} {2} {2}", "7{2} {3} {3}"],
    "MX": ["55 {4} {4}", "+52 55 {4} {4}", "33 {4} {4}", "81 {4} {4}"],
    "US": ["({area}) {exch}-{4}", "{area}-{exch}-{4}", "+1 {area} {exch} {4}", "{area}.{exch}.{4}"],
}


def phone(rng: random.Random, region: str | None = None) -> str:
    region = region or rng.choice(list(_PHONE_FORMATS))
    while True:
        pattern = rng.choice(_PHONE_FORMATS[region])
        value = pattern.replace("{area}", str(rng.randint(201, 989))).replace("{exch}", str(rng.randint(201, 989)))
        for count in ("{4}", "{3}", "{2}"):
            while count in value:
                value = value.replace(count, _digits(rng, int(count[1])), 1)
        if phonenumbers.is_valid_number(phonenumbers.parse(value, region)):
            return value


_DOMAINS = ["gmail.com", "hotmail.com", "yahoo.com.ar", "outlook.es", "empresa.com.mx", "mail.com", "icloud.com"]


def email(rng: random.Random, first: str, last: str) -> str:
    user = rng.choice([f"{first}.{last}", f"{first}{last}{rng.randint(1, 99)}", f"{first[0]}{last}", f"{first}_{last}"])
    return _ascii(user.lower()) + "@" + rng.choice(_DOMAINS)


def spoken_email(rng: random.Random, first: str, last: str, language: str) -> str:
    dot, at = ("punto", "arroba") if language == "es" else ("dot", "at")
    domain = rng.choice(["gmail", "hotmail", "yahoo", "outlook"])
    return f"{_ascii(first.lower())} {dot} {_ascii(last.lower())} {at} {domain} {dot} com"


def _ascii(value: str) -> str:
    return value.translate(str.maketrans("áéíóúñü", "aeiounu"))


FIRST = {
    "es": ["María", "Juan", "Lucía", "Carlos", "Sofía", "Martín", "Valentina", "Diego", "Camila", "Javier",
           "Florencia", "Andrés", "Paula", "Santiago", "Gabriela", "Federico", "Rocío", "Pablo", "Daniela",
           "Tomás", "Julieta", "Ricardo", "Carolina", "Alejandro", "Natalia", "Gonzalo", "Verónica", "Hernán"],
    "en": ["John", "Sarah", "Michael", "Emily", "David", "Jessica", "James", "Ashley", "Robert", "Jennifer",
           "William", "Amanda", "Christopher", "Megan", "Daniel", "Lauren", "Matthew", "Rachel", "Joshua",
           "Nicole", "Andrew", "Stephanie", "Brian", "Heather", "Kevin", "Rebecca", "Thomas", "Laura"],
}
LAST = {
    "es": ["Gómez", "Fernández", "Rodríguez", "López", "Martínez", "García", "Pérez", "Sánchez", "Romero",
           "Díaz", "Álvarez", "Torres", "Ruiz", "Benítez", "Castro", "Suárez", "Herrera", "Molina", "Ortiz",
           "Silva", "Rojas", "Medina", "Acosta", "Vázquez", "Morales", "Giménez", "Quiroga", "Navarro"],
    "en": ["Smith", "Johnson", "Williams", "Brown", "Jones", "Miller", "Davis", "Wilson", "Anderson",
           "Taylor", "Thomas", "Moore", "Jackson", "Martin", "Thompson", "White", "Harris", "Clark", "Lewis",
           "Walker", "Hall", "Young", "Allen", "Wright", "Scott", "Green", "Baker", "Nelson"],
}
PLACES = {
    "es": ["Buenos Aires", "Rosario", "Córdoba", "Mendoza", "Madrid", "Sevilla", "Valencia", "Guadalajara",
           "Monterrey", "Santiago", "Mar del Plata", "La Plata", "Tucumán", "Bilbao", "Salta"],
    "en": ["Chicago", "Houston", "Denver", "Seattle", "Boston", "Phoenix", "Atlanta", "Dallas", "Miami",
           "San Diego", "Portland", "Detroit", "Nashville", "Baltimore", "Orlando"],
}
AGENTS = {"es": ["Marta Quiroga", "Lucas Ferreyra", "Inés Paredes"], "en": ["Karen Doyle", "Mark Ellison", "Nina Brooks"]}


def _name(rng: random.Random, language: str, full: float = 0.8) -> str:
    first = rng.choice(FIRST[language])
    return f"{first} {rng.choice(LAST[language])}" if rng.random() < full else first


# --- the phrasings; each returns the parts of one or two lines, as (speaker, parts) pairs


def _templates(language: str):
    es = language == "es"
    A, C = ("AGENTE", "CLIENTE") if es else ("AGENT", "CUSTOMER")

    def line(*parts, speaker=None):
        return [(speaker or C, parts)]

    def ask(question, *answer):
        return [(A, (question,)), (C, answer)]

    if es:
        entity = {
            "CREDIT_CARD": [
                lambda r: line("El número de la tarjeta es ", E("CREDIT_CARD", card_number(r)), "."),
                lambda r: line("Sí, le paso la tarjeta: ", E("CREDIT_CARD", card_number(r)), ", es la de crédito."),
                lambda r: ask("¿Me dicta los números de la tarjeta, por favor?", "Sí, ", E("CREDIT_CARD", card_number(r)), "."),
                lambda r: line("Quiero pagar con la ", E("CREDIT_CARD", card_number(r)), " que termina en otra cosa, no sé."),
            ],
            "CARD_EXPIRY": [
                lambda r: line("Vence el ", E("CARD_EXPIRY", f"{r.randint(1, 12):02d}/{r.randint(26, 32)}"), "."),
                lambda r: line("La fecha de vencimiento es ", E("CARD_EXPIRY", f"{r.randint(1, 12):02d}/20{r.randint(26, 32)}"), "."),
                lambda r: ask("¿Y la fecha de vencimiento?", "Es ", E("CARD_EXPIRY", f"{r.randint(1, 12):02d} del {r.randint(26, 32)}"), "."),
                lambda r: line("La tarjeta vence en ", E("CARD_EXPIRY", f"{r.choice(['marzo', 'julio', 'octubre', 'enero'])} de 20{r.randint(26, 32)}"), "."),
            ],
            "CARD_SECURITY_CODE": [
                lambda r: line("El código de seguridad es ", E("CARD_SECURITY_CODE", _digits(r, 3)), "."),
                lambda r: ask("¿Me dice el código de atrás de la tarjeta?", "Sí, ", E("CARD_SECURITY_CODE", _digits(r, 3)), "."),
                lambda r: line("Los tres números de atrás son ", E("CARD_SECURITY_CODE", _digits(r, 3)), "."),
                lambda r: line("El CVV es ", E("CARD_SECURITY_CODE", _digits(r, r.choice([3, 4]))), ", creo."),
            ],
            "AR_DNI": [
                lambda r: line("Mi DNI es ", E("AR_DNI", dni(r)), "."),
                lambda r: ask("¿Me indica su número de documento para ubicar la cuenta?", "Sí, es el ", E("AR_DNI", dni(r)), "."),
                lambda r: line("El documento del titular es ", E("AR_DNI", dni(r)), ", está a mi nombre."),
            ],
            "AR_CUIT": [
                lambda r: line("El CUIT es ", E("AR_CUIT", cuit(r)), "."),
                lambda r: line("Mi CUIL es ", E("AR_CUIT", cuit(r)), ", para la factura."),
            ],
            "ES_NIF": [lambda r: line("Mi NIF es ", E("ES_NIF", nif(r)), "."),
                       lambda r: ask("¿Me confirma su DNI con la letra?", E("ES_NIF", nif(r)), ".")],
            "ES_NIE": [lambda r: line("Tengo NIE, es el ", E("ES_NIE", nie(r)), ".")],
            "CL_RUT": [lambda r: line("Mi RUT es ", E("CL_RUT", rut(r)), "."),
                       lambda r: ask("¿Su RUT, por favor?", "Claro, ", E("CL_RUT", rut(r)), ".")],
            "MX_CURP": [lambda r: line("Mi CURP es ", E("MX_CURP", curp(r)), ".")],
            "AR_CBU": [lambda r: line("El CBU para la devolución es ", E("AR_CBU", cbu(r)), "."),
                       lambda r: ask("¿A qué cuenta le hacemos la transferencia?", "Al CBU ", E("AR_CBU", cbu(r)), ".")],
            "IBAN_CODE": [lambda r: line("Mi IBAN es ", E("IBAN_CODE", iban(r)), "."),
                          lambda r: line("Hágame la devolución a la cuenta ", E("IBAN_CODE", iban(r)), ", por favor.")],
            "EMAIL_ADDRESS": [
                lambda r: line("Mi correo es ", E("EMAIL_ADDRESS", email(r, r.choice(FIRST["es"]), r.choice(LAST["es"]))), "."),
                lambda r: line("El mail es ", E("EMAIL_ADDRESS", spoken_email(r, r.choice(FIRST["es"]), r.choice(LAST["es"]), "es")), "."),
                lambda r: line("Le mando la constancia a ", E("EMAIL_ADDRESS", email(r, r.choice(FIRST["es"]), r.choice(LAST["es"]))), " hoy mismo.", speaker=A),
            ],
            "PHONE_NUMBER": [
                lambda r: line("Mi celular es ", E("PHONE_NUMBER", phone(r)), "."),
                lambda r: ask("¿Un teléfono de contacto?", "Sí, el ", E("PHONE_NUMBER", phone(r)), "."),
                lambda r: line("Llámeme al ", E("PHONE_NUMBER", phone(r)), " después de las seis."),
            ],
            "US_SSN": [lambda r: line("Tengo número de seguro social de Estados Unidos, es el ", E("US_SSN", ssn(r)), ".")],
            "PERSON": [
                lambda r: line("Hola, soy ", E("PERSON", _name(r, "es")), ", llamo por la factura."),
                lambda r: line("Mi nombre es ", E("PERSON", _name(r, "es", 1.0)), "."),
                lambda r: ask("¿Con quién tengo el gusto?", "Con ", E("PERSON", _name(r, "es", 1.0)), "."),
                lambda r: line("La cuenta está a nombre de ", E("PERSON", _name(r, "es", 1.0)), ", mi esposa."),
                lambda r: line("Perfecto, señora ", E("PERSON", r.choice(LAST["es"])), ", ya lo veo.", speaker=A),
                lambda r: line("Gracias, ", E("PERSON", _name(r, "es", 1.0)), ", le confirmo el reclamo.", speaker=A),
            ],
            "LOCATION": [
                lambda r: line("Vivo en ", E("LOCATION", r.choice(PLACES["es"])), " hace años."),
                lambda r: line("Fui a la sucursal de ", E("LOCATION", r.choice(PLACES["es"])), " y no me atendieron."),
            ],
        }
        keep = [
            lambda r: line("Me cobraron ", K("amount", f"{r.randint(1, 99)}.{r.randint(100, 999)} pesos"), " de más."),
            lambda r: line("El total es ", K("amount", f"$ {r.randint(1, 9)}.{r.randint(100, 999)}.{r.randint(100, 999)}"), ", con el recargo.", speaker=A),
            lambda r: line("Fueron ", K("amount", f"{r.randint(10, 999)},{r.randint(10, 99)} euros"), "."),
            lambda r: line("Veo el débito del ", K("date", f"{r.randint(1, 28)} de noviembre"), ".", speaker=A),
            lambda r: line("La factura vence el ", K("date", f"{r.randint(10, 28)}/{r.randint(1, 12):02d}/2026"), "."),
            lambda r: line("El pago se hizo el ", K("date", f"2026-{r.randint(1, 12):02d}-{r.randint(10, 28)}"), ".", speaker=A),
            lambda r: line("Le llamo mañana a las ", K("time", f"{r.randint(9, 19)}:{r.choice(['00', '15', '30', '45'])}"), ".", speaker=A),
            lambda r: line("La devolución tarda ", K("duration", f"{r.randint(2, 15)} días hábiles"), ".", speaker=A),
            lambda r: line("Estuve ", K("duration", f"{r.randint(20, 90)} minutos"), " esperando."),
            lambda r: line("Tiene un descuento del ", K("percentage", f"{r.randint(5, 50)}%"), " por tres meses.", speaker=A),
            lambda r: line("El interés es del ", K("percentage", f"{r.randint(1, 9)},{r.randint(1, 9)} por ciento"), ".", speaker=A),
            lambda r: line("El número de caso es ", K("case", f"{r.randint(1000, 9999)}-{r.randint(10, 99)}"), ".", speaker=A),
            lambda r: line("Le abro el reclamo ", K("case", str(r.randint(10_000_000, 99_999_999))), ", anótelo.", speaker=A),
            lambda r: line("El número de reclamo es ", K("case", str(r.randint(100_000, 999_999))), ".", speaker=A),
            lambda r: line("El ticket es el ", K("ticket", f"#{r.randint(100_000, 999_999)}"), ".", speaker=A),
            lambda r: line("Mi pedido es el ", K("order", str(r.randint(1_000_000_000, 9_999_999_999))), "."),
            lambda r: line("La orden ", K("order", f"{r.randint(100, 999)}-{r.randint(1000000, 9999999)}"), " no llegó."),
            lambda r: line("El número de operación es ", K("operation", not_a_card(r)), ".", speaker=A),
            lambda r: line("La factura ", K("invoice", f"{r.randint(1, 9)}-{r.randint(10_000_000, 99_999_999)}"), " está paga."),
            lambda r: line("Son ", K("amount", f"{r.randint(3, 24)} cuotas"), " sin interés.", speaker=A),
        ]
    else:
        entity = {
            "CREDIT_CARD": [
                lambda r: line("The card number is ", E("CREDIT_CARD", card_number(r)), "."),
                lambda r: ask("Can you read me the card number, please?", "Sure, ", E("CREDIT_CARD", card_number(r)), "."),
                lambda r: line("I want to pay with ", E("CREDIT_CARD", card_number(r)), ", the Visa one."),
            ],
            "CARD_EXPIRY": [
                lambda r: line("It expires ", E("CARD_EXPIRY", f"{r.randint(1, 12):02d}/{r.randint(26, 32)}"), "."),
                lambda r: ask("And the expiration date?", "It's ", E("CARD_EXPIRY", f"{r.randint(1, 12):02d}/20{r.randint(26, 32)}"), "."),
                lambda r: line("The expiry is ", E("CARD_EXPIRY", f"{r.choice(['March', 'July', 'October', 'January'])} 20{r.randint(26, 32)}"), "."),
            ],
            "CARD_SECURITY_CODE": [
                lambda r: line("The security code is ", E("CARD_SECURITY_CODE", _digits(r, 3)), "."),
                lambda r: ask("And the three digits on the back?", "They're ", E("CARD_SECURITY_CODE", _digits(r, 3)), "."),
                lambda r: line("The CVV is ", E("CARD_SECURITY_CODE", _digits(r, r.choice([3, 4]))), "."),
            ],
            "AR_DNI": [lambda r: line("My DNI is ", E("AR_DNI", dni(r)), ", from Argentina.")],
            "AR_CUIT": [lambda r: line("The CUIT is ", E("AR_CUIT", cuit(r)), ".")],
            "ES_NIF": [lambda r: line("My Spanish NIF is ", E("ES_NIF", nif(r)), ".")],
            "ES_NIE": [lambda r: line("My NIE is ", E("ES_NIE", nie(r)), ".")],
            "CL_RUT": [lambda r: line("My RUT is ", E("CL_RUT", rut(r)), ".")],
            "MX_CURP": [lambda r: line("My CURP is ", E("MX_CURP", curp(r)), ".")],
            "AR_CBU": [lambda r: line("The CBU for the refund is ", E("AR_CBU", cbu(r)), ".")],
            "IBAN_CODE": [lambda r: line("My IBAN is ", E("IBAN_CODE", iban(r)), "."),
                          lambda r: line("Please send it to the account ", E("IBAN_CODE", iban(r)), ".")],
            "EMAIL_ADDRESS": [
                lambda r: line("My email is ", E("EMAIL_ADDRESS", email(r, r.choice(FIRST["en"]), r.choice(LAST["en"]))), "."),
                lambda r: line("It's ", E("EMAIL_ADDRESS", spoken_email(r, r.choice(FIRST["en"]), r.choice(LAST["en"]), "en")), "."),
                lambda r: line("I'll send the receipt to ", E("EMAIL_ADDRESS", email(r, r.choice(FIRST["en"]), r.choice(LAST["en"]))), " today.", speaker=A),
            ],
            "PHONE_NUMBER": [
                lambda r: line("My cell is ", E("PHONE_NUMBER", phone(r, "US")), "."),
                lambda r: ask("What's a good callback number?", "It's ", E("PHONE_NUMBER", phone(r)), "."),
                lambda r: line("Call me at ", E("PHONE_NUMBER", phone(r, "US")), " after six."),
            ],
            "US_SSN": [
                lambda r: line("My social is ", E("US_SSN", ssn(r)), "."),
                lambda r: ask("Can I have the last of the verification, your social security number?", "Yes, ", E("US_SSN", ssn_run(r)), "."),
                lambda r: line("The SSN on file is ", E("US_SSN", ssn(r)), ".", speaker=A),
            ],
            "PERSON": [
                lambda r: line("Hi, this is ", E("PERSON", _name(r, "en")), ", I'm calling about my card."),
                lambda r: line("My name is ", E("PERSON", _name(r, "en", 1.0)), "."),
                lambda r: ask("Who am I speaking with?", "This is ", E("PERSON", _name(r, "en", 1.0)), "."),
                lambda r: line("The account is under ", E("PERSON", _name(r, "en", 1.0)), ", my husband."),
                lambda r: line("Thank you, Mrs. ", E("PERSON", r.choice(LAST["en"])), ", I can see it now.", speaker=A),
                lambda r: line("Thanks, ", E("PERSON", _name(r, "en", 1.0)), ", the claim is open.", speaker=A),
            ],
            "LOCATION": [
                lambda r: line("I live in ", E("LOCATION", r.choice(PLACES["en"])), " now."),
                lambda r: line("I went to the branch in ", E("LOCATION", r.choice(PLACES["en"])), " yesterday."),
            ],
        }
        keep = [
            lambda r: line("I was charged ", K("amount", f"${r.randint(10, 999)}.{r.randint(10, 99)}"), " twice."),
            lambda r: line("The balance is ", K("amount", f"{r.randint(1, 9)},{r.randint(100, 999)} dollars"), ".", speaker=A),
            lambda r: line("I see the charge from ", K("date", f"November {r.randint(1, 28)}, 2026"), ".", speaker=A),
            lambda r: line("The bill is due on ", K("date", f"{r.randint(1, 12)}/{r.randint(10, 28)}/2026"), "."),
            lambda r: line("I'll call you back at ", K("time", f"{r.randint(1, 11)}:{r.choice(['00', '15', '30', '45'])} pm"), ".", speaker=A),
            lambda r: line("The refund takes ", K("duration", f"{r.randint(2, 10)} business days"), ".", speaker=A),
            lambda r: line("I waited ", K("duration", f"{r.randint(20, 90)} minutes"), " on hold."),
            lambda r: line("You get ", K("percentage", f"{r.randint(5, 50)}%"), " off for three months.", speaker=A),
            lambda r: line("The case number is ", K("case", f"{r.randint(1000, 9999)}-{r.randint(10, 99)}"), ".", speaker=A),
            lambda r: line("Your claim number is ", K("case", str(r.randint(10_000_000, 99_999_999))), ".", speaker=A),
            lambda r: line("The ticket is ", K("ticket", f"#{r.randint(100_000, 999_999)}"), ".", speaker=A),
            lambda r: line("My order number is ", K("order", str(r.randint(1_000_000_000, 9_999_999_999))), "."),
            lambda r: line("The reference is ", K("order", f"{r.randint(100, 999)}-{r.randint(1000000, 9999999)}"), ".", speaker=A),
            lambda r: line("The transaction ID is ", K("operation", not_a_card(r)), ".", speaker=A),
            lambda r: line("Invoice ", K("invoice", f"INV-{r.randint(10_000_000, 99_999_999)}"), " is paid."),
            lambda r: line("That's ", K("amount", f"{r.randint(3, 24)} installments"), " with no interest.", speaker=A),
        ]
    return A, C, entity, keep


def corpus(language: str, *, per_type: int = 120, per_lookalike: int = 16, seed: int = 2026) -> list[Call]:
    """Calls in `language` holding `per_type` mentions of every entity type (people: twice that) and
    `per_lookalike` of each look-alike phrasing, five lines each between a greeting and a goodbye; then
    the calls of `card_variants`."""
    rng = random.Random(f"{seed}-{language}")
    agent_label, customer_label, entity, keep = _templates(language)
    pool = []
    for kind, phrasings in entity.items():
        count = per_type * 2 if kind == "PERSON" else per_type
        pool += [phrasings[index % len(phrasings)] for index in range(count)]
    pool += [phrasing for phrasing in keep for _ in range(per_lookalike)]
    rng.shuffle(pool)
    calls = []
    for number, start in enumerate(range(0, len(pool), 5), 1):
        agent = rng.choice(AGENTS[language])
        call = Call(f"{language}-{number:04d}", language, agent)
        first = agent.split()[0]
        if language == "es":
            call.add(agent_label, "Buenos días, le atiende ", K("agent_name", first), ". ¿En qué puedo ayudarle?")
        else:
            call.add(agent_label, "Thanks for calling, my name is ", K("agent_name", first), ". How can I help?")
        for phrasing in pool[start : start + 5]:
            for speaker, parts in phrasing(rng):
                call.add(speaker, *parts)
        call.add(agent_label, "Gracias por llamar, que tenga buen día." if language == "es" else "Thanks for calling, have a good day.")
        calls.append(call)
    return calls + card_variants(language)


def card_variants(language: str, *, per_variant: int = 24, seed: int = 2026) -> list[Call]:
    """Calls whose cards are written with the separators of CARD_SEPARATORS, or dictated across two
    turns ("es 4539 5787" / "6362 1486": each half labelled, since the label between them is not the
    card), with as many numbers in groups of four that fail the Luhn check written the same ways,
    which must survive. Their own seed: `corpus` is the same with or without them."""
    rng = random.Random(f"{seed}-{language}-cards")
    agent_label, customer_label = ("AGENTE", "CLIENTE") if language == "es" else ("AGENT", "CUSTOMER")
    says = "La tarjeta es " if language == "es" else "The card is "
    keeps = "El número de operación es " if language == "es" else "The transaction ID is "
    calls = []
    for number in range(per_variant):
        call = Call(f"{language}-cards-{number + 1:04d}", language, rng.choice(AGENTS[language]))
        for name, separator in CARD_SEPARATORS.items():
            card = card_digits(rng)
            call.add(customer_label, says, E("CREDIT_CARD", separator.join(card[i : i + 4] for i in range(0, 16, 4))), ".")
            other = not_a_card(rng).replace(" ", separator)
            call.add(agent_label, keeps, K("operation", other), ".")
        card = card_digits(rng)
        call.add(customer_label, says, E("CREDIT_CARD", f"{card[:4]} {card[4:8]}"))
        call.add(customer_label, E("CREDIT_CARD", f"{card[8:12]} {card[12:]}"), ".")
        calls.append(call)
    return calls


@dataclass
class Scores:
    """Recall per entity type and survival per look-alike kind on a corpus, with the misses to read."""

    found: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    lookalikes: dict[str, int] = field(default_factory=dict)
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # (call id, kind, value)
    masked_lookalikes: list[tuple[str, str, str]] = field(default_factory=list)
    labels_touched: int = 0
    extra: list[tuple[str, str, str]] = field(default_factory=list)  # found where nothing is labelled

    def recall(self, kind: str) -> float:
        return self.found.get(kind, 0) / self.total[kind]

    def kept_rate(self) -> float:
        return sum(self.kept.values()) / sum(self.lookalikes.values())


def measure(calls: list[Call], find) -> Scores:
    """Score `find(text, language, keep_names)` (qa.redaction.engine.find) on the calls: an entity counts
    as found when entities of its own type cover every one of its characters; a look-alike as kept
    when no entity touches it; a speaker label must never be touched."""
    scores = Scores()
    for call in calls:
        found = find(call.text, call.language, [call.agent_name])
        for span in call.entities:
            covered = set()
            for item in found:
                if item.type == span.kind:
                    covered.update(range(max(item.start, span.start), min(item.end, span.end)))
            scores.total[span.kind] = scores.total.get(span.kind, 0) + 1
            if len(covered) == span.end - span.start:
                scores.found[span.kind] = scores.found.get(span.kind, 0) + 1
            else:
                scores.misses.append((call.id, span.kind, span.value))
        for span in call.lookalikes:
            scores.lookalikes[span.kind] = scores.lookalikes.get(span.kind, 0) + 1
            if any(item.start < span.end and span.start < item.end for item in found):
                scores.masked_lookalikes.append((call.id, span.kind, span.value))
            else:
                scores.kept[span.kind] = scores.kept.get(span.kind, 0) + 1
        for item in found:
            if not any(span.start < item.end and item.start < span.end for span in call.entities):
                scores.extra.append((call.id, item.type, call.text[item.start : item.end]))
        line_starts = [0] + [index + 1 for index, char in enumerate(call.text) if char == "\n"]
        for start in line_starts:
            colon = call.text.find(":", start)
            if colon >= 0 and any(item.start < colon + 1 and start < item.end for item in found):
                scores.labels_touched += 1
    return scores
