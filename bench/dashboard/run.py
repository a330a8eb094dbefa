"""Time the dashboard on the scorecards benchmark's calls, at about a million scores.

Run from the repository root after bench.scorecards.generate, with the same DATABASE_URL:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_dashboard_bench \\
        python -m bench.scorecards.generate --recordings 76000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_dashboard_bench \\
        python -m bench.dashboard.run [--repeat 5]

First it makes two of the rubric's criteria critical (fail at 2), as a collections rubric would be: done
with SQL on the generated, never-read version (a published version is frozen for every code path of the
product). Then it brings the scorecards' weekly rollup up to date (as Celery beat keeps it), and times the
dashboard page through Django's full stack, in-process, with DEBUG off, for the data's last twelve weeks (a
first visit's period) and for the whole 26 weeks; then each of its parts alone, so the page's time can be
read as their sum: the quality score's weeks (the scorecards' rollup), the reports' counts per criterion
(their weekly rollup: `insights.reports.rollup`), and from those counts the auto-fail rates, the
unverified-quote rate and the ceiling, the review backlog (the queue) and the open disputes. Then the
evidence report's own data, which the dashboard's unverified-quote tile links to.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

import django

from bench.timing import timed

LIMIT_S = 0.5


def run(*, repeat: int) -> bool:
    from django.contrib.auth.models import User
    from django.db import connection
    from django.db.models import Max, Min
    from django.test import Client
    from django.utils import timezone

    from bench.reports.generate import BENCH_SLUG
    from bench.scorecards.generate import BENCH_USER
    from qa.models import Recording, Score
    from insights.dashboard import selectors as parts
    from reviews.filters import ReportFilters
    from insights.reports.selectors import evidence_report, period_tallies
    from insights.scorecards.services import scorecard_weeks_refresh
    from rubrics.models import Criterion, Rubric

    rubric = Rubric.objects.get(slug=BENCH_SLUG)
    keys = list(rubric.criteria.order_by("order").values_list("key", flat=True)[:2])
    if Criterion.objects.filter(rubric=rubric, key__in=keys, critical=False).update(critical=True, fail_at=2):
        # The rollups count the critical criteria's failures: a rollup built before counts none.
        Recording.objects.filter(rubric=rubric, current_run__isnull=False).update(rollup_stale=True)
    started = time.perf_counter()
    refreshed = scorecard_weeks_refresh(rubric=rubric)  # both weekly rollups
    rollup = time.perf_counter() - started
    with connection.cursor() as cursor:
        # What autovacuum does within a minute of a bulk change: without statistics of the rollups' new
        # rows PostgreSQL expects one row and sorts 200,000 on disk to group them (0.4 s for 0.08 s).
        cursor.execute(
            "ANALYZE reviews_scorecardweek, reviews_criterionweek, reviews_criterionpairweek, insights_scorecardday,"
            " insights_criterionday, insights_criterionpairday"
        )

    client = Client(HTTP_HOST="localhost", HTTP_ACCEPT_LANGUAGE="es")
    client.force_login(User.objects.get(username=BENCH_USER))
    span = Recording.objects.filter(rubric=rubric).aggregate(first=Min("occurred_at"), last=Max("occurred_at"))
    first, last = timezone.localtime(span["first"]).date(), timezone.localtime(span["last"]).date()
    whole = f"&date_from={first.isoformat()}&date_to={last.isoformat()}"
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        server = cursor.fetchone()[0]
    print(f"{os.cpu_count()} CPUs ({platform.machine()}), Python {platform.python_version()}, PostgreSQL {server}")
    print(f"{Recording.objects.count():,} recordings, {Score.objects.count():,} scores; {repeat} timed requests each")
    print(f"critical criteria: {', '.join(keys)}; rollup brought up to date from {refreshed:,} calls in {rollup:.2f} s")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"{'what':<38}{'median s':>10}{'max s':>8}")
    ok = True

    def page(url: str) -> Callable[[], object]:
        def get() -> object:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            return response

        return get

    # A first visit's period: the last twelve weeks from a Monday (insights.dashboard.views._with_period),
    # here the data's; the same from a Wednesday (widened to its Monday).
    monday = last - timedelta(days=last.weekday(), weeks=11)
    for name, url in (
        ("dashboard page, last 12 weeks", f"/dashboard/?rubric={BENCH_SLUG}&date_from={monday}"),
        ("dashboard page, all 26 weeks", f"/dashboard/?rubric={BENCH_SLUG}{whole}"),
        ("dashboard page, 12 weeks from a Wed", f"/dashboard/?rubric={BENCH_SLUG}&date_from={monday + timedelta(days=2)}"),
    ):
        result = timed(page(url), repeat)
        median, worst = result["median"] / 1000, result["max"] / 1000
        print(f"{name:<38}{median:>10.3f}{worst:>8.3f}")
        ok &= median < LIMIT_S
    filters = ReportFilters(rubric=rubric, date_from=first, date_to=last)
    for name, call in (
        ("  quality score by week", lambda: parts.quality_weeks(filters)),
        ("  the reports' counts (rollup)", lambda: period_tallies(filters)),
        ("  auto-fail rates", lambda: parts.auto_fail_rates(filters, period_tallies(filters))),
        ("  unverified-quote rate", lambda: parts.dashboard_evidence(period_tallies(filters))),
        ("  review backlog", lambda: parts.backlog(filters)),
        ("  furthest criteria (ceiling)", lambda: parts.furthest_criteria(filters, period_tallies(filters))),
        ("  open disputes", lambda: parts.open_disputes(filters)),
        # What the page no longer asks (it widens dates to whole weeks) and a report still may: a period's
        # first days read from the day rollups (from the calls until 2026-12-04).
        ("all tiles, from a Wednesday", lambda: parts.dashboard(replace(filters, date_from=monday + timedelta(days=2)))),
        ("evidence report (its page's data)", lambda: evidence_report(filters)),
    ):
        result = timed(call, repeat)
        print(f"{name:<38}{result['median'] / 1000:>10.3f}{result['max'] / 1000:>8.3f}")
    print("load average after:  {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    django.setup()
    ok = run(repeat=args.repeat)
    print(f"{'OK' if ok else 'SLOW'}: the page's median under {LIMIT_S} s")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
