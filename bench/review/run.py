"""Time the review queue and review pages on the generated data, as the server sees them.

Run from the repository root after bench.review.generate, with the same DATABASE_URL:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_review_bench \\
        python -m bench.review.run [--repeat 30]

Each page is requested through Django's full stack in-process (middleware,
session, permissions, view, queries, template) with DEBUG off, so the time is
server time without network or browser. Prints median, p95 and max per page,
the time spent in SQL, and the number of queries (which must be the same for
every page of one kind).
"""

from __future__ import annotations

import argparse
import os
import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.test import Client  # noqa: E402

from bench.review.generate import BENCH_USER  # noqa: E402
from bench.timing import machine, timed  # noqa: E402
from qa.models import Recording, Score  # noqa: E402
from reviews.models import ReviewClaim  # noqa: E402
from access.scope import EVERYTHING  # noqa: E402
from reviews.selectors import QueueFilters, QueuePosition, queue_recordings  # noqa: E402

LIMIT_MS = 300


def measure(client: Client, url: str, repeat: int) -> dict:
    def get() -> None:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)

    return timed(get, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()

    user = User.objects.get(username=BENCH_USER)
    ReviewClaim.objects.filter(user=user).delete()  # claims left by an earlier run would change the queue
    client = Client(HTTP_HOST="localhost", HTTP_ACCEPT_LANGUAGE="es")
    client.force_login(user)

    queue = queue_recordings(filters=QueueFilters(), scope=EVERYTHING)
    first = queue.first()
    with_history = queue.filter(reviews__isnull=False).first()
    blind = queue.filter(review_reasons=["random_audit"]).first()
    deep_page = max(queue.count() // 50 // 2, 2)
    # Pages are cut by position: page N follows the last call of page N - 1, as its "Next" link says.
    deep_after = QueuePosition.of(queue[(deep_page - 1) * 50 - 1])
    day = first.occurred_at.date().isoformat()
    pages = {
        "queue": "/review/",
        f"queue page {deep_page}": f"/review/?after={deep_after}",
        "queue team+reason": "/review/?team=billing&reason=unverified_evidence",
        "queue one day": f"/review/?date_from={day}&date_to={day}",
        "queue agent": "/review/?agent=agent-17",
        "review lowest": f"/review/{first.pk}/",
        "review with history": f"/review/{with_history.pk}/",
        "review blind audit": f"/review/{blind.pk}/",
    }

    print(machine())
    print(
        f"{Recording.objects.count():,} recordings, {Score.objects.count():,} scores, "
        f"{queue.count():,} in the review queue; {args.repeat} timed requests per page\n"
    )
    print(f"{'page':<24}{'median ms':>10}{'p95 ms':>9}{'max ms':>9}{'SQL ms':>9}{'queries':>9}")
    slow = []
    for name, url in pages.items():
        result = measure(client, url, args.repeat)
        queries = ",".join(map(str, result["queries"]))
        print(
            f"{name:<24}{result['median']:>10.1f}{result['p95']:>9.1f}{result['max']:>9.1f}"
            f"{result['sql']:>9.1f}{queries:>9}"
        )
        if result["p95"] > LIMIT_MS or len(result["queries"]) > 1:
            slow.append(name)
    ReviewClaim.objects.filter(user=user).delete()
    print(f"\n{'FAIL: ' + ', '.join(slow) if slow else 'OK'}: p95 under {LIMIT_MS} ms with a constant query count")
    raise SystemExit(1 if slow else 0)


if __name__ == "__main__":
    main()
