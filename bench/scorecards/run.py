"""Time the scorecard page, the scorecard API and an agent's page on the generated data.

Run from the repository root after bench.scorecards.generate, with the same DATABASE_URL:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_scorecards_bench \\
        python -m bench.scorecards.run [--repeat 10]

Each URL is requested through Django's full stack in-process (middleware,
session, permissions, view, queries, template or serializer) with DEBUG off:
server time without network or browser. Prints median and max wall time, the
median time in SQL, and the number of queries (one number per URL: constant),
with the load average before and after, since other work changes wall time.
The "cpu s" column is the CPU seconds of the PostgreSQL backend plus this
process for one request, parallel workers off (read from /proc, so run it on
the database machine): other load hardly changes it.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import django

LIMIT_S = 1.0


@dataclass
class QueryMeter:
    count: int = 0
    seconds: float = 0.0

    def __call__(self, execute: Callable, sql: str, params, many: bool, context: dict):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += time.perf_counter() - started
            self.count += 1


def cpu_seconds(client, url: str) -> float:
    """CPU of one request: the backend's (serial plan) and this process's."""
    from django.db import connection

    from bench.reports.run import backend_cpu_seconds

    with connection.cursor() as cursor:
        cursor.execute("SET max_parallel_workers_per_gather = 0")
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    started = backend_cpu_seconds(pid) + time.process_time()
    client.get(url)
    spent = backend_cpu_seconds(pid) + time.process_time() - started
    with connection.cursor() as cursor:
        cursor.execute("RESET max_parallel_workers_per_gather")
    return spent


def measure(client, url: str, repeat: int) -> dict:
    from django.db import connection

    client.get(url)  # warm the caches, as a server that has been running would be
    timings, sql, counts = [], [], set()
    for _ in range(repeat):
        meter = QueryMeter()
        with connection.execute_wrapper(meter):
            started = time.perf_counter()
            response = client.get(url)
            timings.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
        sql.append(meter.seconds)
        counts.add(meter.count)
    return {
        "median": statistics.median(timings),
        "max": max(timings),
        "sql": statistics.median(sql),
        "cpu": cpu_seconds(client, url),
        "queries": counts,
    }


def run(*, repeat: int) -> bool:
    """Print the figures; True when every URL is under LIMIT_S (median) with one query count."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client

    from bench.reports.generate import BENCH_SLUG
    from bench.scorecards.generate import BENCH_USER
    from qa.models import Recording, Score

    client = Client(HTTP_HOST="localhost", HTTP_ACCEPT_LANGUAGE="es")
    client.force_login(User.objects.get(username=BENCH_USER))
    agent = Recording.objects.filter(rubric__slug=BENCH_SLUG).order_by("pk").values_list("agent_id", flat=True)[0]
    urls = {
        "scorecard page": f"/scorecards/?rubric={BENCH_SLUG}",
        "scorecard page, 8 weeks": f"/scorecards/?rubric={BENCH_SLUG}&since=2026-03-02&until=2026-04-26",
        "API, agents": f"/api/scorecards/?rubric={BENCH_SLUG}&group=agent",
        "API, teams": f"/api/scorecards/?rubric={BENCH_SLUG}&group=team",
        "agent page": f"/scorecards/agent/?rubric={BENCH_SLUG}&agent={agent}",
    }
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0]
    print(f"{os.cpu_count()} CPUs ({platform.machine()}), Python {platform.python_version()}, PostgreSQL {server}")
    print(f"{Recording.objects.count():,} recordings, {Score.objects.count():,} scores; {repeat} timed requests each")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"{'url':<26}{'median s':>10}{'max s':>8}{'SQL s':>8}{'cpu s':>8}{'queries':>9}")
    ok = True
    for name, url in urls.items():
        result = measure(client, url, repeat)
        queries = ",".join(map(str, sorted(result["queries"])))
        print(
            f"{name:<26}{result['median']:>10.3f}{result['max']:>8.3f}{result['sql']:>8.3f}{result['cpu']:>8.3f}"
            f"{queries:>9}"
        )
        ok &= result["median"] < LIMIT_S and len(result["queries"]) == 1
    print("load average after:  {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    django.setup()
    ok = run(repeat=args.repeat)
    print(f"{'OK' if ok else 'SLOW'}: median under {LIMIT_S} s with a constant number of queries")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
