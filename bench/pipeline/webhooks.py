"""What a webhook subscription costs the judging: CPU per judgment in one process (as in_process.py
measures it), in the same run, in cycles of three blocks, one block per mode (the order turning each
cycle), so that every cycle compares the modes over the same minute of a shared machine; each
difference is the mean of the cycles' own, with its 95% interval. The modes:

- absent: no consumer registered with the outbox (the judging as it was before webhooks);
- off: webhooks installed, no active subscription (each process reads the subscribed events once a
  second, QA_WEBHOOK_SUBSCRIPTIONS_TTL);
- on: an active subscription to recording.judged and recording.routed (each judgment also writes its
  events, which Celery beat's drain takes later: the judging publishes nothing).

The fan-out and delivery happen in other tasks, not in the judging; their CPU per event delivered to a
loopback receiver (another process) is measured after, in this process. See README.md beside this file.

    .venv/bin/python bench/pipeline/webhooks.py --recordings 2400 --block 8
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.pipeline.run import ROOT, recordings_prepare  # noqa: E402  (sets the benchmark's environment)

MODES = ("absent", "off", "on")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=900, help="judgments measured, shared by the three modes")
    parser.add_argument("--block", type=int, default=8, help="judgments in a row in one mode")
    parser.add_argument("--deliveries", type=int, default=100, help="events fanned out and delivered after")
    parser.add_argument("--emits", type=int, default=3000, help="emits timed alone, per mode, after the judging")
    parser.add_argument("--port", type=int, default=8093, help="the fake LLM's")
    parser.add_argument("--receiver-port", type=int, default=8094)
    args = parser.parse_args()
    os.environ.update(
        OPENAI_BASE_URL=f"http://127.0.0.1:{args.port}/v1",
        OPENAI_API_KEY="bench",
        QA_JUDGE_MODEL="fake-judge",
        QA_WEBHOOK_ALLOWED_HOSTS="127.0.0.1:*",
    )
    from bench.database import database_create

    database_create()
    import django

    django.setup()
    from config.celery import app
    from outbox import services as outbox
    from outbox.models import Event
    from qa import execution
    from webhooks.models import Delivery, Subscription
    from webhooks.selectors import events_wanted_forget
    from webhooks.services import event_fan_out, subscription_create

    children = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.support.fake_openai", "--port", str(args.port), "--latency", "0"],
            cwd=ROOT, stdout=subprocess.DEVNULL,
        ),
        subprocess.Popen(
            [sys.executable, "-m", "tests.support.webhook_receiver", "--port", str(args.receiver_port)],
            cwd=ROOT, stdout=subprocess.DEVNULL,
        ),
    ]  # fmt: skip
    consumer = dict(outbox._consumers)
    try:
        warmup_ids, run_ids = recordings_prepare(args.recordings, warmup=30)
        Event.objects.all().delete()
        Subscription.objects.all().delete()
        subscription, _secret = subscription_create(
            url=f"http://127.0.0.1:{args.receiver_port}/hook", events=["recording.judged", "recording.routed"]
        )
        time.sleep(1)  # the children's start

        def mode_set(mode: str) -> None:
            outbox._consumers.clear()
            if mode != "absent":
                outbox._consumers.update(consumer)
            status = Subscription.Status.ACTIVE if mode == "on" else Subscription.Status.PAUSED
            Subscription.objects.filter(pk=subscription.pk).update(status=status)
            events_wanted_forget()  # read at the block's first judgment, then kept as in production

        for index, run_id in enumerate(warmup_ids):  # imports, the connection, the question's cache, each mode
            mode_set(MODES[index % len(MODES)])
            execution.judge_run_execute(run_id=run_id)
        # Cycles of three blocks, one per mode, the modes' order turning each cycle: each cycle compares
        # the modes over the same minute of a shared machine (a block of 8 judges each sample call once).
        cycles: list[dict[str, float]] = []
        outcomes: Counter[str] = Counter()
        for cycle, start in enumerate(range(0, len(run_ids) - 3 * args.block + 1, 3 * args.block)):
            order = MODES[cycle % 3 :] + MODES[: cycle % 3]
            spent: dict[str, float] = {}
            for index, mode in enumerate(order):
                mode_set(mode)
                chunk = run_ids[start + index * args.block : start + (index + 1) * args.block]
                started = time.process_time()
                for run_id in chunk:
                    outcomes[execution.judge_run_execute(run_id=run_id).outcome.value] += 1
                spent[mode] = (time.process_time() - started) * 1000 / len(chunk)
            cycles.append(spent)
        published = app.control.purge()  # what the judging published (no worker takes it here): nothing
        events = Event.objects.count()
        emit_cycles = emits_time(mode_set, run_ids, args.emits, args.block)

        # The other side: fan-out and delivery, in-process (eager), to the receiver.
        app.conf.task_always_eager = True
        mode_set("on")
        pending = list(Event.objects.filter(dispatched_at__isnull=True).values_list("pk", flat=True)[: args.deliveries])
        started = time.process_time()
        for event_id in pending:
            event_fan_out(event_id=event_id)
        delivery_cpu = time.process_time() - started
        delivered = Delivery.objects.filter(status=Delivery.Status.DELIVERED).count()
    finally:
        for child in children:
            child.terminate()
        app.conf.task_always_eager = False
        app.control.purge()  # anything the judging published, for no worker
    print(f"judgments: {dict(outcomes)}; events written with the subscription on: {events}")
    judged = len(cycles) * args.block
    for mode in MODES:
        print(f"CPU per judgment, {mode:<6} {statistics.fmean(c[mode] for c in cycles):6.2f} ms  ({judged} judgments)")
    for other in ("off", "absent"):
        print(f"subscription on - {other}:{' ' * (7 - len(other))}{difference([c['on'] - c[other] for c in cycles])}")
    print(f"off - absent:             {difference([c['off'] - c['absent'] for c in cycles])}")
    print(f"the emit alone, on - off:  {difference([c['on'] - c['off'] for c in emit_cycles])}"
          f" ({len(emit_cycles) * args.block} emits per mode, each in its own committed transaction)")  # fmt: skip
    print(f"messages the judging published: {published} for {events} events")
    print(f"fan-out and delivery: {delivery_cpu * 1000 / max(len(pending), 1):.2f} ms CPU per event "
          f"({delivered} of {len(pending)} delivered), in the worker, not the judging")  # fmt: skip


def emits_time(mode_set, run_ids: list[int], emits: int, block: int) -> list[dict[str, float]]:  # noqa: ANN001
    """What the judging's emit itself costs, without the judgment around it (whose own variation is what
    blurs the difference above): `recording_judged_emit` with its transaction's commit, as the judging
    calls it (half the calls routed: two events), in blocks per mode, the modes' order turning. Each
    transaction first reads a row in both modes, as the judging's transaction has begun before its emit,
    so that the transaction's own BEGIN and COMMIT are not counted as the emit's."""
    from django.db import connection, transaction

    from outbox.services import recording_judged_emit
    from qa.models import JudgeRun

    recordings = list(JudgeRun.objects.filter(pk__in=run_ids).values_list("recording_id", "recording__workspace_id"))
    cycles: list[dict[str, float]] = []
    for cycle in range(emits // block):
        spent: dict[str, float] = {}
        for mode in ("off", "on") if cycle % 2 else ("on", "off"):
            mode_set(mode)
            started = time.process_time()
            for index in range(block):
                recording_id, workspace_id = recordings[(cycle * block + index) % len(recordings)]
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
                    recording_judged_emit(recording_id=recording_id, routed=index % 2 == 0, workspace_id=workspace_id)
            spent[mode] = (time.process_time() - started) * 1000 / block
        cycles.append(spent)
    return cycles


def difference(per_cycle: list[float]) -> str:
    """The mean difference per judgment over the cycles, with its 95% interval (normal: 30 cycles or more)."""
    mean = statistics.fmean(per_cycle)
    if len(per_cycle) < 2:
        return f"{mean:+.2f} ms per judgment (1 cycle)"
    half = 1.96 * statistics.stdev(per_cycle) / len(per_cycle) ** 0.5
    return f"{mean:+.2f} ms per judgment (95% interval {mean - half:+.2f} to {mean + half:+.2f}, {len(per_cycle)} cycles)"


if __name__ == "__main__":
    main()
