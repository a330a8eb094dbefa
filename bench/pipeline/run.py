"""Throughput of the judge pipeline through real Celery workers against a fake
LLM with a fixed latency. See README.md beside this file.

    .venv/bin/python bench/pipeline/run.py --recordings 2000 --concurrency 50 --latency 0.3
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from celery import Celery

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_bench")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/3")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use-0123456789")
# Workers keep their database connections between tasks, as production workers should.
os.environ.setdefault("CONN_MAX_AGE", "600")

RUBRIC = "soporte-cobranzas"
SOURCE = "bench"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50, help="concurrent LLM calls (worker slots)")
    parser.add_argument("--workers", type=int, default=10, help="worker processes sharing the slots")
    parser.add_argument("--latency", type=float, default=0.3, help="the fake LLM's seconds per call")
    parser.add_argument("--pool", choices=["threads", "prefork", "solo"], default="threads")
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument(
        "--trace", action="store_true", help="also print where a slot's cycle goes (timestamps in the workers: trace.py)"
    )
    args = parser.parse_args()
    if args.pool == "solo" and args.workers != args.concurrency:
        parser.error("a solo worker has one slot: give as many --workers as --concurrency")
    if args.trace and args.pool == "prefork":
        parser.error("--trace wraps the steps in the worker's own process: use the threads or solo pool")
    return args


def recordings_prepare(count: int, warmup: int) -> tuple[list[int], list[int]]:
    """Pending runs for `warmup` + `count` copies of the sample calls of the sample rubric."""
    from django.core.management import call_command
    from django.utils import timezone

    from qa.models import JudgeRun, Recording
    from access.scope import EVERYTHING
    from rubrics.selectors import rubric_latest_published

    call_command("migrate", verbosity=0)
    call_command("load_samples", stdout=open(os.devnull, "w"))
    Recording.objects.filter(source=SOURCE).delete()
    rubric = rubric_latest_published(slug=RUBRIC, scope=EVERYTHING)
    # The sample calls with a transcript: those that came as audio wait for a transcription worker.
    samples = list(Recording.objects.filter(rubric=rubric).exclude(source=SOURCE).exclude(transcript=""))
    recordings = Recording.objects.bulk_create(
        Recording(
            source=SOURCE,
            external_id=f"bench-{index}",
            transcript=samples[index % len(samples)].transcript,
            content_hash=f"{index:064x}",
            rubric=rubric,
            workspace_id=rubric.workspace_id,  # bulk_create calls no save()
            status=Recording.Status.QUEUED,
            occurred_at=timezone.now(),
        )
        for index in range(warmup + count)
    )
    runs = JudgeRun.objects.bulk_create(JudgeRun(recording=recording, rubric=rubric) for recording in recordings)
    ids = [run.pk for run in runs]
    return ids[:warmup], ids[warmup:]


def start(args: argparse.Namespace, trace: Path | None = None) -> list[subprocess.Popen]:
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{args.port}/v1",
        "OPENAI_API_KEY": "bench",
        "QA_JUDGE_MODEL": "fake-judge",
        # The shared quota stays on (one Redis call per judgment), set above the bench's rate.
        "QA_LLM_REQUESTS_PER_MINUTE": "1000000",
    }
    if trace:
        env["BENCH_PIPELINE_TRACE"] = str(trace)
    fake = [sys.executable, "-m", "tests.support.fake_openai", "--port", str(args.port), "--latency", str(args.latency)]
    processes = [subprocess.Popen(fake, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, start_new_session=True)]
    slots = args.concurrency // args.workers
    celery_app = "bench.pipeline.trace" if trace else "config"  # the project's app, with timestamps or not
    for index in range(args.workers):
        worker = [
            sys.executable, "-m", "celery", "-A", celery_app, "worker", f"--pool={args.pool}", f"--concurrency={slots}",
            f"--hostname=bench{index}@%h", "--loglevel=WARNING", "--without-gossip", "--without-mingle",
            "--without-heartbeat",
        ]
        processes.append(subprocess.Popen(worker, cwd=ROOT, env=env, start_new_session=True))
    return processes


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def cpu_seconds(processes: list[subprocess.Popen]) -> Counter[str]:
    """CPU time used so far by each part, from /proc: the workers and the fake
    LLM this benchmark started (by process group), the PostgreSQL backends
    connected to its database, the Redis server (shared with whatever else
    uses it) and this driver."""
    from django.conf import settings
    from django.db import connection

    ticks = os.sysconf("SC_CLK_TCK")
    # start() starts the fake LLM first, then the workers, each in a session (process group) of its own.
    roles = {process.pid: "celery workers" for process in processes} | {processes[0].pid: "fake LLM"}
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [settings.DATABASES["default"]["NAME"]])
        backends = {row[0] for row in cursor.fetchall()}
    parts: Counter[str] = Counter()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        pid, group = int(proc.name), int(fields[2])
        if pid == os.getpid():
            part = "bench driver"
        elif group in roles:
            part = roles[group]
        elif pid in backends:
            part = "postgresql"
        elif "redis-server" in command:
            part = "redis (shared)"
        else:
            continue  # the rest of the machine
        parts[part] += (int(fields[11]) + int(fields[12])) / ticks
    return parts


def judge(
    app: Celery, run_ids: list[int], timeout: float, processes: list[subprocess.Popen]
) -> tuple[float, float, Counter[str]]:
    """Queue the runs, then let the workers take them; return the seconds until the last run was
    finished (its `finished_at`), the seconds until this driver saw it, and the CPU each part used."""
    from django.db.models import Max

    from qa.models import JudgeRun
    from qa.tasks import judge_run

    # Publishing is the ingest's cost, not the pipeline's: queue everything first.
    app.control.cancel_consumer("celery", reply=True)
    for run_id in run_ids:
        judge_run.apply_async(args=[run_id])
    cpu_before, started, started_at = cpu_seconds(processes), time.monotonic(), time.time()
    app.control.add_consumer("celery", reply=True)
    # Polled cheaply and seldom: the driver shares the 2 cores with the workers (an IN list of every run
    # id, four times a second, cost 5 ms of CPU per recording here and in PostgreSQL), and the end is read
    # from the runs' finished_at below, not from when the polling noticed it.
    unfinished = JudgeRun.objects.filter(pk__range=(min(run_ids), max(run_ids)), status__in=["pending", "running"])
    while unfinished.exists():
        if time.monotonic() - started > timeout:
            raise SystemExit("The workers did not finish in time.")
        time.sleep(1)
    polled = time.monotonic() - started
    cpu = cpu_seconds(processes)
    cpu.subtract(cpu_before)
    # The end is when the last run was stored, not when the 1 s polling noticed (on average 0.5 s
    # later): the workers' clock is this machine's, like `started_at`.
    last = JudgeRun.objects.filter(pk__in=run_ids).aggregate(last=Max("finished_at"))["last"]
    return last.timestamp() - started_at, polled, cpu


def report(args: argparse.Namespace, run_ids: list[int], seconds: float, polled: float, cpu: Counter[str]) -> None:
    from qa.models import JudgeRun

    runs = list(JudgeRun.objects.filter(pk__in=run_ids))
    succeeded = [run for run in runs if run.status == JudgeRun.Status.SUCCEEDED]
    in_task = sorted(
        (run.finished_at - run.started_at).total_seconds() * 1000 - run.llm_duration_ms for run in succeeded
    )
    throughput = len(runs) / seconds
    ideal = args.concurrency / args.latency
    print(f"recordings: {len(runs)}  succeeded: {len(succeeded)}  failed: {len(runs) - len(succeeded)}")
    print(f"concurrency: {args.concurrency} slots ({args.pool}) in {args.workers} worker processes  fake LLM latency: {args.latency * 1000:.0f} ms")
    print(f"time: {seconds:.2f} s  throughput: {throughput:.1f} recordings/s  ideal: {ideal:.1f}/s  ({throughput / ideal:.1%} of ideal)")
    print(f"  (until the last run was stored; the driver, polling every second, saw it at {polled:.2f} s)")
    # A pipeline fed continuously never pays the run's start (every slot's first claim at once) nor its
    # tail (the slots finishing one by one): the rate between the 10th and the 90th percentile of the
    # runs' ends is what it sustains.
    ends = sorted(run.finished_at for run in succeeded)
    first, last = ends[len(ends) // 10], ends[len(ends) * 9 // 10]
    steady = (len(ends) * 9 // 10 - len(ends) // 10) / (last - first).total_seconds()
    print(f"  steady state (runs 10%-90% finished): {steady:.2f} recordings/s = {steady / ideal:.1%} of ideal")
    slot_overhead = args.concurrency * seconds / len(runs) * 1000 - args.latency * 1000
    print(f"pipeline overhead per recording: {slot_overhead:.1f} ms per slot (all but the LLM wait, queueing included)")
    print(
        f"  inside the task (claim, prompt, client, validation, verification, storage, routing): "
        f"median {statistics.median(in_task):.1f} ms, p95 {in_task[int(len(in_task) * 0.95)]:.1f} ms"
    )
    llm = sorted(run.llm_duration_ms for run in succeeded)
    print(
        f"  the LLM wait as the worker saw it: median {statistics.median(llm):.0f} ms, p95 {llm[int(len(llm) * 0.95)]} ms"
        f" (the fake server sleeps {args.latency * 1000:.0f} ms)"
    )
    print(f"CPU per recording (2 cores = {2000 * seconds / len(runs):.1f} ms available):")
    for part, used in cpu.most_common():
        # Processes that ended during the run are not counted.
        print(f"  {part:<15} {max(used, 0) * 1000 / len(runs):6.2f} ms")
    judging = sum(max(cpu[part], 0) for part in ("celery workers", "postgresql", "redis (shared)"))
    print(f"judging, machine-wide (workers + PostgreSQL + Redis): {judging * 1000 / len(runs):.2f} ms per recording")
    print(
        f"tokens per recording ({RUBRIC}, estimated at 4 characters a token): "
        f"prompt {statistics.mean(run.prompt_tokens for run in succeeded):.0f}, "
        f"completion {statistics.mean(run.completion_tokens for run in succeeded):.0f}"
    )


def main() -> None:
    from bench.database import database_create

    args = parse_args()
    database_create()
    import django

    django.setup()
    from config.celery import app

    warmup_ids, run_ids = recordings_prepare(args.recordings, warmup=args.concurrency * 2)
    app.control.purge()
    with tempfile.TemporaryDirectory() as directory:
        trace = Path(directory) / "trace.txt" if args.trace else None
        processes = start(args, trace)
        try:
            judge(app, warmup_ids, timeout=120, processes=processes)  # imports, connections, first prompts
            seconds, polled, cpu = judge(app, run_ids, timeout=args.recordings / 10 + 120, processes=processes)
        finally:
            stop(processes)
        report(args, run_ids, seconds, polled, cpu)
        if trace:
            from bench.pipeline.trace import cycle_report

            cycle_report(trace, run_ids, args.concurrency // args.workers, args.concurrency)


if __name__ == "__main__":
    main()
