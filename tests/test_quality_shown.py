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


def test_a_value_that_does_not_exist_leaves_the_score_over_the_rest_and_the_page_says_so(sup):
    """Issue 41's walk: the demo's calls each had an unverified quote, and the rule "no score while a criterion
    has no value" left every one of them "—". The judge's score is over the values that exist; the pages say
    how many criteria it leaves out."""
    from qa.quality import judge_quality
    from qa.services import recordings_quality_store

    rubric = published_rubric(slug="care")
    call = reviewed_call(rubric, "agent-ana", sup, external_id="call-u", values={"c1": 4, "c2": 1, "c3": 4})
    call.current_run.scores.filter(criterion__key="c2").update(evidence_verified=False, confidence=0)
    quality = judge_quality(rubric=rubric, scores=call.current_run.scores.select_related("criterion"))
    assert quality.missing == ("c2",) and quality.score == pytest.approx(75.0)  # c1 and c3 at 4 of 1–5; c2's 1 is not counted
    recordings_quality_store(recordings=Recording.objects.filter(pk=call.pk))
    assert Recording.objects.values_list("quality_score", "quality_missing").get(pk=call.pk) == (75.0, 1)
    lead = UserFactory(username="qlead", groups=["QA leads"])
    for language, shown, note in (("en", "75.0", "without 1 criterion"), ("es", "75,0", "sin 1 criterio")):
        page = client_for(lead, language).get("/calls/").content.decode()
        row = page.split(f'data-recording="{call.pk}"', 1)[1].split("</tr>", 1)[0]
        cell = row.split('<td class="num quality">', 1)[1].split("</td>", 1)[0]
        assert cell.startswith(shown) and note in cell
