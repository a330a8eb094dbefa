"""Nothing of another agent is reachable: every URL of the project (read from the URLconf, so a new page is
walked too), opened by an agent with the ids of another agent's call, review and dispute, by GET (also
as CSV) and POST, answers no other agent's data; the supervisors' pages and API refuse agents."""

from __future__ import annotations

import re

import pytest
from rest_framework.test import APIClient

from disputes.models import Dispute
from tests.disputes.conftest import reviewed_call
from tests.test_access import patterns

# What an agent may open: their own pages, the account and language pages, the API's schema and docs,
# the disputes' list, which filters to their own, and the calibration sessions' lists, which show only the
# sessions the reader leads or takes part in (none for an agent; the leak check reads them too), and the
# agent's own coaching sessions (tests/coaching/test_api.py: never another agent's).
AGENT_OPEN = {
    "", "me/", "me/scorecard/", "api/disputes/", "api/schema/", "api/docs/", "i18n/setlang/", "calibrations/",
    "api/calibrations/", "coaching/mine/", "api/coaching/",
}  # fmt: skip
ACCOUNT = re.compile(r"^accounts/")


def concrete(route: str, value: str) -> str | None:
    """The route with each parameter filled in (None for a pattern this walk cannot fill: the catch-alls)."""
    if "^" in route or "(?" in route:
        return None
    return re.sub(r"<(?:(\w+):)?(\w+)>", lambda m: value if (m.group(1) or "str") == "int" else "care", route)


@pytest.mark.django_db
def test_an_agent_reaches_nothing_of_another_agent_and_no_supervisor_page(care, ana, bruno, sup, lead):
    theirs = reviewed_call(care, "agent-bruno", sup, external_id="bruno-secret-call")
    mine = reviewed_call(care, "agent-ana", sup, external_id="ana-own-call")
    review = theirs.reviews.get()
    client = APIClient()
    client.force_login(bruno)
    client.post(
        f"/api/reviews/{review.pk}/dispute/",
        {"criteria": [{"criterion": "c1", "value": 2, "reason": "bruno-secret-reason"}]},
        format="json",
    )
    dispute = Dispute.objects.get()
    client.force_login(ana)
    leaks, opened = {}, set()
    for route, _view in patterns():
        for pk in {theirs.pk, review.pk, dispute.pk}:
            url = concrete(route, str(pk))
            if url is None:
                continue
            for method, data in (("get", {}), ("get", {"format": "csv", "agent": "agent-bruno"}), ("post", {})):
                client.force_login(ana)  # again: the walk posts to the logout page too
                response = getattr(client, method)("/" + url, data)
                body = b"".join(response.streaming_content) if response.streaming else response.content
                if b"bruno-secret" in body or str(theirs.external_id).encode() in body:
                    leaks[(method, url)] = response.status_code
                if response.status_code < 300 and not (route in AGENT_OPEN or ACCOUNT.match(route)):
                    opened.add((method, route, response.status_code))
    assert leaks == {}
    assert opened == set()
    # The agent's own call opens; theirs is not found, page and API alike.
    assert client.get(f"/me/calls/{mine.pk}/").status_code == 200
    assert client.get(f"/me/calls/{theirs.pk}/").status_code == 404
    assert client.get(f"/api/disputes/{dispute.pk}/").status_code == 404
    assert client.get("/api/disputes/").json() == []
    scorecard = client.get("/me/scorecard/", {"agent": "agent-bruno"}).content
    assert b"Agent-Bruno" not in scorecard and b"ana-own-call" in scorecard  # her calls to work on, not his
