"""The CPU one judgment costs in one process: no Celery, no concurrency, and a
fake LLM that answers at once, so what is measured is the judge's own work.
See README.md beside this file.

    .venv/bin/python bench/pipeline/in_process.py --recordings 400
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.pipeline.run import ROOT, recordings_prepare  # noqa: E402  (sets the benchmark's environment)

# The judge's steps, timed by wrapping the names the executor (qa.execution)
# and the judgment (qa.judging) call; the rest (reading the run, building the
# messages) is reported as "other".
STEPS = {
    "qa.execution": ["job_claim", "judgment_store", "quota_acquire"],
    "qa.judging": ["llm_complete", "_draft", "answer_parse"],
}


def timed(step: str, function: Callable[..., Any], spent: Counter[str]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[step] += time.process_time() - started

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=400)
    parser.add_argument("--port", type=int, default=8092)
    args = parser.parse_args()
    os.environ.update(
        OPENAI_BASE_URL=f"http://127.0.0.1:{args.port}/v1", OPENAI_API_KEY="bench", QA_JUDGE_MODEL="fake-judge"
    )
    from bench.database import database_create

    database_create()
    import django

    django.setup()
    from qa import execution, judging

    fake = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_openai", "--port", str(args.port), "--latency", "0"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    try:
        warmup_ids, run_ids = recordings_prepare(args.recordings, warmup=20)
        time.sleep(1)  # the fake server's start
        for run_id in warmup_ids:  # imports, the connection, the question's cache
            execution.judge_run_execute(run_id=run_id)
        spent: Counter[str] = Counter()
        for module in (execution, judging):
            for step in STEPS[module.__name__]:
                setattr(module, step, timed(step, getattr(module, step), spent))
        started = time.process_time()
        outcomes = Counter(execution.judge_run_execute(run_id=run_id).outcome.value for run_id in run_ids)
        total = time.process_time() - started
    finally:
        fake.terminate()
    print(f"judgments: {dict(outcomes)}")
    print(f"CPU per judgment: {total * 1000 / len(run_ids):.2f} ms, of which:")
    for step, seconds in spent.most_common():
        print(f"  {step:<15} {seconds * 1000 / len(run_ids):5.2f} ms")
    print(f"  {'other':<15} {(total - sum(spent.values())) * 1000 / len(run_ids):5.2f} ms")


if __name__ == "__main__":
    main()
