"""The queue's pages are cut by position (keyset): every call once, in queue order, however deep."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from access.scope import EVERYTHING
from qa.models import Recording
from reviews import views
from reviews.selectors import QueueFilters, QueuePosition, queue_page
from tests.review.conftest import client_for, queued

pytestmark = pytest.mark.django_db

CONFIDENCES = [0.5, 0.2, 0.2, None, 0.9, 0.2, None, 0.7, 0.05, 0.5, 0.2]


def listed(response) -> list[int]:
    return [int(pk) for pk in re.findall(r'<tr data-recording="(\d+)">', response.content.decode())]


def link(response, rel: str) -> str | None:
    found = re.search(rf'<a href="([^"]+)" rel="{rel}">', response.content.decode())
    return "/review/" + found.group(1).replace("&amp;", "&") if found else None


@pytest.fixture
def queue_in_order(monkeypatch) -> list[int]:
    """Eleven queued calls with ties and calls without a confidence; pages of three."""
    monkeypatch.setattr(views, "QUEUE_PAGE_SIZE", 3)
    recordings = [queued(confidence=0.3 if confidence is None else confidence) for confidence in CONFIDENCES]
    for recording, confidence in zip(recordings, CONFIDENCES):
        recording.lowest_confidence = confidence  # None: a judgment without a confidence (no score)
        recording.save(update_fields=["lowest_confidence"])
    # Lowest confidence first, calls without one last, ties by id.
    return [r.pk for r in sorted(recordings, key=lambda r: (r.lowest_confidence is None, r.lowest_confidence or 0, r.pk))]


def test_next_links_walk_every_call_once_in_queue_order(sup_client, queue_in_order):
    seen, url, pages = [], "/review/", 0
    while url:
        response = sup_client.get(url)
        assert "11 calls waiting for review" in response.content.decode()
        seen += listed(response)
        url, pages = link(response, "next"), pages + 1
    assert seen == queue_in_order
    assert pages == 4


def test_previous_links_walk_back_to_the_first_page(sup_client, queue_in_order):
    url = "/review/"
    for _ in range(3):
        url = link(sup_client.get(url), "next")
    last = sup_client.get(url)
    assert listed(last) == queue_in_order[9:]
    back = sup_client.get(link(last, "prev"))
    assert listed(back) == queue_in_order[6:9]
    back = sup_client.get(link(sup_client.get(link(back, "prev")), "prev"))
    assert listed(back) == queue_in_order[:3]
    assert link(back, "prev") is None and "First page" not in back.content.decode()


def test_filters_travel_with_the_page_links(sup_client, queue_in_order):
    response = sup_client.get("/review/?reason=low_confidence")
    assert "reason=low_confidence" in link(response, "next")


def test_a_mangled_position_shows_the_first_page(sup_client, queue_in_order):
    for url in ("/review/?after=abc", "/review/?before=0.2_", "/review/?after=_12", "/review/?page=300"):
        response = sup_client.get(url)
        assert response.status_code == 200
        assert listed(response) == queue_in_order[:3]


def test_a_page_whose_calls_all_left_the_queue_falls_back_to_the_first(sup_client, queue_in_order):
    response = sup_client.get(f"/review/?after={QueuePosition(key=2.0, id=queue_in_order[-1])}")
    assert listed(response) == queue_in_order[:3]


def test_a_deep_page_costs_the_queries_of_the_first(queue_in_order):
    def queries(**position) -> int:
        with CaptureQueriesContext(connection) as captured:
            queue_page(filters=QueueFilters(), scope=EVERYTHING, size=3, **position)
        return len(captured)

    deep = QueuePosition(key=0.5, id=queue_in_order[5])
    assert queries() == queries(after=deep) == queries(before=deep) == 2
    page = queue_page(filters=QueueFilters(), scope=EVERYTHING, size=3, after=deep)
    assert [r.pk for r in page.recordings] == queue_in_order[6:9]


def test_calls_reviewed_meanwhile_do_not_shift_the_next_page(sup_client, queue_in_order):
    first = sup_client.get("/review/")
    following = link(first, "next")
    Recording.objects.filter(pk__in=queue_in_order[:2]).update(status=Recording.Status.REVIEWED)
    assert listed(sup_client.get(following)) == queue_in_order[3:6]


def test_the_page_links_speak_spanish(supervisor, queue_in_order):
    client = client_for(supervisor, "es")
    second = client.get(link(client.get("/review/"), "next")).content.decode()
    assert "Primera página" in second and "Anterior" in second and "Siguiente" in second
