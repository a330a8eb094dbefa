"""Where a slot's time between two LLM calls goes: timestamps from inside the workers.

`run.py --trace` starts the workers with this module as their Celery app (`-A bench.pipeline.trace`):
the project's app, plus a line per event appended to the file named by BENCH_PIPELINE_TRACE
("pid thread event task run time"). Events: the message handed to the pool (`received`, on the
worker's event-loop thread), the task's start and end (`prerun`, `postrun`), the end of each step of
`qa.execution.job_execute` (reading the job, the question, the quota, the claim, the LLM call's start
and end, the quota's settlement, the store) and the acknowledgement (`acked`, on the event-loop thread).
`cycle_report` turns the file into the mean time of each phase of a slot's cycle.
"""

from __future__ import annotations

import functools
import os
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from celery.signals import task_postrun, task_prerun, task_received, worker_ready

from config.celery import app

__all__ = ["app", "cycle_report"]

# The steps of qa.execution.job_execute, in the order a successful job passes them.
STEPS = [
    ("qa.execution", "RUNS.load"),
    ("qa.execution", "asking_prepare"),
    ("qa.execution", "quota_acquire"),
    ("qa.execution", "job_claim"),
    ("qa.judging", "llm_complete"),  # its start is traced too: the steps are timed by their end
    ("qa.execution", "quota_settle"),
    ("qa.execution", "judgment_store"),
]
PHASES = [
    ("let in", "received", "the next message fetched and handed to the pool (BRPOP)"),
    ("received", "prerun", "a pool thread starts the task"),
    ("prerun", "RUNS.load", "reading the job"),
    ("RUNS.load", "asking_prepare", "the question"),
    ("asking_prepare", "quota_acquire", "the shared quota (Redis)"),
    ("quota_acquire", "job_claim", "the claim"),
    ("job_claim", "llm_complete start", "the messages"),
    ("llm_complete start", "llm_complete", "the LLM call (the fake server's latency included)"),
    ("llm_complete", "quota_settle", "parsing, verifying; the quota's settlement"),
    ("quota_settle", "judgment_store", "storing (success, scores, routing)"),
    ("judgment_store", "postrun", "the task's end"),
    ("postrun", "acked", "the acknowledgement (acks_late, on the event-loop thread)"),
]

_file: int | None = None
_local = threading.local()


def _trace(event: str, task: str = "-", run: object = "-") -> None:
    if _file is not None:
        line = f"{os.getpid()} {threading.get_ident()} {event.replace(' ', '_')} {task} {run} {time.time():.6f}\n"
        os.write(_file, line.encode())


def _traced(event: str, function: Callable[..., Any], start: bool = False) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if start:
            _trace(f"{event} start")
        try:
            return function(*args, **kwargs)
        finally:
            _trace(event)

    return wrapper


@worker_ready.connect
def _install(**_: Any) -> None:
    """Once Django is set up in the worker: open the file and wrap the steps."""
    global _file
    if not (path := os.environ.get("BENCH_PIPELINE_TRACE")):
        return
    _file = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    import importlib

    from kombu.message import Message

    for module_name, name in STEPS:
        module = importlib.import_module(module_name)
        owner, attribute = (module.RUNS, "load") if name == "RUNS.load" else (module, name)
        # An instance attribute shadows the method for this object only (the production kind).
        setattr(owner, attribute, _traced(name, getattr(owner, attribute), start=name == "llm_complete"))
    Message.ack = _traced("acked", Message.ack)


@task_received.connect
def _received(request: Any = None, **_: Any) -> None:
    _trace("received", request.id)


@task_prerun.connect
def _prerun(task_id: str = "", args: tuple = (), **_: Any) -> None:
    _trace("prerun", task_id, args[0] if args else "-")


@task_postrun.connect
def _postrun(task_id: str = "", **_: Any) -> None:
    _trace("postrun", task_id)


def cycle_report(path: Path, run_ids: list[int], slots_per_worker: int, slots: int) -> None:
    """Mean time per phase of a slot's cycle over the runs given (the timed ones, not the warm-up)."""
    wanted = set(run_ids)
    threads: dict[tuple[str, str], list[tuple[float, str, str, str]]] = defaultdict(list)
    received: dict[str, float] = {}
    acked: dict[str, list[float]] = defaultdict(list)
    for line in path.read_text().splitlines():
        pid, thread, event, task, run, at = line.split()
        event = event.replace("_start", " start")
        if event == "received":
            received[task] = float(at)
        elif event == "acked":
            acked[pid].append(float(at))
        else:
            threads[(pid, thread)].append((float(at), event, task, run))
    tasks: list[dict[str, Any]] = []
    for (pid, _), events in threads.items():
        current: dict[str, Any] | None = None
        for at, event, task, run in sorted(events):
            if event == "prerun":
                current = {"pid": pid, "run": int(run), "prerun": at, "received": received.get(task)}
                tasks.append(current)
            elif current is not None:
                current[event] = at
    # Per worker: its slots are refilled in order, so its k-th task to end is acknowledged k-th, and
    # that acknowledgement frees the slot of the task it received (slots + k)-th.
    for pid in {task["pid"] for task in tasks}:
        mine = [task for task in tasks if task["received"] is not None and task["pid"] == pid]
        by_end = sorted(mine, key=lambda task: task["postrun"])
        by_receipt = sorted(mine, key=lambda task: task["received"])
        for k, (task, ack) in enumerate(zip(by_end, sorted(acked[pid]))):
            task["acked"] = ack
            if slots_per_worker + k < len(by_receipt) and task["run"] in wanted:
                by_receipt[slots_per_worker + k]["let in"] = ack
    timed = [task for task in tasks if task["run"] in wanted]
    print(f"\nper slot cycle, mean over {len(timed)} timed runs (from timestamps inside the workers):")
    total = 0.0
    for start, end, what in PHASES:
        values = [task[end] - task[start] for task in timed if start in task and end in task]
        if values:
            mean = statistics.mean(values)
            total += mean
            print(f"  {what:<58} mean {1000 * mean:8.1f} ms  median {1000 * statistics.median(values):8.1f} ms")
    print(f"  {'sum of the means':<58} {1000 * total:8.1f} ms")
    # What a run pays once: every slot's first call starts late by the time the slots take to get going
    # (all their first tasks at once), and the run ends with the slot that drifted latest.
    first = min(task["received"] for task in timed if task["received"] is not None)
    calls = sorted(task["llm_complete start"] for task in timed if "llm_complete start" in task)
    if len(calls) >= slots:
        print(f"  the run's start: all {slots} slots calling the LLM {1000 * (calls[slots - 1] - first):.0f} ms after the first message")
