"""What the transcriber writes when a customer reads a card number out digit by digit (issue 41): calls
spoken by espeak-ng (tests/support/calls.py), transcribed by the recognizer the environment selects
(qa.transcription.recognizer_get: by default the bundled Whisper base on the CPU), then redacted.

    DJANGO_SETTINGS_MODULE=config.settings.test python -m bench.redaction.spoken_cards

Prints each customer turn as said and as written, and whether the redactor masks the card in it.
"""

from __future__ import annotations

import logging
import random
import tempfile
import time
from pathlib import Path

import django

from bench.redaction.corpus import card_digits

# Luhn-valid numbers: one of the issue's, three drawn as the corpus draws them (seeded), and two of the
# networks' published test cards, whose long runs of one digit are hard on a recognizer.
CARDS = ["4539148803436467", *(card_digits(random.Random(f"spoken-{n}")) for n in range(3)), "4111111111111111",
         "5555555555554444"]
WORDS = {
    "es": ["cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve"],
    "en": ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"],
}
SAYS = {
    "es": ("Buenos días, ¿me dicta el número de la tarjeta, por favor?", "Sí, es {card}."),
    "en": ("Good morning, could you read me the card number, please?", "Yes, it is {card}."),
}


def read_out(card: str, language: str) -> str:
    """The card in four groups of four digits, each digit a word: "cuatro cinco tres nueve, uno ..."."""
    return ", ".join(" ".join(WORDS[language][int(digit)] for digit in card[at : at + 4]) for at in range(0, 16, 4))


def main() -> None:
    django.setup()
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)  # no name model asked for: says so per call
    from qa.redaction import engine
    from qa.redaction.recognizers import CREDIT_CARD
    from qa.transcription import recognizer_get, transcribe
    from tests.support.calls import stereo_call

    recognizer = recognizer_get()
    print(f"recognizer: {recognizer.name} {recognizer.model}")
    for language in ("es", "en"):
        for card in CARDS:
            question, answer = SAYS[language]
            script = [("agent", question), ("customer", answer.format(card=read_out(card, language)))]
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "call.wav"
                stereo_call(script, language=language, out=path)
                started = time.process_time()
                with path.open("rb") as audio:
                    transcript = transcribe(audio, channels=2, agent_channel="left", language=language, recognizer=recognizer)
                seconds = time.process_time() - started
            text = "\n".join(f"{turn.speaker}: {turn.text}" for turn in transcript.turns)
            customer = [turn.text for turn in transcript.turns if turn.speaker in ("CLIENTE", "CUSTOMER")]
            found = [item for item in engine.find(text, language, names=False) if item.type == CREDIT_CARD]
            print(f"\n{language} {card} ({seconds:.1f} s CPU)\n  said:    {script[1][1]}\n  written: {' | '.join(customer)}"
                  f"\n  card masked: {'yes' if found else 'no'}"
                  + "".join(f"  [{text[item.start:item.end]}]" for item in found))


if __name__ == "__main__":
    main()
