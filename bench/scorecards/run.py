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

The pages read the weekly rollup: as it is while Celery beat keeps refreshing
it (insights.scorecards.freshness), else brought up to date first with the
calls marked as changed. So the run first times building it from every call
(as after the migration or a bulk load), then the page after a day's calls
changed (a day of judging) with beat's last pass just recorded and with no
beat, and after one review, each marked again before each request; last, the
page while every call is marked (before the beat has built the rollup), which
reads the calls instead.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
import django

from bench.timing import QueryMeter

LIMIT_S = 1.0


def cpu_seconds(client, url: str, before: Callable[[], None] | None = None) -> float:
    """CPU of one request: the backend's (serial plan) and this process's."""
    from django.db import connection

    from bench.reports.run import backend_cpu_seconds

    if before:
        before()
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


def measure(client, url: str, repeat: int, before: Callable[[], None] | None = None) -> dict:
    from django.db import connection

    client.get(url)  # warm the caches, as a server that has been running would be
    timings, sql, counts = [], [], set()
    for _ in range(repeat):
        if before:
            before()
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
        "cpu": cpu_seconds(client, url, before),
        "queries": counts,
    }


def rollup_build() -> tuple[int, float]:
    """Build the rollups from every judged call, as after the migration; the calls read and the seconds."""
    from bench.reports.generate import BENCH_SLUG
    from qa.models import Recording
    from insights.models import ScorecardDay, ScorecardWeek
    from insights.scorecards.services import scorecard_weeks_refresh
    from rubrics.models import Rubric

    rubric = Rubric.objects.get(slug=BENCH_SLUG)
    ScorecardWeek.objects.filter(rubric=rubric).delete()
    ScorecardDay.objects.filter(rubric=rubric).delete()
    Recording.objects.filter(rubric=rubric, current_run__isnull=False).update(rollup_stale=True)
    started = time.perf_counter()
    calls = scorecard_weeks_refresh(rubric=rubric)
    return calls, time.perf_counter() - started


def marking(recordings, *, beat: bool = False) -> Callable[[], None]:
    """Before each request: mark `recordings` as the judging or a review would, with Celery beat's last pass
    just recorded (`beat`: the page reads the rollups as of it) or no beat (the page refreshes them first)."""
    from django.utils import timezone

    from insights.models import RollupClock

    def before() -> None:
        recordings.update(rollup_stale=True)
        RollupClock.objects.all().delete()
        if beat:
            RollupClock.objects.create(pk=RollupClock.ONE, started_at=timezone.now())

    return before


def run(*, repeat: int, reuse_rollup: bool = False) -> bool:
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
    page = f"/scorecards/?rubric={BENCH_SLUG}"
    judged = Recording.objects.filter(rubric__slug=BENCH_SLUG, current_run__isnull=False)
    day = judged.filter(occurred_at__date=judged.order_by("pk").values_list("occurred_at", flat=True)[0].date())
    urls = {
        "scorecard page": (page, None),
        "scorecard page, 8 weeks": (f"{page}&since=2026-03-02&until=2026-04-26", None),
        "page, 8 weeks from a Wed.": (f"{page}&since=2026-03-04&until=2026-04-29", None),
        "API, agents": (f"/api/scorecards/?rubric={BENCH_SLUG}&group=agent", None),
        "API, teams": (f"/api/scorecards/?rubric={BENCH_SLUG}&group=team", None),
        "agent page": (f"/scorecards/agent/?rubric={BENCH_SLUG}&agent={agent}", None),
        f"page, a day changed, beat ({day.count()})": (page, marking(day, beat=True)),
        f"page, a day changed ({day.count()})": (page, marking(day)),
        "page, one review": (page, marking(judged.filter(pk=day.values("pk")[:1]))),
    }
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0]
    print(f"{os.cpu_count()} CPUs ({platform.machine()}), Python {platform.python_version()}, PostgreSQL {server}")
    print(f"{Recording.objects.count():,} recordings, {Score.objects.count():,} scores; {repeat} timed requests each")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    if reuse_rollup:
        print("rollup reused as the database has it (not rebuilt)")
    else:
        calls, seconds = rollup_build()
        print(f"rollup built from {calls:,} calls in {seconds:.2f} s")
    print(f"{'url':<33}{'median s':>10}{'max s':>8}{'SQL s':>8}{'cpu s':>8}{'queries':>9}")
    ok = True
    for name, (url, before) in urls.items():
        result = measure(client, url, repeat, before)
        queries = ",".join(map(str, sorted(result["queries"])))
        print(
            f"{name:<33}{result['median']:>10.3f}{result['max']:>8.3f}{result['sql']:>8.3f}{result['cpu']:>8.3f}"
            f"{queries:>9}"
        )
        ok &= result["median"] < LIMIT_S and len(result["queries"]) == 1
    if not reuse_rollup:
        # Last, since it leaves every call marked: the page before the beat has built the rollup.
        result = measure(client, page, max(1, repeat // 2), marking(judged))
        print(f"scorecard page while the rollup is built (reads the calls): {result['median']:.3f} s median")
    print("load average after:  {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument(
        "--reuse-rollup",
        action="store_true",
        help="time the pages on the rollups the database has (built by an earlier run: ten minutes at a million"
        " scores on two cores), leaving out the build and the page read while every call is marked",
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    django.setup()
    ok = run(repeat=args.repeat, reuse_rollup=args.reuse_rollup)
    print(f"{'OK' if ok else 'SLOW'}: median under {LIMIT_S} s with a constant number of queries")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
