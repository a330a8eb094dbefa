"""Redacting says nothing of the redactor's own loading: Presidio logs each recognizer it loads and the
device it found at INFO (a few dozen lines the first time a process redacts), which broke the demo's
progress bar and told an operator nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_manage_py_redact_prints_the_redaction_and_no_loading_noise():
    line = '{"id": 1, "text": "CLIENTE: Hola, soy Ana Pérez, mi tarjeta es 4539 5787 6362 1486.", "agent_name": ""}\n'
    result = subprocess.run(
        [sys.executable, "manage.py", "redact", "--language", "es"],
        input=line, capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "LOG_LEVEL": "INFO"},
    )
    assert result.returncode == 0, result.stderr
    assert "[TARJETA_1]" in result.stdout  # it did load the recognizers and redact
    assert "Loaded recognizer" not in result.stderr
    assert "Using device of type" not in result.stderr
