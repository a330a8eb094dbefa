"""The experiments benchmark's smoke run: it completes on a few hundred rows and prints its figures
(no timing assertion: the figures live in bench/experiments/README.md)."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db

RUN = Path(__file__).resolve().parents[2] / "bench" / "experiments" / "run.py"


@pytest.fixture
def any_answer(monkeypatch, settings):
    """The fake LLM answering every request validly, as the benchmark's does."""
    with FakeOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        settings.QA_JUDGE_MODEL = "fake-judge"
        yield server


def test_the_benchmark_runs_small(any_answer, capsys):
    spec = importlib.util.spec_from_file_location("bench_experiments_run", RUN)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    cpu = bench.cpu_per_recording(20)
    comparison = bench.comparison_seconds(300)
    bench.report(cpu, comparison, argparse.Namespace(recordings=20, comparison=300))

    output = capsys.readouterr().out
    assert "experiment, draft version" in output and "Comparison of 300 recordings x 12 criteria" in output
    assert all(value > 0 for value in [*cpu.values(), *comparison.values()])
