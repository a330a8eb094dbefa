"""The call's quality score where a QA manager looks first (issue 41): the calls list, the agent's list of
their calls and the agent's call page. It was only in the review queue and the API."""

from __future__ import annotations

import pytest

from qa.models import Recording
from tests.disputes.conftest import reviewed_call
from tests.disputes.conftest import ana, sup, workspace  # noqa: F401  (fixtures)
from tests.factories import UserFactory, published_rubric
from tests.review.conftest import client_for
from insights.selfreview.services import self_review_skip

pytestmark = pytest.mark.django_db


def scored(recording: Recording, score: float) -> Recording:
    Recording.objects.filter(pk=recording.pk).update(quality_score=score)
    return recording


def test_the_calls_list_shows_each_calls_quality_score(sup):
    rubric = published_rubric(slug="care")
    call = scored(reviewed_call(rubric, "agent-ana", sup, external_id="call-q"), 81.25)
    lead = UserFactory(username="qlead", groups=["QA leads"])
    for language, shown, heading in (("en", "81.2", "Quality score"), ("es", "81,2", "Puntuación de calidad")):
        page = client_for(lead, language).get("/calls/").content.decode()
        assert f"<th>{heading}</th>" in page
        row = page.split(f'data-recording="{call.pk}"', 1)[1].split("</tr>", 1)[0]
        assert f'<td class="num quality">{shown}</td>' in row


def test_the_agent_sees_the_quality_score_in_their_list_and_on_the_call(ana, sup):
    rubric = published_rubric(slug="care")
    call = scored(reviewed_call(rubric, "agent-ana", sup, external_id="call-q"), 62.5)
    home = client_for(ana).get("/me/").content.decode()
    row = home.split(f'href="/me/calls/{call.pk}/"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="num quality">62.5</td>' in row
    self_review_skip(recording=call, user=ana)  # the call's page shows its values (not the blind self-review first)
    page = client_for(ana, "es").get(f"/me/calls/{call.pk}/").content.decode()
    assert 'id="quality-score"' in page and "62,5" in page.split('id="quality-score"', 1)[1].split("</p>", 1)[0]
