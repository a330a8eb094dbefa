"""Fill a PostgreSQL database with judged, audited and reviewed calls for the scorecard benchmark.

Run from the repository root, on an empty, migrated database of its own:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_scorecards_bench \\
        python -m bench.scorecards.generate [--recordings 100000] [--criteria 12] [--seed 0.42]

The calls are made by the reports benchmark's statements (`bench/reports/generate.py`):
8 teams, 200 agents, 26 weeks, 20% random audit (plus 2% audit and low
confidence), 20% flagged, a tenth re-judged, supervisors approving, rejecting
and adjusting; the values stored with each call and review (`current_values`,
`human_values`) filled by their services. Then `VACUUM ANALYZE`, as autovacuum
would have by then.
"""

from __future__ import annotations

import argparse
import os
import time

import django

BENCH_USER = "bench-supervisor"


def generate(*, recordings: int, criteria: int, seed: float) -> dict[str, int]:
    """Insert the rows; return the counts of what was made."""
    from django.contrib.auth.models import Group, User
    from django.db import connection, transaction

    from access.models import DEFAULT_WORKSPACE, Role, Workspace
    from access.services import member_add
    from bench.reports.generate import COUNTS, STATEMENTS, build_rubric
    from qa.models import Recording
    from qa.services import recordings_current_values_store
    from reviews.models import Review
    from reviews.services import reviews_human_values_store

    with transaction.atomic():
        rubric = build_rubric(criteria)
        params = {"rubric": rubric.pk, "recordings": recordings, "rejudged": recordings // 10, "criteria": criteria}
        with connection.cursor() as cursor:
            cursor.execute("SELECT setseed(%s)", [seed])
            for statement in STATEMENTS:
                cursor.execute(statement, params)
        # The statements write rows as SQL: the values the judging and review_create store with each
        # call and review are filled by the same services the migrations use.
        recordings_current_values_store(recordings=Recording.objects.filter(rubric=rubric))
        reviews_human_values_store(reviews=Review.objects.filter(recording__rubric=rubric))
        # Both mark the call for the scorecards' weekly rollup: the first scorecard read builds it.
        Recording.objects.filter(rubric=rubric, current_run__isnull=False).update(rollup_stale=True)
        user = User.objects.create_user(BENCH_USER)
        user.groups.add(Group.objects.get(name="Supervisors"))
        member_add(user=user, workspace=Workspace.objects.get(slug=DEFAULT_WORKSPACE), role=Role.SUPERVISOR)
    counts = {}
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        for name, query in COUNTS.items():
            cursor.execute(query, params)
            counts[name] = cursor.fetchone()[0]
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recordings", type=int, default=100_000)
    parser.add_argument("--criteria", type=int, default=12)
    parser.add_argument("--seed", type=float, default=0.42)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    from bench.database import database_create

    database_create()
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from bench.reports.generate import BENCH_SLUG
    from rubrics.models import Rubric

    if connection.vendor != "postgresql":
        raise SystemExit("The benchmark runs on PostgreSQL: set DATABASE_URL.")
    call_command("migrate", verbosity=0)
    if Rubric.objects.filter(slug=BENCH_SLUG).exists():
        raise SystemExit(f"Rubric '{BENCH_SLUG}' exists already: drop and re-create the database first.")
    started = time.perf_counter()
    for name, count in generate(recordings=args.recordings, criteria=args.criteria, seed=args.seed).items():
        print(f"{name:>18}: {count:>9,}")
    print(f"generated in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
