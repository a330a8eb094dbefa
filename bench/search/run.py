"""Time the calls search on the generated data: the search itself and the whole /calls/ page.

Run from the repository root after bench.search.generate, with the same DATABASE_URL:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/veredicto_search_bench \\
        python -m bench.search.run [--repeat 30]

For each query: "search" is what the list asks the database for a page of results (the count, the
page's 50 rows, their assignments and latest reviews, their highlighted passages:
calls.selectors.call_search and call_page), timed in-process; "page" is the /calls/ page
through Django's whole stack (middleware, session, permissions, form, those queries, template) with
DEBUG off, as the bench-lead user in Spanish. Prints median, p95 and max, the matches, and the
number of queries (the same for every request of one query). Exits 1 when a search's p95 is over
200 ms.
"""

from __future__ import annotations

import argparse
import os
from urllib.parse import urlencode

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from bench.search.generate import BENCH_USER  # noqa: E402
from bench.timing import machine, timed  # noqa: E402
from qa.models import Recording  # noqa: E402
from calls.selectors import CallFilters, call_page, call_search, calls_visible  # noqa: E402

LIMIT_MS = 200


def queries() -> dict[str, dict]:
    month_ago = timezone.localdate() - timezone.timedelta(days=30)
    return {
        "es 1 word": {"q": "factura"},
        "es 2 words": {"q": "cobro duplicado"},
        "es phrase": {"q": '"fibra óptica"'},
        "es 3 words, team": {"q": "router firmware módem", "team": "tech"},
        "es word, in review": {"q": "reintegro", "status": "in_review"},
        "en 1 word": {"q": "refund"},
        "en 2 words": {"q": "cancel subscription"},
        "en 3 words, 30 days": {"q": "unlimited mobile data", "date_from": month_ago.isoformat()},
        "en word, c1 = 2": {"q": "invoice", "criterion": "c1", "value": "2"},
        "ticket code": {"q": "T1234"},
        "es or en": {"q": "factura or invoice"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    user = User.objects.get(username=BENCH_USER)
    client = Client(HTTP_HOST="localhost", HTTP_ACCEPT_LANGUAGE="es")
    client.force_login(user)

    print(machine())
    print(f"{Recording.objects.count():,} transcripts; {args.repeat} timed requests per query\n")
    print(f"{'query':<22}{'found':>8}  {'search median':>13}{'p95':>7}{'max':>7}{'queries':>8}   {'page median':>11}{'p95':>7}")
    slow = []
    for name, parameters in queries().items():
        filters = CallFilters(words=parameters.get("q", ""), **{k: v for k, v in parameters.items() if k != "q"})
        if "date_from" in parameters:
            filters = CallFilters(words=parameters["q"], date_from=timezone.datetime.fromisoformat(parameters["date_from"]).date())

        def search(filters: CallFilters = filters):
            found = call_search(recordings=calls_visible(user), filters=filters, user=user)
            return call_page(recordings=found, filters=filters, number=1, size=50)

        matches = call_search(recordings=calls_visible(user), filters=filters, user=user).count()  # all, untimed
        url = f"/calls/?{urlencode(parameters)}"

        def page(url: str = url):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)

        alone, whole = timed(search, args.repeat), timed(page, args.repeat)
        print(
            f"{name:<22}{matches:>8,}  {alone['median']:>13.1f}{alone['p95']:>7.1f}{alone['max']:>7.1f}"
            f"{','.join(map(str, alone['queries'])):>8}   {whole['median']:>11.1f}{whole['p95']:>7.1f}"
        )
        if alone["p95"] > LIMIT_MS:
            slow.append(name)
    print(f"\n{'FAIL: ' + ', '.join(slow) if slow else 'OK'}: every search's p95 under {LIMIT_MS} ms")
    raise SystemExit(1 if slow else 0)


if __name__ == "__main__":
    main()
