"""An agent's self-review: the call's page is blind until they score it or skip (the HTML holds none of the judge's
or the supervisor's values, quotes or comments), then shows theirs beside the judge's verified values and the
supervisor's, with the differences; a figure of how often they match, for the agent and their supervisors; and
nothing of it ever counts as a human reference."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import PermissionDenied

from core.errors import InvalidInputError
from insights.selfreview.models import SelfReview
from insights.selfreview.selectors import own_agreement
from insights.selfreview.services import AlreadySeenError, self_review_skip, self_review_submit
from tests.disputes.conftest import adjusted_review, reviewed_call
from tests.disputes.test_pages import leaks
from tests.review.conftest import client_for, set_evidence

pytestmark = pytest.mark.django_db

QUOTE = "te lo mando hoy antes de las 18"
RATIONALE = "Promete una hora concreta."
COMMENT = "Muy bien la hora concreta."


@pytest.fixture
def call(care, sup):
    """Ana's call: the judge gave c1 4 (its quote verified), c2 4 with a quote not in the transcript, c3 4; the
    supervisor made c1 a 3 with a comment."""
    recording = reviewed_call(care, "agent-ana", sup, external_id="llamada-9")
    set_evidence(recording, "c1", QUOTE, rationale=RATIONALE)
    adjusted_review(recording, sup, "c1", 3)
    set_evidence(recording, "c2", "una frase que nadie dijo en la llamada")
    entry = recording.current_run.reviews.order_by("-created_at").first().criteria.get(criterion__key="c1")
    entry.comment = COMMENT
    entry.save(update_fields=["comment"])
    return recording


# The quote is words of the transcript, which the blind page shows: what must not show is the judge's citing it.
REVEALING = (f"“{QUOTE}”", "una frase que nadie dijo", RATIONALE, COMMENT, 'class="judge-value"', 'class="human-value"', 'id="quality-score"', "<mark data-criteria", "id=\"review-summary\"")


@pytest.mark.parametrize("language", ["en", "es"])
def test_an_unseen_call_is_blind_until_scored_then_shows_the_differences(call, ana, language):
    agent = client_for(ana, language=language)
    blind = agent.get(f"/me/calls/{call.pk}/").content.decode()
    assert 'id="self-review-form"' in blind and 'id="self-review-skip"' in blind
    assert [word for word in REVEALING if word in blind] == []
    # Every criterion with its scale; c3 (which the rubric lets not apply) offers N/A, c1 does not.
    assert re.search(r'<select name="c1"[^>]*>', blind) and '<option value="5">5</option>' in blind
    assert 'value="na"' in blind.split('name="c3"', 1)[1].split("</select>", 1)[0]
    assert 'value="na"' not in blind.split('name="c1"', 1)[1].split("</select>", 1)[0]
    if language == "es":
        assert "Puntúela usted primero" in blind and leaks(blind) == []

    sent = agent.post(f"/me/calls/{call.pk}/self-review/", {"c1": "2", "c2": "5", "c3": "5"})
    assert sent.status_code == 302 and sent.url.endswith("#self-review")
    page = agent.get(f"/me/calls/{call.pk}/").content.decode()
    assert f"“{QUOTE}”" in page and 'id="self-review-table"' in page
    rows = {
        key: dict(re.findall(r'<td class="num ([a-z-]+)">(.*?)</td>', row, re.S))
        for key, row in re.findall(r'<tr data-criterion="(c\d)">(.*?)</tr>', page, re.S)
    }
    assert {k: rows["c1"][k] for k in ("own", "judge", "human", "minus-judge", "minus-human")} == {
        "own": "2", "judge": "4", "human": "3", "minus-judge": "-2", "minus-human": "-1",
    }  # fmt: skip
    # The judge's c2 quote did not verify: its value does not exist, so there is no difference with it.
    assert "unverified" in rows["c2"]["judge"] and rows["c2"]["minus-judge"] == "—"
    # Nor has the supervisor's approval of it a value (an approve of an unverified value gives none).
    assert rows["c2"]["human"] == "—" and rows["c2"]["minus-human"] == "—"
    assert (rows["c3"]["own"], rows["c3"]["judge"], rows["c3"]["minus-judge"], rows["c3"]["minus-human"]) == ("5", "4", "+1", "+1")
    if language == "es":
        assert leaks(page) == []


def test_skipping_shows_the_values_and_a_self_review_is_given_once(call, ana):
    agent = client_for(ana)
    assert agent.post(f"/me/calls/{call.pk}/self-review/skip/").status_code == 302
    page = agent.get(f"/me/calls/{call.pk}/").content.decode()
    assert f"“{QUOTE}”" in page and 'class="judge-value"' in page and 'id="self-review-form"' not in page
    assert 'id="self-review-table"' not in page
    # Once seen, a self-review would not be blind: refused, and nothing stored.
    refused = agent.post(f"/me/calls/{call.pk}/self-review/", {"c1": "2", "c2": "5", "c3": "na"}, follow=True)
    assert "already seen" in refused.content.decode()
    assert SelfReview.objects.get().skipped and not SelfReview.objects.get().values.exists()
    with pytest.raises(AlreadySeenError):
        self_review_submit(recording=call, user=ana, values={"c1": 2, "c2": 5, "c3": "na"})


def test_a_call_whose_review_the_agent_acknowledged_is_not_offered(call, ana):
    agent = client_for(ana)
    agent.post(f"/me/calls/{call.pk}/self-review/skip/")
    agent.post(f"/me/calls/{call.pk}/acknowledge/", {})
    SelfReview.objects.all().delete()  # the acknowledgement alone says they saw it
    assert 'id="self-review-form"' not in agent.get(f"/me/calls/{call.pk}/").content.decode()


def test_bad_values_are_refused_at_their_criterion(call, ana):
    agent = client_for(ana)
    missing = agent.post(f"/me/calls/{call.pk}/self-review/", {"c1": "2", "c3": "na"})
    assert missing.status_code == 400
    body = missing.content.decode()
    assert 'id="self-review-errors"' in body and "Give your value for this criterion." in body
    assert [word for word in REVEALING if word in body] == []  # still blind
    with pytest.raises(InvalidInputError) as error:
        self_review_submit(recording=call, user=ana, values={"c1": 9, "c2": "na", "c3": "na", "c7": 1})
    assert set(error.value.errors) == {"c1", "c2", "values"}
    assert not SelfReview.objects.exists()


def test_an_agent_self_reviews_only_their_own_calls(care, sup, ana, bruno):
    others = reviewed_call(care, "agent-bruno", sup)
    agent = client_for(ana)
    assert agent.get(f"/me/calls/{others.pk}/").status_code == 404
    assert agent.post(f"/me/calls/{others.pk}/self-review/", {"c1": "2", "c2": "2", "c3": "2"}).status_code == 404
    assert agent.post(f"/me/calls/{others.pk}/self-review/skip/").status_code == 404
    with pytest.raises(PermissionDenied):
        self_review_submit(recording=others, user=ana, values={"c1": 2, "c2": 2, "c3": 2})
    with pytest.raises(PermissionDenied):
        self_review_skip(recording=others, user=ana)
    assert not SelfReview.objects.exists()
    # A supervisor is no agent: the pages are not theirs.
    assert client_for(sup).post(f"/me/calls/{others.pk}/self-review/skip/").status_code == 403


def test_the_match_figure_counts_self_reviews_against_the_human_reference(care, sup, ana, lead, workspace):
    from access.services import member_add
    from tests.factories import UserFactory

    first = reviewed_call(care, "agent-ana", sup)  # the supervisor approved 4, 4, 4
    second = reviewed_call(care, "agent-ana", sup)
    unreviewed = reviewed_call(care, "agent-ana", sup)
    unreviewed.reviews.all().delete()  # no human reference: nothing to compare with
    self_review_submit(recording=first, user=ana, values={"c1": 4, "c2": 3, "c3": 4})  # 2 of 3 match
    self_review_submit(recording=second, user=ana, values={"c1": 4, "c2": 4, "c3": "na"})  # 2 of 3 (N/A vs 4)
    self_review_submit(recording=unreviewed, user=ana, values={"c1": 1, "c2": 1, "c3": 1})
    figure = own_agreement(user=ana)
    assert (figure.calls, figure.n, figure.matches) == (3, 6, 4)
    low, high = figure.ci
    assert low < 4 / 6 < high and 0 < low and high < 1

    mine = client_for(ana, "es").get("/me/scorecard/").content.decode()
    text = mine.split('id="self-agreement-figure"', 1)[1].split("</p>", 1)[0]
    assert "4 de 6" in text and "67" in text
    theirs = client_for(sup).get("/scorecards/agent/?rubric=care&agent=agent-ana").content.decode()
    assert "on 4 of 6 criteria" in theirs.split('id="self-agreement-figure"', 1)[1].split("</p>", 1)[0]
    # A rubric owner reads the scorecard but does not coach the agent: no self-review figure.
    owner = UserFactory(username="owner")
    member_add(user=owner, workspace=workspace, role="rubric_owner")
    page = client_for(owner).get("/scorecards/agent/?rubric=care&agent=agent-ana").content.decode()
    assert "agent-ana" in page and 'id="self-agreement"' not in page
