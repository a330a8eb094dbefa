"""Try the redaction rules on your own calls, without storing or sending anything.

    python manage.py redact --language es < calls.jsonl > redacted.jsonl

Reads JSON lines ``{"id": ..., "text": "AGENTE: ...", "agent_name": "Marta Quiroga"}`` (agent_name
optional: that name is kept, as when a call is judged) and writes one line per call:
``{"id", "text", "entities": [{"type", "start", "end"}]}``, ``text`` with every entity found replaced
by its placeholder and ``start``/``end`` character offsets into the input's text. A line that cannot be
read is reported on stderr with its number and skipped; the others are still written, and the command
then exits with status 1.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from qa.redaction.engine import find, redact
from qa.redaction.recognizers import LANGUAGES


class Command(BaseCommand):
    help = "Redact JSON lines {id, text} from stdin and write {id, text, entities} to stdout."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--language", required=True, choices=LANGUAGES, help="the calls' language")
        parser.add_argument(
            "--placeholders", choices=LANGUAGES, help="the placeholders' language (default: --language)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        language = options["language"]
        placeholders = options["placeholders"] or language
        stdin = options.get("stdin") or sys.stdin
        bad = 0
        for number, line in enumerate(stdin, 1):
            if not line.strip():
                continue
            try:
                call = _parse(line)
            except ValueError as error:
                bad += 1
                self.stderr.write(f"line {number}: {error}")
                continue
            found = find(call["text"], language, keep_names=[call.get("agent_name") or ""])
            redaction = redact(call["text"], found, placeholder_language=placeholders)
            self.stdout.write(json.dumps({
                "id": call["id"],
                "text": redaction.text,
                "entities": [{"type": item.type, "start": item.start, "end": item.end} for item in found],
            }, ensure_ascii=False))
        if bad:
            raise CommandError(f"{bad} line(s) could not be read; the others were written.", returncode=1)


def _parse(line: str) -> dict:
    try:
        call = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(call, dict):
        raise ValueError("each line must be a JSON object with id and text")
    if "id" not in call:
        raise ValueError("missing 'id'")
    if not isinstance(call.get("text"), str):
        raise ValueError(f"'text' must be a string (call {call['id']!r})")
    if call.get("agent_name") is not None and not isinstance(call["agent_name"], str):
        raise ValueError(f"'agent_name' must be a string (call {call['id']!r})")
    return call
