"""The agent's and the lead's pages, in English and in Spanish: an agent disputes with the form, a lead
resolves with theirs, and a Spanish page shows no English source string."""

from __future__ import annotations

import re

import pytest

from disputes.models import Dispute
from insights.selfreview.services import self_review_skip
from reviews.models import Review
from reviews.reference import human_references
from tests.disputes.conftest import reviewed_call
from tests.review.conftest import client_for, set_evidence
from tests.test_translations import english_sources, visible


def leaks(page: str) -> list[str]:
    text = visible(page)
    return [s for s in english_sources() if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", text)]


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "es"])
def test_an_agent_disputes_and_a_lead_resolves_on_the_pages(care, ana, sup, lead, language):
    call = reviewed_call(care, "agent-ana", sup, external_id="llamada-7")
    set_evidence(call, "c1", "te lo mando hoy antes de las 18", rationale="Promete una hora.")
    self_review_skip(recording=call, user=ana)  # the call's page shows its values (not the blind self-review first)
    agent = client_for(ana, language=language)
    home = agent.get("/").url
    assert home == "/me/"
    listing = agent.get(home).content.decode()
    assert "llamada-7" in listing
    page = agent.get(f"/me/calls/{call.pk}/").content.decode()
    # The judge's verified quote is highlighted in the transcript; the supervisor's values are shown.
    assert '<mark data-criteria="c1"' in page and 'id="dispute-form"' in page and "Promete una hora." in page
    # A dispute without a reason is refused at its criterion, nothing stored.
    refused = agent.post(f"/me/calls/{call.pk}/dispute/", {"c1-disputed": "on", "c1-value": "2", "c1-reason": ""})
    assert refused.status_code == 400 and 'class="error field-error"' in refused.content.decode()
    assert not Dispute.objects.exists()
    sent = agent.post(
        f"/me/calls/{call.pk}/dispute/", {"c1-disputed": "on", "c1-value": "2", "c1-reason": "Lo dijo el cliente."}
    )
    assert sent.status_code == 302
    dispute = Dispute.objects.get()
    pages = {"agent call": agent.get(f"/me/calls/{call.pk}/").content.decode()}
    assert 'id="dispute-outcome"' in pages["agent call"] and 'id="dispute-form"' not in pages["agent call"]
    pages["agent scorecard"] = agent.get("/me/scorecard/").content.decode()
    pages["agent home"] = agent.get("/me/").content.decode()

    leader = client_for(lead, language=language)
    pages["lead list"] = leader.get("/disputes/").content.decode()
    assert f"/disputes/{dispute.pk}/" in pages["lead list"] and 'id="waiting-count"' in pages["lead list"]
    detail = leader.get(f"/disputes/{dispute.pk}/").content.decode()
    assert "Lo dijo el cliente." in detail and 'name="c1-outcome"' in detail
    pages["lead detail"] = detail
    missing = leader.post(f"/disputes/{dispute.pk}/", {"c1-outcome": "upheld", "c1-value": "", "c1-comment": ""})
    assert missing.status_code == 400
    done = leader.post(f"/disputes/{dispute.pk}/", {"c1-outcome": "upheld", "c1-value": "", "c1-comment": "Cierto."})
    assert done.status_code == 302
    assert human_references(recording_ids=[call.pk])[(call.pk, "c1")].value == 2
    assert Review.objects.filter(recording=call, from_dispute=True).count() == 1
    pages["lead resolved"] = leader.get(f"/disputes/{dispute.pk}/").content.decode()
    assert 'id="resolved"' in pages["lead resolved"]
    outcome = agent.get(f"/me/calls/{call.pk}/").content.decode()
    assert 'class="outcome upheld"' in outcome
    pages["agent outcome"] = outcome
    pages["acknowledgements"] = client_for(sup, language=language).get("/disputes/reviews/").content.decode()
    pages["deviation"] = client_for(sup, language=language).get("/reports/deviation/?rubric=care").content.decode()
    assert 'id="disputes"' in pages["deviation"]
    if language == "es":
        assert {name: found for name, page in pages.items() if (found := leaks(page))} == {}


@pytest.mark.django_db
def test_an_agent_acknowledges_with_one_click(care, ana, sup):
    call = reviewed_call(care, "agent-ana", sup)
    agent = client_for(ana)
    assert agent.post(f"/me/calls/{call.pk}/acknowledge/", {}).status_code == 302
    assert 'id="acknowledged"' in agent.get(f"/me/calls/{call.pk}/").content.decode()
    assert Review.objects.get(recording=call).acknowledgement.user == ana


@pytest.mark.parametrize("language,plain", [
    ("en", "No calls of yours have been judged yet"),
    ("es", "Todavía no se ha evaluado ninguna llamada suya"),
])  # fmt: skip
def test_my_scorecard_without_calls_opens_on_a_plain_sentence(db, language, plain):
    """A superuser holds every permission, so the top bar offers "My scorecard"; with no calls of their own
    the page opened on the filter form's "This field is required."."""
    from tests.factories import UserFactory

    admin = UserFactory(username="root", is_superuser=True, is_staff=True)
    page = client_for(admin, language).get("/me/scorecard/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "This field is required." not in text and "Este campo es obligatorio." not in text
    assert plain in text
