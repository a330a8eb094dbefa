"""python manage.py redact: JSON lines in, redacted JSON lines out, offsets into the input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CALLS = [
    {"id": "a", "text": "AGENTE: Le atiende Marta.\nCLIENTE: Soy María Gómez, tarjeta 4111 1111 1111 1111, caso 4417-22.\n",
     "agent_name": "Marta Quiroga"},
    {"id": 7, "text": "CLIENTE: Mi correo es jp@example.com y mi CBU 0170099220000067797370.\n"},
]


def redact(lines: list[str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "redact", *args],
        input="\n".join(lines) + "\n", capture_output=True, text=True, cwd=ROOT, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_redacts_each_line_with_offsets_into_the_input():
    result = redact([json.dumps(call, ensure_ascii=False) for call in CALLS], "--language", "es")
    assert result.returncode == 0, result.stderr
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in out] == ["a", 7]
    first, second = out
    assert first["text"] == "AGENTE: Le atiende Marta.\nCLIENTE: Soy [NOMBRE_1], tarjeta [TARJETA_1], caso 4417-22.\n"
    spans = [(e["type"], CALLS[0]["text"][e["start"] : e["end"]]) for e in first["entities"]]
    assert spans == [("PERSON", "María Gómez"), ("CREDIT_CARD", "4111 1111 1111 1111")]
    spans = [(e["type"], CALLS[1]["text"][e["start"] : e["end"]]) for e in second["entities"]]
    assert spans == [("EMAIL_ADDRESS", "jp@example.com"), ("AR_CBU", "0170099220000067797370")]
    assert "[EMAIL_1]" in second["text"] and "[CBU_1]" in second["text"]


def test_english_placeholders_for_a_spanish_call():
    result = redact([json.dumps(CALLS[1])], "--language", "es", "--placeholders", "en")
    assert result.returncode == 0, result.stderr
    assert "[EMAIL_1]" in result.stdout and "[CBU_1]" in result.stdout


def test_a_bad_line_is_named_and_the_rest_still_written():
    lines = [json.dumps(CALLS[0]), "{not json", json.dumps({"id": 3}), json.dumps(CALLS[1])]
    result = redact(lines, "--language", "es")
    assert result.returncode == 1
    assert "line 2: not JSON" in result.stderr
    assert "line 3: 'text' must be a string (call 3)" in result.stderr
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["a", 7]


def test_language_is_required_and_checked():
    result = redact([json.dumps(CALLS[1])], "--language", "pt")
    assert result.returncode != 0 and "invalid choice: 'pt'" in result.stderr
