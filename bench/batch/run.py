"""Batch path benchmark: N calls judged through qa.batching against the local Files and Batches server
(tests/support/fake_batches.py, real HTTP, the real `openai` client), through a killed worker, an
expired batch and failed lines, then counted: none lost, none doubled. See README.md beside this file.

    nice -n 10 .venv/bin/python bench/batch/run.py [--recordings 10000] [--batch-size 2500]
        [--expire-after 1000] [--fail-every 97] [--port 0]

Steps, in this process (beat's and the workers' work, called directly; the broker is Kombu's
in-memory one, so nothing is published anywhere):
1. The Spanish sample rubric (11 criteria) and N copies of the 8 Spanish sample calls, their runs pending
   for a judge in batch mode. Each recording gets an empty redaction row, so redaction (about 150 ms of
   CPU a call, measured in bench/redaction) is not what is measured here.
2. Collect: the runs claimed into batches of --batch-size.
3. The first batch's first step runs in a child process, which is killed (SIGKILL) once the server has
   created the provider's batch and before the child hears so; its lease is then run out.
4. Until nothing is pending: the batches' sweep, collect, and one step of every pending batch. The first
   provider batch expires after answering --expire-after lines; every --fail-every-th line the server
   answers is an HTTP 500 (transient: batched again).
5. The counts: runs succeeded and failed, judgments per recording, scores per run, the lines the
   provider answered against the runs, and the time and CPU of each phase.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "local_judge"))


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recordings", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=2_500)
    parser.add_argument("--expire-after", type=int, default=1_000, help="lines the first batch answers before expiring")
    parser.add_argument("--fail-every", type=int, default=97, help="every Nth line answered is an HTTP 500 (0: none)")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_bench_batch")
    os.environ.update(
        CELERY_BROKER_URL="memory://", OPENAI_API_KEY="bench", QA_BATCH_MAX_REQUESTS=str(args.batch_size),
        QA_BATCH_POLL_INTERVAL="0",
    )  # fmt: skip
    from bench.database import database_create

    database_create()
    import django

    django.setup()
    from django.core.management import call_command
    from django.db.models import Count
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from run import sample_calls, sample_rubric  # bench/local_judge/run.py

    from qa.batching import batches_collect, batches_sweep, judge_batch_execute
    from qa.models import Judge, JudgeBatch, JudgeRun, Recording, RecordingRedaction, Score
    from tests.support.fake_batches import FakeBatches
    from tests.support.fake_openai import error, estimated_reply

    answered = Counter()

    def reply(request: dict):
        answered["lines"] += 1
        if args.fail_every and answered["lines"] % args.fail_every == 0:
            answered["500"] += 1
            return error(500, "The server had an error while processing your request.")
        return estimated_reply(request)

    server = FakeBatches(default=reply, keep_requests=False).start(port=args.port)
    print(f"load before: {os.getloadavg()}")
    try:
        started = time.monotonic()
        rubric = sample_rubric(11)
        calls = [transcript for _, transcript in sample_calls(8)]
        Recording.objects.filter(source="bench-batch").delete()
        JudgeBatch.objects.filter(judge__name="bench-batch").delete()
        Judge.objects.filter(name="bench-batch").delete()
        judge = Judge.objects.create(
            name="bench-batch", base_url=server.base_url, model="fake-judge", api_key_variable="OPENAI_API_KEY",
            evidence_mode="quote", mode="batch", prompt_price=2, cached_prompt_price=1, completion_price=8,
            batch_discount=50,
        )  # fmt: skip
        recordings = Recording.objects.bulk_create(
            Recording(source="bench-batch", external_id=f"batch-{index}", transcript=calls[index % len(calls)],
                      content_hash=f"b{index:063x}", rubric=rubric, workspace_id=rubric.workspace_id,
                      status=Recording.Status.QUEUED, occurred_at=timezone.now())
            for index in range(args.recordings)
        )  # fmt: skip
        RecordingRedaction.objects.bulk_create(
            RecordingRedaction(recording=recording, language="es", llm_spans=[]) for recording in recordings
        )
        JudgeRun.objects.bulk_create(JudgeRun(recording=recording, rubric=rubric, judge=judge) for recording in recordings)
        print(f"prepared {args.recordings} pending runs: {time.monotonic() - started:.1f} s")

        started, spent = time.monotonic(), cpu()
        batch_ids = batches_collect()
        print(f"collect: {len(batch_ids)} batches in {time.monotonic() - started:.1f} s, {cpu() - spent:.1f} s CPU")

        # A worker killed between the provider creating the batch and saving its id.
        server.hold_create = hold = threading.Event()
        server.expire_next(args.expire_after)
        started = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-c", "import django; django.setup(); from qa.batching import judge_batch_execute; "
             f"judge_batch_execute(batch_id={batch_ids[0]})"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True,
        )  # fmt: skip
        if not server.create_received.wait(timeout=1800):
            raise SystemExit("the child never created its batch")
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        hold.set()
        server.hold_create = None
        killed = JudgeBatch.objects.get(pk=batch_ids[0])
        print(f"killed the worker of batch {killed.pk} after the provider created {server.created[0]} "
              f"({time.monotonic() - started:.1f} s): saved input file {killed.input_file_id!r}, "
              f"provider id {killed.provider_batch_id!r}")
        JudgeBatch.objects.filter(pk=killed.pk).update(leased_until=timezone.now() - timedelta(seconds=1))

        started, spent, rounds, steps = time.monotonic(), cpu(), 0, Counter()
        while JudgeRun.objects.filter(judge=judge, status__in=["pending", "running"]).exists():
            rounds += 1
            if rounds > 50:
                raise SystemExit("not done after 50 rounds")
            batches_sweep()
            batches_collect()
            for pk in JudgeBatch.objects.filter(judge=judge, status="pending").values_list("pk", flat=True):
                steps[judge_batch_execute(batch_id=pk).outcome.value] += 1
        judging, judging_cpu = time.monotonic() - started, cpu() - spent
    finally:
        server.stop()

    runs = JudgeRun.objects.filter(judge=judge)
    statuses = Counter(runs.values_list("status", flat=True))
    per_recording = Counter(
        Recording.objects.filter(source="bench-batch").annotate(n=Count("runs")).values_list("n", flat=True)
    )
    per_run = Counter(Score.objects.filter(run__judge=judge).values("run").annotate(n=Count("pk")).values_list("n", flat=True))
    judged = Recording.objects.filter(source="bench-batch", current_run__isnull=False).count()
    batches = JudgeBatch.objects.filter(judge=judge)
    attempts = Counter(runs.values_list("attempts", flat=True))
    cost = sum((run.cost or 0) for run in runs.select_related("judge").only("prompt_tokens", "completion_tokens",
                                                                             "cached_tokens", "batched", "judge"))
    print(f"judging: {rounds} rounds, steps {dict(steps)}, {judging:.1f} s, {judging_cpu:.1f} s CPU "
          f"({judging_cpu * 1000 / args.recordings:.2f} ms CPU a call)")
    print(f"provider: {len(server.created)} batches created, {answered['lines']} lines answered, "
          f"{answered['500']} of them HTTP 500; batches here: "
          f"{dict(Counter(batches.values_list('status', 'provider_status')))}")
    print(f"runs: {dict(statuses)}; attempts {dict(sorted(attempts.items()))}")
    print(f"judgments per recording: {dict(per_recording)}; scores per run: {dict(per_run)}; current run set: {judged}")
    print(f"cost at 2/1/8 per million, 50% batch discount: {cost:.4f} ({cost / args.recordings:.8f} a call)")
    lost = args.recordings - statuses.get("succeeded", 0) - statuses.get("failed", 0)
    doubled = sum(count for n, count in per_recording.items() if n > 1)
    print(f"lost: {lost}, doubled: {doubled}")
    print(f"load after: {os.getloadavg()}")
    if lost or doubled or set(per_run) != {11} or statuses.get("failed"):
        raise SystemExit("FAILED: lost, doubled or incomplete judgments")


if __name__ == "__main__":
    main()
