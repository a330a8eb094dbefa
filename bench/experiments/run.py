"""Experiments benchmark: the judging CPU of an experiment's item against a
production run's, on the same recordings (12 criteria, fake LLM answering at
once), and the time to compute the comparison of a large experiment.
See README.md beside this file.

    .venv/bin/python bench/experiments/run.py --recordings 1000 --comparison 10000
    .venv/bin/python bench/experiments/run.py --recordings 0 --comparison 10000   # the comparison only
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CRITERIA = 12
SLUG = "bench-experiments"
TRANSCRIPT = (
    "AGENT: Good morning, this is Harbor Bank, my name is Ana.\n"
    "CUSTOMER: I lost my debit card yesterday.\n"
    "AGENT: I am sorry. I will block it now and send a new one within five days.\n"
    "CUSTOMER: Thank you.\n"
)


def rubric_prepare():
    """A published rubric of 12 criteria on 1–5 and a draft v2 of it (the candidate)."""
    from rubrics.models import Criterion, Rubric
    from rubrics.services import rubric_new_version, rubric_publish

    rubric = Rubric.objects.filter(slug=SLUG, version=1).first()
    if rubric is None:
        rubric = Rubric.objects.create(slug=SLUG, name="Bench", language="en", audit_rate=0.0)
        Criterion.objects.bulk_create(
            Criterion(rubric=rubric, key=f"c{index:02}", title=f"Criterion {index}", order=index,
                      description=f"The agent does observable thing number {index}.")
            for index in range(1, CRITERIA + 1)
        )
        rubric = rubric_publish(rubric=rubric)
    draft = Rubric.objects.filter(slug=SLUG, status=Rubric.Status.DRAFT).first() or rubric_new_version(rubric=rubric)
    return rubric, draft


def recordings_clear() -> None:
    """Remove the benchmark's recordings (reviews first: they protect the runs they judged)."""
    from qa.models import Recording
    from reviews.models import Review

    Review.objects.filter(recording__rubric__slug=SLUG).delete()
    Recording.objects.filter(rubric__slug=SLUG).delete()


def recordings_reviewed(rubric, count: int, prefix: str, *, judged: bool) -> list[int]:
    """`count` recordings with a succeeded production run (values 1–5) and an approving review;
    with judged=False, pending runs instead, to be judged by the benchmark."""
    from django.utils import timezone

    from qa.models import JudgeRun, Recording, Score
    from reviews.models import Review

    recordings = Recording.objects.bulk_create(
        Recording(source=prefix, external_id=f"{prefix}-{index}", transcript=TRANSCRIPT, content_hash=f"{index:064x}",
                  rubric=rubric, workspace_id=rubric.workspace_id, occurred_at=timezone.now(), status=Recording.Status.REVIEWED if judged else "queued")
        for index in range(count)
    )
    status = JudgeRun.Status.SUCCEEDED if judged else JudgeRun.Status.PENDING
    runs = JudgeRun.objects.bulk_create(JudgeRun(recording=r, rubric=rubric, status=status) for r in recordings)
    if judged:
        criteria = list(rubric.criteria.all())
        Score.objects.bulk_create(
            Score(run=run, run_created_at=run.created_at, criterion=criterion, value=1 + (run.pk + criterion.order) % 5, confidence=0.9,
                  model_confidence=0.9, evidence="AGENT: I am sorry.", evidence_verified=True,
                  verification_status="verified", verifier_version="bench")
            for run in runs for criterion in criteria
        )
        Review.objects.bulk_create(Review(recording_id=run.recording_id, run=run, reviewer="bench", decision="approve")
                                   for run in runs)
    return [run.pk for run in runs]


def cpu_per_recording(count: int) -> dict[str, float]:
    """CPU (ms) per recording: production judging `count` runs, then experiments
    re-judging the same recordings, with the published version and with the draft, in this process."""
    from qa import execution
    from qa.models import JudgeRun, Recording
    from reviews.models import Review

    rubric, draft = rubric_prepare()
    recordings_clear()
    warmup = recordings_reviewed(rubric, 20, "bench-warmup", judged=False)
    run_ids = recordings_reviewed(rubric, count, "bench-cpu", judged=False)
    for run_id in warmup:  # imports, the connection, the question's cache
        execution.judge_run_execute(run_id=run_id)
    started = time.process_time()
    for run_id in run_ids:
        execution.judge_run_execute(run_id=run_id)
    production = (time.process_time() - started) * 1000 / count
    runs = JudgeRun.objects.filter(pk__in=run_ids)
    Review.objects.bulk_create(Review(recording_id=run.recording_id, run=run, reviewer="bench", decision="approve")
                               for run in runs)
    Review.objects.filter(recording__source="bench-warmup").delete()
    Recording.objects.filter(source="bench-warmup").delete()
    return {
        "production": production,
        "experiment, published version": _experiment_cpu(rubric.version),
        "experiment, draft version": _experiment_cpu(draft.version),
    }


def _experiment_cpu(version: int) -> float:
    from experiments.models import Item
    from experiments.services import ArmSpec, experiment_create, item_execute

    experiment = experiment_create(rubric_slug=SLUG, candidates=[ArmSpec(rubric_version=version)], publish=False)
    item_ids = list(Item.objects.filter(arm__experiment=experiment).values_list("pk", flat=True))
    item_execute(item_id=item_ids[0])  # warm, as production was
    started = time.process_time()
    for item_id in item_ids[1:]:
        item_execute(item_id=item_id)
    return (time.process_time() - started) * 1000 / (len(item_ids) - 1)


def backend_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a local process, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def comparison_experiment(count: int):
    """An experiment of `count` recordings x 12 criteria: a stored baseline and one finished candidate arm."""
    from qa.models import JudgeRun
    from experiments.models import Arm, Experiment, Item, ItemScore

    rubric, draft = rubric_prepare()
    recordings_clear()
    run_ids = recordings_reviewed(rubric, count, "bench-comparison", judged=True)

    recording_ids = list(JudgeRun.objects.filter(pk__in=run_ids).values_list("recording_id", flat=True))
    experiment = Experiment.objects.create(rubric_slug=SLUG, recording_ids=recording_ids, status="finished")
    Arm.objects.create(experiment=experiment, order=0, label="production", rubric=rubric, stored=True)
    arm = Arm.objects.create(experiment=experiment, order=1, label="v2", rubric=draft)
    items = Item.objects.bulk_create(Item(arm=arm, recording_id=rid, status="succeeded", llm_duration_ms=300,
                                          prompt_tokens=900, completion_tokens=300) for rid in recording_ids)
    criteria = list(draft.criteria.all())
    ItemScore.objects.bulk_create(
        (ItemScore(item=item, criterion=criterion, value=1 + (item.pk * 7 + criterion.order) % 5, confidence=0.9,
                   model_confidence=0.9, evidence="AGENT: I am sorry.", evidence_verified=True,
                   verification_status="verified", verifier_version="bench")
         for item in items for criterion in criteria),
        batch_size=5000,
    )
    return experiment


def comparison_timings(count: int, repeat: int) -> dict[str, float]:
    """experiment_comparison of `count` recordings, after one warm-up call: the median over `repeat`
    calls of its wall-clock seconds and of its CPU seconds (this process plus its PostgreSQL backend,
    without parallel workers so the backend's CPU is all of the database's), and its queries."""
    import statistics

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from experiments.selectors import experiment_comparison

    experiment = comparison_experiment(count)
    with connection.cursor() as cursor:
        cursor.execute("SET max_parallel_workers_per_gather = 0")
        cursor.execute("ANALYZE")  # the rows were just bulk-inserted: plan with their statistics
        cursor.execute("SELECT pg_backend_pid()")
        backend_pid = cursor.fetchone()[0]
    comparison = experiment_comparison(experiment)  # warm: imports, the connection, the caches
    assert comparison.deltas and comparison.arms[1].criteria[0].n == count
    walls, cpus = [], []
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as queries:
            cpu, wall = backend_cpu_seconds(backend_pid) + time.process_time(), time.perf_counter()
            experiment_comparison(experiment)
            walls.append(time.perf_counter() - wall)
            cpus.append(backend_cpu_seconds(backend_pid) + time.process_time() - cpu)
    return {"wall": statistics.median(walls), "cpu": statistics.median(cpus), "queries": len(queries)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=1000)
    parser.add_argument("--comparison", type=int, default=10000)
    parser.add_argument("--port", type=int, default=8093)
    parser.add_argument("--repeat", type=int, default=3, help="timed calls of the comparison (median reported)")
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_bench_experiments")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use-0123456789")
    os.environ.update(
        OPENAI_BASE_URL=f"http://127.0.0.1:{args.port}/v1", OPENAI_API_KEY="bench", QA_JUDGE_MODEL="fake-judge"
    )
    os.environ.pop("CELERY_BROKER_URL", None)  # in-process: no broker, no shared quota
    from bench.database import database_create

    database_create()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    if args.recordings:
        fake = subprocess.Popen(
            [sys.executable, "-m", "tests.support.fake_openai", "--port", str(args.port), "--latency", "0"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        try:
            time.sleep(1)  # the fake server's start
            report_cpu(cpu_per_recording(args.recordings), args)
        finally:
            fake.terminate()
    if args.comparison:
        report_comparison(comparison_timings(args.comparison, args.repeat), args)
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


def report_cpu(cpu: dict[str, float], args: argparse.Namespace) -> None:
    print(f"CPU per recording ({args.recordings} recordings x {CRITERIA} criteria, in-process):")
    for name, milliseconds in cpu.items():
        print(f"  {name:<32} {milliseconds:6.2f} ms")


def report_comparison(timings: dict[str, float], args: argparse.Namespace) -> None:
    print(f"Comparison of {args.comparison} recordings x {CRITERIA} criteria, 2 arms: "
          f"median of {args.repeat} calls, {timings['queries']} queries")  # fmt: skip
    print(f"  wall                             {timings['wall']:6.3f} s")
    print(f"  CPU, this process + PostgreSQL   {timings['cpu']:6.3f} s")


if __name__ == "__main__":
    main()
