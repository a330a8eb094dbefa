"""Shared by the benchmarks that time requests in-process: the timing loop, its query meter, and the
machine line their figures are printed under."""

from __future__ import annotations

import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import connection


@dataclass
class QueryMeter:
    """Counts the queries of a request and the time spent in them."""

    count: int = 0
    seconds: float = 0.0
    shapes: set[str] = field(default_factory=set)

    def __call__(self, execute: Callable, sql: str, params, many: bool, context: dict):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += time.perf_counter() - started
            self.count += 1


def timed(run: Callable[[], object], repeat: int) -> dict:
    """`run` 3 times to warm PostgreSQL's and Django's caches, then `repeat` times timed: median, p95 and
    max in ms, the median time in SQL (ms), and the query counts seen (one, for a constant count)."""
    for _ in range(3):
        run()
    timings, sql_times, counts = [], [], set()
    for _ in range(repeat):
        meter = QueryMeter()
        with connection.execute_wrapper(meter):
            started = time.perf_counter()
            run()
            timings.append((time.perf_counter() - started) * 1000)
        sql_times.append(meter.seconds * 1000)
        counts.add(meter.count)
    timings.sort()
    return {
        "median": statistics.median(timings),
        "p95": timings[int(0.95 * (len(timings) - 1))],
        "max": timings[-1],
        "sql": statistics.median(sql_times),
        "queries": sorted(counts),
    }


def machine() -> str:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "unknown CPU"
    )
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0]
    return f"{cpu}, nproc {nproc}, Python {platform.python_version()}, PostgreSQL {server}"
