"""A held-out set of calls for the phone recognizer (issue 41): phone numbers in the formats callers and
agents use that the labelled corpus (corpus.py) does not hold, and the numbers that look like phones
and must survive.

Made from its own seed, apart from the corpus, by someone who had not read which formats the recognizer
misses. Phones: Spain, Mexico, the US and Argentina; grouped by 2, 3 and 4 or not at all; with +34,
+52, +1, +54, 0034, 00 52 and (+34); in parentheses; with dots, dashes, slashes and spaces; with
"ext.", "extensión", "interno", "x"; with a spoken separator ("guion", "dash"); read digit by digit
in words ("seis uno dos…", "two one two… oh"), with "doble"/"double"; and dictated across two turns.
Look-alikes: amounts, dates, times, order, ticket, policy, invoice, customer and tracking numbers,
percentages, years, durations, and everyday number words ("dos o tres días").

The calls are split by a seeded shuffle: ``heldout("dev")`` is the half read while fixing the
recognizer, ``heldout("test")`` the half only measured at the end (bench/redaction/README.md).

    python -m bench.redaction.heldout            # recall and look-alikes kept, per half, pattern recognizers
"""

from __future__ import annotations

import random

import phonenumbers

from bench.redaction.corpus import AGENTS, Call, E, K, _digits, card_digits, measure

SEED = 4141
CALLS_PER_LANGUAGE = 80

# A national significant number per region, drawn until phonenumbers calls it valid, with the prefixes
# it is dialled with.
_REGIONS = {
    "ES": {"length": 9, "starts": ["6", "7", "91", "93", "95", "96", "98"], "plus": ["+34 ", "0034 ", "+34-", "(+34) ", "+34"]},
    "MX": {"length": 10, "starts": ["55", "33", "81", "222", "664", "998"], "plus": ["+52 ", "+52 1 ", "00 52 ", "+52-", "(+52) "]},
    "US": {"length": 10, "starts": ["212", "305", "415", "617", "713", "818", "303"], "plus": ["+1 ", "1-", "+1-", "1 ", "+1."]},
    "AR": {"length": 10, "starts": ["11", "351", "341", "261"], "plus": ["+54 9 ", "+54 ", "0054 9 "]},
}


def national(rng: random.Random, region: str) -> str:
    spec = _REGIONS[region]
    while True:
        start = rng.choice(spec["starts"])
        number = start + _digits(rng, spec["length"] - len(start))
        if region == "US":  # exchange codes 2-9, and not 555-01xx (fictional)
            number = number[:3] + str(rng.randint(2, 9)) + number[4:]
        if phonenumbers.is_valid_number(phonenumbers.parse(number, region)):
            return number


def grouped(number: str, sizes: list[int], separator: str) -> str:
    parts, at = [], 0
    for size in sizes:
        parts.append(number[at : at + size])
        at += size
    if at < len(number):
        parts.append(number[at:])
    return separator.join(part for part in parts if part)


_GROUPINGS = {
    9: [[3, 3, 3], [3, 2, 2, 2], [2, 3, 2, 2], [9], [2, 2, 2, 3], [3, 6]],
    10: [[3, 3, 4], [2, 4, 4], [2, 2, 2, 2, 2], [10], [3, 3, 2, 2], [4, 3, 3], [3, 7]],
}
_SEPARATORS = [" ", " ", "-", ".", " - "]

DIGIT_WORDS = {
    "es": ["cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve"],
    "en": ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"],
}


def written(rng: random.Random, region: str) -> str:
    """A phone as typed by an agent or an ASR: a grouping, a separator, maybe a prefix and parentheses."""
    number = national(rng, region)
    sizes = rng.choice(_GROUPINGS[len(number)])
    separator = rng.choice(_SEPARATORS)
    value = grouped(number, sizes, separator)
    roll = rng.random()
    if region == "US" and roll < 0.3:
        value = f"({number[:3]}) {number[3:6]}{rng.choice(['-', ' ', '.'])}{number[6:]}"
    elif region == "ES" and number[0] == "9" and roll < 0.3:
        value = f"({number[:2]}) {number[2:5]} {number[5:7]} {number[7:]}"
    if rng.random() < 0.45:
        value = rng.choice(_REGIONS[region]["plus"]) + value
    elif region == "AR" and rng.random() < 0.5:
        value = "0" + value
    return value


def spoken(rng: random.Random, region: str, language: str) -> str:
    """A phone read digit by digit in words, in groups (commas or pauses between), maybe with a
    "doble"/"double" and an "oh" for a zero."""
    number = national(rng, region)
    sizes = rng.choice(_GROUPINGS[len(number)][:3])
    words = DIGIT_WORDS[language]
    groups = []
    for group in grouped(number, sizes, " ").split():
        said, index = [], 0
        while index < len(group):
            digit = int(group[index])
            if index + 1 < len(group) and group[index + 1] == group[index] and rng.random() < 0.3:
                said.append(("doble " if language == "es" else "double ") + words[digit])
                index += 2
                continue
            said.append("oh" if language == "en" and digit == 0 and rng.random() < 0.5 else words[digit])
            index += 1
        groups.append(" ".join(said))
    return rng.choice([", ", " ", "... "]).join(groups)


def _pick(rng, *choices):
    return rng.choice(choices)


def _call_lines(rng: random.Random, language: str) -> list[tuple[str, list]]:
    """Five to seven exchanges: about half carry a phone in one of the held-out formats, the rest a
    look-alike."""
    es = language == "es"
    A, C = ("AGENTE", "CLIENTE") if es else ("AGENT", "CUSTOMER")
    region = rng.choice(["ES", "MX", "AR", "US"] if es else ["US", "US", "MX", "ES"])
    lines = []

    def phone_line():
        kind = rng.random()
        if kind < 0.45:
            value = written(rng, region)
            lines.append((C, [_pick(rng, "Mi teléfono es el ", "Anote el ", "Me pueden llamar al ", "El fijo es ")
                              if es else _pick(rng, "My number is ", "You can reach me at ", "Call me back on ", "The landline is "),
                              E("PHONE_NUMBER", value), "."]))
        elif kind < 0.6:
            value = written(rng, region)
            ext = _pick(rng, " ext. ", " extensión ", ", interno ", " ext ", " x", " int. ") if es else _pick(rng, " ext. ", " extension ", " x", " ext ")
            lines.append((A if rng.random() < 0.5 else C,
                          ["Es el " if es else "It's ", E("PHONE_NUMBER", value), ext + _digits(rng, rng.choice([2, 3, 4])), "."]))
        elif kind < 0.7:
            number = national(rng, region)
            word = _pick(rng, " guion ", " guión ") if es else _pick(rng, " dash ", " hyphen ")
            value = grouped(number, rng.choice(_GROUPINGS[len(number)][:3]), word)
            lines.append((C, ["Es el " if es else "It's ", E("PHONE_NUMBER", value), "."]))
        elif kind < 0.9:
            lines.append((A, ["¿Me da un teléfono de contacto?" if es else "What's the best number to reach you?"]))
            lines.append((C, ["Sí, " if es else "Sure, ", E("PHONE_NUMBER", spoken(rng, region, language)), "."]))
        else:
            # Dictated across two turns, cut between two of its groups.
            number = national(rng, region)
            groups = grouped(number, rng.choice(_GROUPINGS[len(number)][:3]), " ").split()
            cut = rng.randint(1, len(groups) - 1)
            lines.append((C, ["Es el " if es else "It's ", E("PHONE_NUMBER", " ".join(groups[:cut]))]))
            lines.append((A, ["Sí..." if es else "Uh-huh..."]))
            lines.append((C, [E("PHONE_NUMBER", " ".join(groups[cut:])), "."]))

    def lookalike_line():
        year = str(rng.randint(1995, 2026))
        amount = rng.choice([
            f"{rng.randint(1, 999)}.{rng.randint(0, 999):03d}.{rng.randint(0, 999):03d}",
            f"{rng.randint(1, 99)}.{rng.randint(0, 999):03d},{rng.randint(0, 99):02d}",
            f"{rng.randint(1, 999)},{rng.randint(0, 999):03d},{rng.randint(0, 999):03d}.{rng.randint(0, 99):02d}",
            f"{rng.randint(1, 99)} {rng.randint(0, 999):03d} {rng.randint(0, 999):03d}",
        ])
        day, month = rng.randint(1, 28), rng.randint(1, 12)
        options = [
            ("amount", ["Me cobraron $", K("amount", amount), " de más." if es else ""] if es else ["They charged me $", K("amount", amount), " too much."]),
            ("amount", ["El saldo es de ", K("amount", amount), " pesos."] if es else ["The balance is ", K("amount", amount), " dollars."]),
            ("date", ["La compra fue el ", K("date", f"{day:02d}/{month:02d}/{year}"), "."] if es else ["I bought it on ", K("date", f"{month:02d}/{day:02d}/{year}"), "."]),
            ("date", ["Registrado el ", K("date", f"{year}-{month:02d}-{day:02d}"), " a las ", K("time", f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"), "."]
             if es else ["Logged on ", K("date", f"{year}-{month:02d}-{day:02d}"), " at ", K("time", f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"), "."]),
            ("date", ["Vino el técnico el ", K("date", f"{day:02d}.{month:02d}.{year}"), "."] if es else ["The technician came on ", K("date", f"{day:02d}.{month:02d}.{year}"), "."]),
            ("order", ["El número de pedido es ", K("order", grouped(_digits(rng, 9), [3, 3, 3], " ")), "."] if es else ["The order number is ", K("order", grouped(_digits(rng, 10), [3, 3, 4], "-")), "."]),
            ("ticket", ["Le dejo el ticket ", K("ticket", _digits(rng, 10)), " para seguimiento."] if es else ["Your ticket is ", K("ticket", _digits(rng, 10)), " for follow-up."]),
            ("policy", ["Su póliza es la ", K("policy", grouped(_digits(rng, 10), [2, 4, 4], " ")), "."] if es else ["Your policy number is ", K("policy", grouped(_digits(rng, 10), [3, 3, 4], " ")), "."]),
            ("invoice", ["Es la factura ", K("invoice", grouped(_digits(rng, 10), [4, 6], "-")), "."] if es else ["It's invoice ", K("invoice", grouped(_digits(rng, 10), [4, 6], "-")), "."]),
            ("customer", ["Mi número de cliente es ", K("customer", _digits(rng, 9)), "."] if es else ["My customer number is ", K("customer", _digits(rng, 10)), "."]),
            ("tracking", ["El número de seguimiento es ", K("tracking", grouped(_digits(rng, 12), [4, 4, 4], " ")), "."] if es else ["The tracking number is ", K("tracking", grouped(_digits(rng, 12), [4, 4, 4], " ")), "."]),
            ("percentage", ["La tasa subió al ", K("percentage", f"{rng.randint(1, 99)},{rng.randint(0, 9)} %"), "."] if es else ["The rate went up to ", K("percentage", f"{rng.randint(1, 99)}.{rng.randint(0, 9)}%"), "."]),
            ("year", ["Soy cliente desde ", K("year", year), " y en ", K("year", str(rng.randint(1995, 2026))), " cambié de plan."] if es else ["I've been a customer since ", K("year", year), " and changed plans in ", K("year", str(rng.randint(1995, 2026))), "."]),
            ("duration", ["Estuve ", K("duration", f"{rng.randint(1, 3)} horas {rng.randint(1, 59)} minutos"), " esperando."] if es else ["I waited ", K("duration", f"{rng.randint(1, 3)} hours {rng.randint(1, 59)} minutes"), "."]),
            ("words", ["Me llaman ", K("words", "dos o tres veces por día, uno o dos minutos"), "."] if es else ["They call me ", K("words", "two or three times a day, one or two minutes"), "."]),
            ("words", ["Pagué ", K("words", "tres cuotas de cuatro mil"), ", faltan ", K("words", "seis o siete"), "."] if es else ["I paid ", K("words", "three installments of four hundred"), ", with ", K("words", "six or seven"), " to go."]),
            ("operation", ["La tarjeta termina en ", K("operation", card_digits(rng)[-4:]), " y el movimiento es ", K("operation", f"{_digits(rng, 4)} {_digits(rng, 4)} {_digits(rng, 3)}"), "."]
             if es else ["The card ends in ", K("operation", card_digits(rng)[-4:]), " and the transaction is ", K("operation", f"{_digits(rng, 4)} {_digits(rng, 4)} {_digits(rng, 3)}"), "."]),
        ]
        _, parts = rng.choice(options)
        lines.append((rng.choice([A, C]), [part for part in parts if part != ""]))

    for _ in range(rng.randint(5, 7)):
        (phone_line if rng.random() < 0.4 else lookalike_line)()
    return lines


def calls(language: str) -> list[Call]:
    rng = random.Random(f"{SEED}-{language}")
    result = []
    for number in range(CALLS_PER_LANGUAGE):
        agent = rng.choice(AGENTS[language])
        call = Call(f"heldout-{language}-{number + 1:03d}", language, agent)
        first = agent.split()[0]
        if language == "es":
            call.add("AGENTE", "Buenas tardes, habla ", K("agent_name", first), ", ¿en qué le ayudo?")
        else:
            call.add("AGENT", "Hi, this is ", K("agent_name", first), ", how can I help?")
        for speaker, parts in _call_lines(rng, language):
            call.add(speaker, *parts)
        call.add("AGENTE" if language == "es" else "AGENT", "Gracias, buen día." if language == "es" else "Thanks, bye.")
        result.append(call)
    return result


def heldout(half: str, languages=("es", "en")) -> list[Call]:
    """The dev half (read while fixing) or the test half (only measured), split per language by a
    seeded shuffle."""
    if half not in ("dev", "test", "all"):
        raise ValueError(f"half must be dev, test or all, not {half!r}")
    chosen = []
    for language in languages:
        every = calls(language)
        order = list(range(len(every)))
        random.Random(f"{SEED}-split-{language}").shuffle(order)
        dev = set(order[: len(order) // 2])
        chosen += [call for index, call in enumerate(every)
                   if half == "all" or (index in dev) == (half == "dev")]
    return chosen


def main() -> None:
    import argparse

    from qa.redaction import engine

    parser = argparse.ArgumentParser(description="phone recall and look-alikes kept on the held-out set")
    parser.add_argument("--half", choices=["dev", "test", "all"], action="append")
    parser.add_argument("--misses", action="store_true", help="print every miss and masked look-alike")
    args = parser.parse_args()
    for half in args.half or ["dev", "test"]:
        chosen = heldout(half)
        scores = measure(chosen, lambda text, language, keep: engine.find(text, language, names=False, keep_names=keep))
        phones = scores.total.get("PHONE_NUMBER", 0)
        lookalikes = sum(scores.lookalikes.values())
        print(f"{half}: {len(chosen)} calls; PHONE_NUMBER recall {scores.recall('PHONE_NUMBER'):.3f} "
              f"({scores.found.get('PHONE_NUMBER', 0)} of {phones}); look-alikes kept {scores.kept_rate():.3f} "
              f"({sum(scores.kept.values())} of {lookalikes}); found where nothing is labelled: {len(scores.extra)}")
        if args.misses:
            for miss in scores.misses:
                print("  miss", miss)
            for masked in scores.masked_lookalikes:
                print("  masked", masked)
            for extra in scores.extra:
                print("  extra", extra)


if __name__ == "__main__":
    main()
