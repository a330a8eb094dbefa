"""Time the deviation and evidence-quality reports on the benchmark database.

Run from the repository root after bench.reports.generate, on the machine
that runs PostgreSQL:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_bench \
        python -m bench.reports.run [--repeat 7] [--explain]

Measures what one API request computes: the selector (its SQL aggregation and
the figures derived from the counts) and the output serializer, with no HTTP
around it; unfiltered, with a team filter, and for eight weeks from a Wednesday
to a Tuesday (the five days and the two days at either end of the whole weeks
are what the rollups keep per day). First it brings the weekly and daily
rollups up to date (as Celery beat keeps them; the generator marks every judged
call) and prints how long that took. Two measurements:

wall     elapsed seconds, PostgreSQL free to use parallel workers. This is
         what a user waits for, and it grows with whatever else the machine
         is doing (the load average is printed before and after).
cpu      CPU seconds spent by the PostgreSQL backend plus this process, with
         parallel workers off so the backend does all the work. Other load
         hardly changes it: on an idle machine the wall time of the same
         serial plan is about this figure, and parallel plans beat it.

Prints the queries per report and min / median / max; --explain prints
PostgreSQL's plans.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import django


def backend_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a local process, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(compute: Callable[[], Any], repeat: int, backend_pid: int | None) -> tuple[int, list[float]]:
    """Queries per run and the seconds of each run: wall clock, or CPU when backend_pid is given."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def clock() -> float:
        if backend_pid is None:
            return time.perf_counter()
        return backend_cpu_seconds(backend_pid) + time.process_time()

    compute()  # warm the caches, as a server that has been running would be
    seconds = []
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as queries:
            started = clock()
            compute()
            seconds.append(clock() - started)
    return len(queries), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--explain", action="store_true")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    django.setup()
    from django.db import connection

    from datetime import date

    from bench.reports.generate import BENCH_SLUG
    from insights.scorecards.services import scorecard_weeks_refresh
    from qa.models import Score
    from insights.reports.api import DeviationReportSerializer, EvidenceReportSerializer
    from reviews.filters import ReportFilters
    from insights.reports.selectors import deviation_report, evidence_report
    from access.scope import EVERYTHING
    from rubrics.selectors import rubric_latest_published

    rubric = rubric_latest_published(slug=BENCH_SLUG, scope=EVERYTHING)
    if rubric is None:
        raise SystemExit("No benchmark data: run python -m bench.reports.generate first.")
    with connection.cursor() as cursor:
        cursor.execute("SELECT version(), pg_backend_pid()")
        server, backend_pid = cursor.fetchone()
    print(server.split(" on ")[0], f"· {os.cpu_count()} CPUs ({platform.machine()})",
          f"· {Score.objects.filter(criterion__rubric=rubric).count():,} scores in the rubric")  # fmt: skip
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    started = time.perf_counter()
    refreshed = scorecard_weeks_refresh(rubric=rubric)
    with connection.cursor() as cursor:
        # What autovacuum does within a minute of a bulk change: statistics of the rollups' new rows.
        cursor.execute(
            "ANALYZE reviews_criterionweek, reviews_criterionpairweek, insights_criterionday,"
            " insights_criterionpairday, insights_deviationweek, insights_deviationday"
        )
    print(f"rollups brought up to date from {refreshed:,} calls in {time.perf_counter() - started:.1f} s")

    reports = {
        "deviation": lambda filters: DeviationReportSerializer(deviation_report(filters)).data,
        "evidence": lambda filters: EvidenceReportSerializer(evidence_report(filters)).data,
    }
    cases = (
        ("all calls", ReportFilters(rubric=rubric)),
        ("team-3", ReportFilters(rubric=rubric, team="team-3")),
        ("Wed-Tue", ReportFilters(rubric=rubric, date_from=date(2026, 3, 4), date_to=date(2026, 4, 28))),
    )
    for mode in ("wall", "cpu"):
        if mode == "cpu":
            with connection.cursor() as cursor:
                cursor.execute("SET max_parallel_workers_per_gather = 0")
        for label, filters in cases:
            for name, report in reports.items():
                cpu_of = backend_pid if mode == "cpu" else None
                count, seconds = measure(functools.partial(report, filters), args.repeat, cpu_of)
                print(
                    f"{mode:<5}{name:>10} {label:<10} {count} queries  min {min(seconds):.3f} s  "
                    f"median {statistics.median(seconds):.3f} s  max {max(seconds):.3f} s"
                )
    print("load average after:  {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))

    if args.explain:
        from django.test.utils import CaptureQueriesContext

        with connection.cursor() as cursor:
            cursor.execute("RESET max_parallel_workers_per_gather")
        for name, report in reports.items():
            with CaptureQueriesContext(connection) as queries:
                report(ReportFilters(rubric=rubric))
            for query in queries.captured_queries:
                with connection.cursor() as cursor:
                    cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {query['sql']}")
                    print(f"\n--- {name}\n" + "\n".join(row[0] for row in cursor.fetchall()))


if __name__ == "__main__":
    main()
