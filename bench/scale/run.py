"""Load test at the target's shape (issue 45): calls posted through the REST API at a fixed rate to one
web, two judge workers and beat, started as compose.yaml's containers start them, judged by a scripted
OpenAI-compatible server with a realistic latency, synchronously or in batches. See README.md beside
this file.

    python -m bench.scale.run --rate 4 --minutes 15 --mode sync [--fresh] [--json scale.json]
    python -m bench.scale.run --rate 12 --minutes 2 --mode batch [--fresh]
    python -m bench.scale.run --rate 4 --minutes 15 --mode sync --stack compose

`--stack native` (the default) starts the processes on this machine; `--stack compose` brings up the
project's compose.yaml with podman-compose instead (compose.py beside this file).

An open-loop generator: each call is posted at its time on the schedule (rate per second), whatever
the judging is doing. Every few seconds it samples the queue depth (the Celery queue's length in
Redis, the runs pending and running in the database), the CPU time of every process of the shape (from
/proc), and the load average. Once every posted call is judged (or --drain-timeout passed) it reads
from the database each call's time from post to judged (the recording's `created_at` to its run's
`finished_at`), the CPU per call of each process type, and each table's growth
(`pg_total_relation_size`) per call; it writes them as JSON and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_scale")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/6")
# What the image sets (Containerfile) and what .env must give production's settings; plain HTTP on loopback.
SHAPE_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "SECRET_KEY": "bench-only-secret-key-not-for-production-use-0123456789",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "SECURE_SSL_REDIRECT": "0",
    "PYTHONUNBUFFERED": "1",
    "OPENAI_API_KEY": "bench",
    # Raised above the test's peak: the defaults (600 posts a minute per key, 500 judge requests a minute)
    # are below 12 calls a second, and an operator at that rate raises them too (README).
    "QA_API_THROTTLE_RATE": "100000/min",
    "QA_LLM_REQUESTS_PER_MINUTE": "100000",
}
SOURCE = "scale"
BACKENDS = "postgresql (this database's backends)"
CONMON = "conmon (podman's monitor, one a container)"
RUBRIC = "soporte-cobranzas"
JUDGE = "scale-judge"
# The bench judge's prices per million tokens (input, cached input, output; batch discount %): the
# README's arithmetic uses real price tables; these only show the cost column works end to end.
PRICES = {"prompt_price": "2", "cached_prompt_price": "0.5", "completion_price": "8", "batch_discount": "50"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, required=True, help="calls posted per second")
    parser.add_argument("--minutes", type=float, required=True, help="how long calls are posted")
    parser.add_argument("--mode", choices=["sync", "batch"], required=True, help="the judge's mode")
    parser.add_argument(
        "--stack", choices=["native", "compose"], default="native",
        help="native: the shape's processes on this machine; compose: compose.yaml under podman-compose (root)",
    )  # fmt: skip
    parser.add_argument("--latency", type=float, default=2.0, help="the scripted judge's seconds per answer (sync)")
    parser.add_argument("--jitter", type=float, default=0.5, help="± seconds on each answer, uniformly (sync)")
    parser.add_argument("--web-concurrency", type=int, default=int(os.environ.get("WEB_CONCURRENCY", 3)))
    parser.add_argument("--worker-concurrency", type=int, default=int(os.environ.get("WORKER_CONCURRENCY", 10)))
    parser.add_argument("--workers", type=int, default=2, help="judge worker processes")
    parser.add_argument("--collect-interval", type=int, default=60, help="QA_BATCH_COLLECT_INTERVAL (batch)")
    parser.add_argument("--poll-interval", type=int, default=60, help="QA_BATCH_POLL_INTERVAL (batch)")
    parser.add_argument(
        "--polls-in-progress", type=int, default=1, help="polls the batch server answers in_progress first (batch)"
    )
    parser.add_argument(
        "--warm-up", type=int, default=40, help="calls posted and judged first, not counted (loads the models)"
    )
    parser.add_argument(
        "--transcript-chars", type=int, default=4800,
        help="each call's transcript, a different Spanish dialogue of about this size (bench/api's); 0: the short "
             "sample calls as they are",
    )  # fmt: skip
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--drain-timeout", type=float, default=600.0, help="seconds to wait for the last judgments")
    parser.add_argument("--web-port", type=int, default=8095)
    parser.add_argument("--judge-port", type=int, default=8096)
    parser.add_argument(
        "--fresh", action="store_true", help="drop and recreate the bench's database first (compose: always fresh)"
    )
    parser.add_argument("--json", type=Path, help="where to write the figures (default: the temp folder)")
    return parser.parse_args(argv)


# --- The database and the data ------------------------------------------------------------------------


def database_fresh() -> None:
    import environ
    import psycopg

    config = environ.Env.db_url_config(os.environ["DATABASE_URL"])
    with psycopg.connect(host=config["HOST"], port=config["PORT"] or 5432, user=config["USER"], dbname="postgres",
                         autocommit=True) as connection:  # fmt: skip
        connection.execute(f'DROP DATABASE IF EXISTS "{config["NAME"]}" WITH (FORCE)')


def data_prepare(args: argparse.Namespace, judge_url: str) -> tuple[str, list[str]]:
    """The sample rubric, a key for the posting system, and the default judge in the run's mode;
    the key and the transcripts to post (the rubric's Spanish sample calls)."""
    from django.core.management import call_command

    from access.models import ApiKey
    from access.scope import EVERYTHING
    from qa.api.services import api_key_create
    from qa.models import Judge, Recording
    from rubrics.selectors import rubric_latest_published

    call_command("migrate", verbosity=0)
    call_command("load_samples", stdout=open(os.devnull, "w"))
    rubric = rubric_latest_published(slug=RUBRIC, scope=EVERYTHING)
    transcripts = list(
        Recording.objects.filter(rubric=rubric, source="samples").exclude(transcript="").values_list("transcript", flat=True)
    )
    ApiKey.objects.filter(name=SOURCE).delete()
    _key, key = api_key_create(name=SOURCE)
    Judge.objects.filter(is_default=True).update(is_default=False)
    Judge.objects.update_or_create(
        name=JUDGE,
        defaults={"backend": Judge.Backend.OPENAI_COMPATIBLE, "base_url": judge_url, "model": "scripted-judge",
                  "api_key_variable": "OPENAI_API_KEY", "evidence_mode": "quote", "mode": args.mode,
                  "is_default": True, **PRICES},
    )  # fmt: skip
    return key, transcripts


def table_sizes() -> dict[str, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            # A partitioned table (scores, events: core.partitions) has no storage of its own: its size
            # is its partitions', counted under its name.
            "SELECT c.relname, CASE WHEN c.relkind = 'p' THEN (SELECT coalesce(sum(pg_total_relation_size(t.relid)), 0)"
            " FROM pg_partition_tree(c.oid) t WHERE t.isleaf) ELSE pg_total_relation_size(c.oid) END"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition"
        )
        sizes = dict(cursor.fetchall())
        cursor.execute("SELECT pg_database_size(current_database())")
        sizes["(whole database)"] = cursor.fetchone()[0]
    return sizes


# --- The processes ------------------------------------------------------------------------------------


def processes_start(args: argparse.Namespace, logs: Path) -> dict[str, subprocess.Popen]:
    """The scripted judge, then the shape as container/entrypoint.sh starts each role, each in a
    session of its own (its CPU is read by process group)."""
    env = {**os.environ, **SHAPE_ENV, "PYTHONPATH": str(ROOT)}
    if args.mode == "batch":
        env |= {"QA_BATCH_COLLECT_INTERVAL": str(args.collect_interval), "QA_BATCH_POLL_INTERVAL": str(args.poll_interval)}
    python = sys.executable
    commands = {
        "scripted judge": judge_command(args, "127.0.0.1"),
        "web": [python, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{args.web_port}",
                "--workers", str(args.web_concurrency), "--access-logfile", "-"],  # fmt: skip
        **{
            f"judge worker {index}": [python, "-m", "celery", "-A", "config", "worker", "--pool", "threads",
                                      "--concurrency", str(args.worker_concurrency), "--loglevel", "INFO",
                                      # Containers differ by host name; here the node names must.
                                      "--hostname", f"judge{index}@%h"]  # fmt: skip
            for index in range(1, args.workers + 1)
        },
        "beat": [python, "-m", "celery", "-A", "config", "beat", "--schedule", str(logs / "celerybeat-schedule"),
                 "--loglevel", "INFO"],  # fmt: skip
    }
    return commands_start(commands, env, logs)


def judge_command(args: argparse.Namespace, host: str) -> list[str]:
    """The scripted judge, bound to `host` (loopback natively, the project network's gateway for compose)."""
    python = sys.executable
    if args.mode == "sync":
        return [python, "-m", "tests.support.fake_openai", "--host", host, "--port", str(args.judge_port),
                "--latency", str(args.latency), "--jitter", str(args.jitter)]  # fmt: skip
    return [python, "-m", "tests.support.fake_batches", "--host", host, "--port", str(args.judge_port),
            "--polls-in-progress", str(args.polls_in_progress)]  # fmt: skip


def commands_start(commands: dict[str, list[str]], env: dict[str, str], logs: Path) -> dict[str, subprocess.Popen]:
    started = {}
    for role, command in commands.items():
        log = open(logs / f"{role.replace(' ', '-')}.log", "w")
        started[role] = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)  # fmt: skip
    return started


def processes_stop(processes: dict[str, subprocess.Popen]) -> None:
    for process in processes.values():
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for process in processes.values():
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def ready_wait(args: argparse.Namespace, processes: dict[str, subprocess.Popen], timeout: float = 180) -> None:
    from config.celery import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for role, process in processes.items():
            if process.poll() is not None:
                raise SystemExit(f"{role} exited with {process.returncode} while starting: see its log")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{args.web_port}/accounts/login/", timeout=5) as answer:
                web = answer.status == 200
        except (urllib.error.URLError, OSError):
            web = False
        if web and len(app.control.ping(timeout=1.0)) >= args.workers:
            return
        time.sleep(1)
    raise SystemExit("the shape did not become ready in time")


class Cpu:
    """CPU seconds (user + system) per process type, from /proc: each process's time since the first
    sample it was seen in (0 for one started later), its last sample kept after it exits. PostgreSQL's
    backends are those connected to this database (pg_stat_activity); Redis is the one server, shared
    with whatever else uses it.

    With a compose stack, a process is its container's role (its /proc/PID/cgroup names the container's
    id): PostgreSQL's backends for this database are those of the db container whose pid there (NSpid)
    pg_stat_activity lists, its other processes (WAL writer, checkpointer, autovacuum...) a role of their
    own; conmon, podman's monitor of each container, another; Redis is the redis container's alone."""

    def __init__(self, processes: dict[str, subprocess.Popen], containers: dict[str, str] | None = None) -> None:
        self.groups = {process.pid: role for role, process in processes.items()}
        self.containers = containers or {}
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.role: dict[int, str] = {}
        self.lock = threading.Lock()
        self.started = False

    def sample(self, backends: set[int]) -> None:
        seen: dict[int, tuple[str, float]] = {}
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                command = (proc / "cmdline").read_bytes()
            except OSError:
                continue  # gone meanwhile
            pid, group = int(proc.name), int(fields[2])
            if pid == os.getpid():
                role = "bench driver"
            elif group in self.groups:
                role = self.groups[group]
            elif self.containers:
                if (role := self.container_role(proc, command, backends)) is None:
                    continue
            elif pid in backends:
                role = BACKENDS
            elif command.startswith(b"redis-server") or b"/redis-server" in command.split(b"\0")[0]:
                role = "redis (shared)"
            else:
                continue
            seen[pid] = (role, (int(fields[11]) + int(fields[12])) / self.ticks)
        with self.lock:
            for pid, (role, used) in seen.items():
                if pid not in self.first:
                    self.first[pid] = used if not self.started else 0.0
                # A backend stays one when the last sample is read without the backends (compose: the db
                # container's processes are seen whatever the backends, which are all known by then).
                self.last[pid] = used
                self.role[pid] = BACKENDS if self.role.get(pid) == BACKENDS else role
            self.started = True

    def container_role(self, proc: Path, command: bytes, backends: set[int]) -> str | None:
        from bench.scale.compose import container_in, namespace_pid

        program = Path(command.split(b"\0")[0].decode(errors="replace")).name
        if program == "conmon":
            return CONMON if any(container_id.encode() in command for container_id in self.containers) else None
        if program == "aardvark-dns":
            return "aardvark-dns (the networks' name server, shared)"
        try:
            role = container_in((proc / "cgroup").read_text(), self.containers)
            if role == "db container":
                backend = namespace_pid((proc / "status").read_text()) in backends
                return BACKENDS if backend else "db container: PostgreSQL's other processes"
        except OSError:
            return None
        return role

    def by_role(self) -> dict[str, float]:
        totals: dict[str, float] = defaultdict(float)
        with self.lock:
            for pid, used in self.last.items():
                totals[self.role[pid]] += used - self.first[pid]
        return dict(totals)


# --- The load and the samples -------------------------------------------------------------------------


def post(url: str, key: str, body: bytes, due: float) -> tuple[float, int, float, int | None]:
    """Post one call: how late it was sent against its time on the schedule (a client free to send it),
    the answer's status, its seconds and the recording's id."""
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Authorization": f"Api-Key {key}", "Content-Type": "application/json"})  # fmt: skip
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            status, payload = answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return started - due, error.code, time.monotonic() - started, None
    except OSError:
        return started - due, 0, time.monotonic() - started, None
    return started - due, status, time.monotonic() - started, payload.get("id")


def load_generate(
    args: argparse.Namespace, key: str, transcripts: list[str], tag: str, count: int
) -> list[dict[str, Any]]:
    """Post `count` calls at args.rate, each at its time on the schedule (open loop: a slow answer
    delays no later post, unless 256 are in flight at once). Each post's lateness, status and time."""
    from bench.api.run import transcript  # a six-minute call is about 4,800 characters (README)

    url = f"http://127.0.0.1:{args.web_port}/api/recordings/"
    posts: list[dict[str, Any]] = []
    futures = []
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=256) as pool:
        for index in range(count):
            due = start + index / args.rate
            if (wait := due - time.monotonic()) > 0:
                time.sleep(wait)
            text = transcript(index, args.transcript_chars) if args.transcript_chars else transcripts[index % len(transcripts)]
            body = json.dumps({
                "external_id": f"{tag}-{index}", "rubric": RUBRIC, "agent": {"id": f"ag-{index % 200}", "name": "Agente"},
                "team": f"team-{index % 10}", "channel": "voice", "language": "es",
                "occurred_at": datetime.now(UTC).isoformat(), "transcript": text,
            }).encode()  # fmt: skip
            posts.append({})
            futures.append(pool.submit(post, url, key, body, due))
        sent = time.monotonic() - start
        for record, future in zip(posts, futures, strict=True):
            record["late"], record["status"], record["seconds"], record["id"] = future.result()
    # The rate the schedule kept: from the first post sent to the last (each waits for nothing but its time).
    for record in posts:
        record["sent_span"] = sent
    return posts


def sampler(stop: threading.Event, cpu: Cpu, samples: list[dict[str, Any]], every: float, started: float) -> None:
    """Every `every` seconds: the queue in Redis, the runs and batches by status, the load, the CPU."""
    import redis
    from django.conf import settings
    from django.db import connection

    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    try:
        while True:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
                backends = {row[0] for row in cursor.fetchall()}
                cursor.execute("SELECT status, count(*) FROM qa_judgerun GROUP BY status")
                runs = dict(cursor.fetchall())
                cursor.execute("SELECT status, count(*) FROM qa_judgebatch GROUP BY status")
                batches = dict(cursor.fetchall())
            cpu.sample(backends)
            samples.append({
                "t": round(time.monotonic() - started, 1), "celery_queue": broker.llen("celery"),
                "runs_pending": runs.get("pending", 0), "runs_running": runs.get("running", 0),
                "runs_succeeded": runs.get("succeeded", 0), "runs_failed": runs.get("failed", 0),
                "batches_pending": batches.get("pending", 0), "load1": os.getloadavg()[0],
            })  # fmt: skip
            if stop.wait(every):
                return
    finally:
        connection.close()


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def judged_times(ids: list[int]) -> dict[str, Any]:
    """From the database: each posted call's run, and its seconds from post (the recording's
    created_at) to judged (its run's finished_at, when the scores were stored)."""
    from qa.models import JudgeRun, Score

    runs = list(JudgeRun.objects.filter(recording_id__in=ids).select_related("judge").defer("raw_output"))
    succeeded = [run for run in runs if run.status == JudgeRun.Status.SUCCEEDED]
    seconds = [
        (finished - created).total_seconds()
        for created, finished in JudgeRun.objects.filter(recording_id__in=ids, status=JudgeRun.Status.SUCCEEDED)
        .values_list("recording__created_at", "finished_at")
    ]
    costs = [cost for run in succeeded if (cost := run.cost) is not None]
    per_recording = Counter(Counter(run.recording_id for run in runs).values())
    return {
        "runs": dict(Counter(run.status for run in runs)),
        "judgments_per_call": {str(n): count for n, count in per_recording.items()},
        "scores": Score.objects.filter(run__in=succeeded).count(),
        "post_to_judged_s": {"p50": percentile(seconds, 0.5), "p95": percentile(seconds, 0.95),
                             "max": max(seconds, default=None)},  # fmt: skip
        "tokens_per_call": {
            "prompt": statistics.mean(run.prompt_tokens or 0 for run in succeeded) if succeeded else None,
            "cached": statistics.mean(run.cached_tokens or 0 for run in succeeded) if succeeded else None,
            "completion": statistics.mean(run.completion_tokens or 0 for run in succeeded) if succeeded else None,
        },
        "cost_per_call": float(sum(costs) / len(costs)) if costs else None,
        "last_judged_at": max((run.finished_at for run in succeeded), default=None),
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    logs = Path(tempfile.mkdtemp(prefix="veredicto-scale-"))
    if args.stack == "compose":
        from bench.scale.compose import compose_stack

        with compose_stack(args, SHAPE_ENV, logs) as stack:
            # The driver reads the stack's database and Redis through the ports published for it.
            os.environ["DATABASE_URL"], os.environ["CELERY_BROKER_URL"] = stack.database_url, stack.broker_url
            return measure_shape(args, logs, stack)
    from bench.database import database_create

    if args.fresh:
        database_fresh()
    database_create()
    return measure_shape(args, logs, None)


def measure_shape(args: argparse.Namespace, logs: Path, stack: Any) -> dict[str, Any]:
    """The load and the figures, on the processes started here (stack None) or on a compose stack."""
    os.environ.update(SHAPE_ENV)
    import django

    django.setup()
    from django.db import connection

    # The containers reach this machine's scripted judge as host.containers.internal.
    judge_host = "127.0.0.1" if stack is None else "host.containers.internal"
    judge_url = f"http://{judge_host}:{args.judge_port}/v1"
    key, transcripts = data_prepare(args, judge_url)
    connection.close()
    load_before = os.getloadavg()
    if stack is None:
        processes = processes_start(args, logs)
    else:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        processes = commands_start({"scripted judge": judge_command(args, stack.gateway)}, env, logs)
    samples: list[dict[str, Any]] = []
    cgroup_before: dict[str, float] = {}
    stop = threading.Event()
    try:
        ready_wait(args, processes)
        # Each worker loads the redactor's name model on its first call, each web worker its code on its
        # first request: once per process, not per call.
        tag = f"{args.mode}-{int(time.time())}-{random.randrange(10**6)}"
        warm = [record["id"] for record in load_generate(args, key, transcripts, f"{tag}-warm", args.warm_up)]
        from qa.models import JudgeRun

        deadline = time.monotonic() + args.drain_timeout
        while JudgeRun.objects.filter(recording_id__in=warm, status__in=["pending", "running"]).exists():
            if time.monotonic() > deadline:
                raise SystemExit("the warm-up calls were not judged in time")
            time.sleep(1)
        # A shape that cannot judge (a judge it cannot reach) is said now, not after the whole load.
        failed = JudgeRun.objects.filter(recording_id__in=warm, status="failed").values_list("error", flat=True)
        if failed.exists():
            raise SystemExit(f"warm-up calls failed: {list(failed[:3])}")
        sizes_before = table_sizes()
        cpu = Cpu(processes, stack.roles if stack else None)
        cgroup_before = stack.cgroup_seconds() if stack else {}
        started = time.monotonic()
        thread = threading.Thread(target=sampler, args=(stop, cpu, samples, args.sample_every, started), daemon=True)
        thread.start()
        posted_at = datetime.now(UTC)
        posts = load_generate(args, key, transcripts, tag, round(args.rate * args.minutes * 60))
        posting = time.monotonic() - started
        ids = [record["id"] for record in posts if record["id"] is not None]
        unfinished = JudgeRun.objects.filter(recording_id__in=ids, status__in=["pending", "running"])
        drain_deadline = time.monotonic() + args.drain_timeout
        while unfinished.exists() and time.monotonic() < drain_deadline:
            time.sleep(2)
        drained = time.monotonic() - started
        stop.set()
        thread.join()
        cpu.sample(set())  # backends are already counted up to the last sample
        cgroup_after = stack.cgroup_seconds() if stack else {}
        sizes_after = table_sizes()
        judged = judged_times(ids)
    finally:
        stop.set()
        processes_stop(processes)
    load_after = os.getloadavg()
    figures = results(args, posts, judged, samples, cpu.by_role(), sizes_before, sizes_after, {
        "posted_at": posted_at.isoformat(timespec="seconds"), "posting_s": round(posting, 1),
        "until_all_judged_s": round(drained, 1), "load_before": load_before, "load_after": load_after,
        "logs": str(logs)})  # fmt: skip
    figures["stack"] = args.stack
    if stack is not None:
        figures["versions"] = stack.versions
        # Each container's whole cgroup over the same span: a check on the per-process figures above,
        # which include what the samples saw (a process born and gone between two samples is not).
        used = {role: after - cgroup_before[role] for role, after in cgroup_after.items() if role in cgroup_before}
        succeeded = figures["judged"]["runs"].get("succeeded", 0)
        figures["cpu_s_cgroup"] = {role: round(seconds, 2) for role, seconds in sorted(used.items())}
        figures["cpu_ms_per_call_cgroup"] = {
            role: round(seconds * 1000 / succeeded, 2) if succeeded else None for role, seconds in sorted(used.items())
        }
    return figures


def results(
    args: argparse.Namespace, posts: list[dict[str, Any]], judged: dict[str, Any], samples: list[dict[str, Any]],
    cpu: dict[str, float], before: dict[str, int], after: dict[str, int], times: dict[str, Any],
) -> dict[str, Any]:
    calls = sum(1 for record in posts if record["id"] is not None)
    succeeded = judged["runs"].get("succeeded", 0)
    # Per call judged; with none judged (a drain that timed out) there is no per-call figure, only the totals.
    per_call = succeeded or float("nan")
    growth = {table: after.get(table, 0) - before.get(table, 0) for table in after}
    lates = [record["late"] for record in posts]
    latencies = [record["seconds"] for record in posts]
    during = [sample["load1"] for sample in samples]
    last = judged.pop("last_judged_at")
    return {
        "shape": {"mode": args.mode, "rate": args.rate, "minutes": args.minutes, "web_concurrency": args.web_concurrency,
                  "workers": args.workers, "worker_concurrency": args.worker_concurrency,
                  "judge_latency_s": args.latency if args.mode == "sync" else None,
                  "judge_jitter_s": args.jitter if args.mode == "sync" else None,
                  "collect_interval_s": args.collect_interval if args.mode == "batch" else None,
                  "poll_interval_s": args.poll_interval if args.mode == "batch" else None,
                  "polls_in_progress": args.polls_in_progress if args.mode == "batch" else None},  # fmt: skip
        "machine": {"nproc": os.cpu_count(), "load_before": times.pop("load_before"), "load_after": times.pop("load_after"),
                    "load_during_mean": statistics.mean(during) if during else None,
                    "load_during_max": max(during, default=None)},  # fmt: skip
        "times": times,
        "posts": {
            "count": len(posts), "statuses": {str(k): v for k, v in Counter(r["status"] for r in posts).items()},
            # Sent at this rate (count - 1 intervals over the span from the first post to the last)...
            "sent_rate": round((len(posts) - 1) / posts[-1]["sent_span"], 3) if len(posts) > 1 else None,
            # ...and answered: until the last post's answer.
            "answered_rate": round(len(posts) / times["posting_s"], 3) if times["posting_s"] else None,
            "late_p95_s": percentile(lates, 0.95), "late_max_s": max(lates, default=None),
            "seconds_p50": percentile(latencies, 0.5), "seconds_p95": percentile(latencies, 0.95),
        },  # fmt: skip
        "judged": {"calls": calls, "all_judged": succeeded == calls and calls == len(posts),
                   "rate_until_all_judged": round(succeeded / times["until_all_judged_s"], 3), **judged},
        "queue": {
            "celery_max": max((s["celery_queue"] for s in samples), default=0),
            "celery_mean": statistics.mean(s["celery_queue"] for s in samples) if samples else 0,
            "runs_pending_max": max((s["runs_pending"] for s in samples), default=0),
            "runs_running_max": max((s["runs_running"] for s in samples), default=0),
            "batches_pending_max": max((s["batches_pending"] for s in samples), default=0),
        },  # fmt: skip
        "cpu_ms_per_call": {role: round(used * 1000 / per_call, 2) if succeeded else None
                            for role, used in sorted(cpu.items())},  # fmt: skip
        "cpu_s_total": {role: round(used, 2) for role, used in sorted(cpu.items())},
        "db_bytes_per_call": {table: round(grown / per_call) if succeeded else None
                              for table, grown in sorted(growth.items()) if grown},  # fmt: skip
        "db_gb_per_million_calls": (
            round(growth.get("(whole database)", 0) / per_call * 1e6 / 1e9, 2) if succeeded else None),
        "samples": samples,
        "last_judged_after_first_post_s": (
            round((last - datetime.fromisoformat(times["posted_at"])).total_seconds(), 1) if last else None),  # fmt: skip
    }


def table_print(figures: dict[str, Any]) -> None:
    shape, posts, judged, queue = figures["shape"], figures["posts"], figures["judged"], figures["queue"]
    times, machine = figures["times"], figures["machine"]

    def seconds(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f} s"

    rows = [
        ("mode, rate, time", f"{shape['mode']}, {shape['rate']:g}/s for {shape['minutes']:g} min, "
                             f"{figures.get('stack', 'native')} stack"),
        ("posted (statuses)", f"{posts['count']} {posts['statuses']}, sent at {posts['sent_rate']}/s, "
                              f"answered at {posts['answered_rate']}/s"),
        ("post's answer p50 / p95", f"{seconds(posts['seconds_p50'])} / {seconds(posts['seconds_p95'])}"),
        ("generator late p95 / max", f"{seconds(posts['late_p95_s'])} / {seconds(posts['late_max_s'])}"),
        ("runs", f"{judged['runs']}, judgments per call {judged['judgments_per_call']}, {judged['scores']} scores"),
        ("all judged", str(judged["all_judged"])),
        ("post -> judged p50 / p95 / max", " / ".join(seconds(judged["post_to_judged_s"][k]) for k in ("p50", "p95", "max"))),
        ("until all judged", f"{times['until_all_judged_s']} s (posting {times['posting_s']} s), "
                             f"{judged['rate_until_all_judged']} calls/s"),
        ("Celery queue max / mean", f"{queue['celery_max']} / {queue['celery_mean']:.1f}"),
        ("runs pending max, running max", f"{queue['runs_pending_max']}, {queue['runs_running_max']}"),
        ("batches pending max", str(queue["batches_pending_max"])),
        *((f"CPU ms per call: {role}", "-" if ms is None else f"{ms:.2f}")
          for role, ms in figures["cpu_ms_per_call"].items()),
        ("CPU s in all", str(figures["cpu_s_total"])),
        *((f"CPU ms per call, whole cgroup: {role}", "-" if ms is None else f"{ms:.2f}")
          for role, ms in figures.get("cpu_ms_per_call_cgroup", {}).items()),
        ("database growth per call", f"{figures['db_bytes_per_call'].get('(whole database)') or 0:,} bytes"),
        ("database per million calls", f"{figures['db_gb_per_million_calls']} GB"),
        *((f"  {table}", f"{grown or 0:,} bytes a call") for table, grown in sorted(
            figures["db_bytes_per_call"].items(), key=lambda item: -(item[1] or 0))[1:8]),  # fmt: skip
        ("tokens per call", str({k: round(v) if v is not None else None for k, v in judged["tokens_per_call"].items()})),
        ("cost per call at the bench prices", "-" if judged["cost_per_call"] is None else f"{judged['cost_per_call']:.6f}"),
        ("load before / during mean, max / after", f"{machine['load_before'][0]:.2f} / "
         f"{machine['load_during_mean'] or 0:.2f}, {machine['load_during_max'] or 0:.2f} / {machine['load_after'][0]:.2f}"),
    ]  # fmt: skip
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # Stopped with SIGTERM, the shape's processes are stopped too (measure's `finally`).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    figures = measure(args)
    name = f"veredicto-scale-{args.mode}-{args.rate:g}{'' if args.stack == 'native' else '-' + args.stack}.json"
    path = args.json or Path(tempfile.gettempdir()) / name
    path.write_text(json.dumps(figures, indent=2, default=str))
    table_print(figures)
    print(f"figures: {path}")
    print(f"logs: {figures['times']['logs']}")


if __name__ == "__main__":
    main()
