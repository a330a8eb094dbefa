"""Time the rollups' refresh after a day's calls changed, on the benchmark database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_pages_bench \\
        python -m bench.reports.refresh [--repeat 3]

Marks the calls of one day (the first call's, as `bench.scorecards.run`'s "page, a day changed" does) as
the judging would, then times `scorecard_weeks_refresh`, which reads their agent-weeks again and replaces
every rollup's rows for them (the scorecards', the ceiling's and the deviation cube's), as Celery beat does
once a minute. Each time: wall seconds and the CPU seconds of the PostgreSQL backend plus this process, with
parallel workers off, and the statements it ran. The calls did not really change, so the rows written are
the rows deleted: run it on a database whose rollups are current.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from bench.reports.generate import BENCH_SLUG
    from bench.reports.run import backend_cpu_seconds
    from insights.scorecards.services import scorecard_weeks_refresh
    from qa.models import Recording
    from rubrics.models import Rubric

    rubric = Rubric.objects.get(slug=BENCH_SLUG)
    judged = Recording.objects.filter(rubric=rubric, current_run__isnull=False)
    day = judged.filter(occurred_at__date=judged.order_by("pk").values_list("occurred_at", flat=True)[0].date())
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend_pid,) = cursor.fetchone()
        cursor.execute("SET max_parallel_workers_per_gather = 0")
    if judged.filter(rollup_stale=True).exists():
        raise SystemExit("Calls are marked already: build the rollups first (python -m bench.reports.run).")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    walls, cpus = [], []
    for _ in range(args.repeat):
        marked = day.update(rollup_stale=True)
        with CaptureQueriesContext(connection) as queries:
            wall, cpu = time.perf_counter(), backend_cpu_seconds(backend_pid) + time.process_time()
            refreshed = scorecard_weeks_refresh(rubric=rubric)
            cpu = backend_cpu_seconds(backend_pid) + time.process_time() - cpu
            wall = time.perf_counter() - wall
        walls.append(wall)
        cpus.append(cpu)
        print(f"{marked} calls marked, {refreshed} read again: {wall:.3f} s wall, {cpu:.3f} CPU-s, "
              f"{len(queries)} statements")  # fmt: skip
    print(f"median: {statistics.median(walls):.3f} s wall, {statistics.median(cpus):.3f} CPU-s")
    print("load average after:  {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
