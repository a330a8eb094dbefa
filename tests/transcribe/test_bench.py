"""The transcription benchmark's smoke run: two turns, it completes and prints its figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_transcription_benchmark_runs_and_prints_its_figures():
    result = subprocess.run(
        [sys.executable, "bench/transcribe/run.py", "--turns", "2", "--language", "en"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    print(result.stdout)
    assert result.returncode == 0, result.stderr
    for figure in ("real-time", "transcription", "peak memory", "WER", "turns          2 found, 2 spoken"):
        assert figure in result.stdout
