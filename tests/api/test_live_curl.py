"""The issue's curl command, verbatim but for the server address, against a live server."""

from __future__ import annotations

import json

import pytest

from qa.models import Recording
from reviews.models import Review
from tests.api.conftest import new_key
from tests.api.test_redis_down import own_redis  # noqa: F401 (a fixture)
from tests.factories import judged_recording, published_rubric
from tests.support.curl import curl_run
from tests.support.docs import docs_blocks, docs_section

CURL = (
    'curl -X POST http://localhost:8000/recordings/1/review -H "Content-Type: application/json" '
    '-H "Authorization: Api-Key $KEY" '
    """-d '{"reviewer":"supervisor-1","decision":"approve","adjusted_mean":3.8}'"""
)


# Sequences reset, so the judged recording is recording 1, as in the command.
@pytest.mark.django_db(transaction=True, reset_sequences=True)
def test_the_documented_curl_posts_a_review(live_server):
    recording = judged_recording()
    assert recording.pk == 1
    api_key, key = new_key("qa-tool", can_review=True, all_sources=True)

    body, status = curl_run(CURL, server=live_server.url, key=key)

    assert status == "201", body
    assert json.loads(body)["decision"] == "approve"
    review = Review.objects.get()
    assert (review.recording_id, review.reviewer, review.decision, review.adjusted_mean) == (
        1,
        "supervisor-1",
        "approve",
        3.8,
    )
    assert review.api_key == api_key
    assert Recording.objects.get(pk=1).status == Recording.Status.REVIEWED


def test_the_review_curl_the_api_page_shows_is_the_one_run_here():
    """The REST API page's review example is this command, so running CURL runs what the page says."""
    section = docs_section("docs/api/rest.md", "Endpoints and reviews")
    [documented] = [block.code for block in docs_blocks(section) if "/review" in block.code]
    assert " ".join(documented.replace("\\\n", " ").split()) == " ".join(CURL.split())


def _readme_command(page: str, heading: str) -> str:
    """The first `sh` block of the section under `heading` of the docs page `page`, as written there."""
    section = docs_section(page, heading)
    return section.split("```sh\n", 1)[1].split("\n```", 1)[0]


@pytest.mark.django_db(transaction=True)
def test_the_readmes_batch_curl_stores_one_call_and_refuses_the_summary(live_server, own_redis):  # noqa: F811
    """Published to a Redis of the test's own, which nothing consumes."""
    published_rubric(slug="customer-care")
    _api_key, key = new_key("crm")
    command = _readme_command("docs/api/batches.md", "Posting many calls at once")

    body, status = curl_run(command, server=live_server.url, key=key)

    assert status == "200", body
    first, second = json.loads(body)["results"]
    recording = Recording.objects.get()
    assert (first["status"], first["recording"]["id"], first["recording"]["status"]) == (201, recording.pk, "queued")
    assert (second["status"], list(second["errors"])) == (400, ["transcript"])
    assert (recording.source, recording.external_id, recording.agent_id) == ("crm", "call-8820", "ag-101")
    assert recording.transcript == "AGENT: Harbor Bank, Elizabeth speaking.\nCUSTOMER: My card was charged twice."
