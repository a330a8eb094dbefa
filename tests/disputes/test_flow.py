"""A dispute from its opening to its resolution, through the API, with its effects on the human reference,
the deviation report, criterion health, the experiments' disputed group and the agent's scorecard."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone
from rest_framework.test import APIClient

from insights.dashboard.selectors import OpenDisputes, open_disputes
from disputes.selectors import upheld_dispute_recordings
from experiments.selectors import experiment_recording_ids
from reviews.filters import Group, ReportFilters
from disputes.models import Dispute
from reviews.models import Review
from reviews.reference import human_reference_rows, human_references
from reviews.services import CriterionAdjustment, review_create
from insights.reports.selectors import deviation_report, rubric_health
from insights.scorecards.selectors import agent_card
from tests.disputes.conftest import reviewed_call
from tests.factories import judged_recording
from tests.review.conftest import client_for as page_client_for


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def standing(recording) -> Review:
    return recording.reviews.filter(decision__in=["approve", "reject"]).order_by("-created_at", "-id").first()


def dispute_body(**overrides):
    item = {"criterion": "c1", "value": 2, "reason": "I never promised a time: the quote is the customer's."}
    return {"criteria": [{**item, **overrides}]}


def agent_c1(rubric, agent_id):
    card = agent_card(ReportFilters(rubric=rubric), agent_id)
    return next(item.agent.estimate for item in card.criteria if item.column.key == "c1")


@pytest.mark.django_db
def test_an_upheld_dispute_is_a_new_final_review_that_every_figure_reads(
    care, ana, sup, lead, settings, django_capture_on_commit_callbacks
):
    settings.EMAIL_HOST = "localhost"  # e-mail configured: the test backend keeps the messages
    first = reviewed_call(care, "agent-ana", sup)
    second = reviewed_call(care, "agent-ana", sup)
    review = standing(first)
    assert human_references(recording_ids=[first.pk])[(first.pk, "c1")].value == 4
    assert agent_c1(care, "agent-ana") == pytest.approx(4.0)
    assert deviation_report(ReportFilters(rubric=care)).groups[Group.ALL].criteria[0].agreement.human_mean == 4.0

    agent = client_for(ana)
    with django_capture_on_commit_callbacks(execute=True):  # the e-mail goes after the commit
        answer = agent.post(f"/api/reviews/{review.pk}/dispute/", dispute_body(), format="json")
    assert answer.status_code == 201, answer.json()
    dispute = answer.json()
    assert dispute["status"] == "open" and dispute["criteria"][0]["proposed_value"] == 2
    assert [m.to for m in mail.outbox] == [["lead@example.com"]]
    # Opening changes nothing yet.
    assert human_references(recording_ids=[first.pk])[(first.pk, "c1")].review_id == review.pk
    assert deviation_report(ReportFilters(rubric=care)).disputes[care.criteria.get(key="c1").pk].opened == 1
    # The dashboard's tile counts it, and counts it late after its due date.
    assert open_disputes(ReportFilters(rubric=care)) == OpenDisputes(waiting=1, overdue=0)
    late = Dispute.objects.get(pk=dispute["id"]).due_at + timedelta(minutes=1)
    assert open_disputes(ReportFilters(rubric=care), now=late) == OpenDisputes(waiting=1, overdue=1)
    board = client_for(lead).get("/dashboard/", {"rubric": "care"}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    tile = board.split('id="tile-disputes"', 1)[1].split("</section>", 1)[0]
    assert '<p class="figure">1</p>' in tile and "/disputes/?status=open" in tile

    lead_client = client_for(lead)
    assert [d["id"] for d in lead_client.get("/api/disputes/", {"status": "open"}).json()] == [dispute["id"]]
    with django_capture_on_commit_callbacks(execute=True):
        resolved = lead_client.post(
            f"/api/disputes/{dispute['id']}/resolve/",
            {"criteria": [{"criterion": "c1", "outcome": "upheld", "comment": "The customer said it, not the agent."}]},
            format="json",
        )
    assert resolved.status_code == 200, resolved.json()
    body = resolved.json()
    assert body["status"] == "resolved" and body["criteria"][0]["outcome"] == "upheld"
    assert body["criteria"][0]["resolved_value"] == 2
    resolution = Review.objects.get(pk=body["resolution"])
    assert open_disputes(ReportFilters(rubric=care)) == OpenDisputes(waiting=0, overdue=0)
    assert resolution.from_dispute and resolution.user == lead and resolution.is_final
    assert mail.outbox[-1].to == ["ana@example.com"]

    # The human reference reads the resolution; the other criteria stay as the supervisor left them.
    references = human_references(recording_ids=[first.pk, second.pk])
    assert references[(first.pk, "c1")].value == 2 and references[(first.pk, "c1")].review_id == resolution.pk
    assert references[(first.pk, "c2")].value == 4
    assert references[(second.pk, "c1")].value == 4
    # So does the deviation report, which also counts the dispute, and criterion health.
    report = deviation_report(ReportFilters(rubric=care))
    c1 = care.criteria.get(key="c1")
    assert report.groups[Group.ALL].criteria[0].agreement.human_mean == pytest.approx(3.0)
    assert report.groups[Group.ALL].recordings == 2
    api = client_for(sup).get("/api/reports/deviation/", {"rubric": "care"}).json()["disputes"]
    assert api[0] == {"criterion_key": "c1", "opened": 1, "decided": 1, "upheld": 1, "upheld_share": 1.0}
    rows = {(row["recording_id"], row["criterion_key"]): row for row in human_reference_rows(recording_ids=[first.pk])}
    assert rows[(first.pk, "c1")]["human_value"] == 2 and rows[(first.pk, "c1")]["review_id"] == resolution.pk
    tally = report.disputes[c1.pk]
    assert (tally.opened, tally.decided, tally.upheld, tally.upheld_share) == (1, 1, 1, 1.0)
    health = {row.current.criterion.key: row for row in rubric_health(slug="care").criteria}
    assert health["c1"].current.upheld_dispute_rate == pytest.approx(0.5)
    # The admin's health cell states the rate's own numerator and denominator (1 upheld of 2 reviewed calls
    # is 50 %), beside how many were disputed; it used to read "50 % · 1 of 1 disputed", which disagree.
    from django.urls import reverse

    from tests.factories import UserFactory

    admin = UserFactory(username="health-admin", is_staff=True, is_superuser=True)
    page = client_for(admin).get(reverse("admin:rubrics_rubric_change", args=[care.pk]), HTTP_ACCEPT_LANGUAGE="en")
    cell = " ".join(page.content.decode().split('<code>c1</code>', 1)[1].split("</tr>", 1)[0].split())
    assert "50 % <span class=\"help\">1 upheld of 2 reviewed · 1 disputed</span>" in cell
    assert "1 of 1 disputed" not in cell
    # Two reviewed calls are too few to flag (reviews.figures.stats.MIN_N), as for rejections.
    assert not health["c1"].worst_upheld_disputes and not health["c2"].worst_upheld_disputes
    # And the agent's scorecard: both calls reviewed, now 2 and 4.
    assert agent_c1(care, "agent-ana") == pytest.approx(3.0)
    # Experiments can take the calls with an upheld dispute as their set.
    assert list(upheld_dispute_recordings()) == [first]
    assert experiment_recording_ids(
        rubric_slug="care", group="disputed", date_from=None, date_to=None, limit=None, seed=0
    ) == [first.pk]
    # The agent is told: the resolved dispute counts in their top bar until they open it.
    page = client_for(ana).get("/me/").content.decode()
    assert 'id="waiting-count"' in page
    # A resolution is final: it cannot be disputed in turn, nor the dispute resolved twice.
    again = agent.post(f"/api/reviews/{resolution.pk}/dispute/", dispute_body(value=3), format="json")
    assert again.status_code == 409
    twice = lead_client.post(
        f"/api/disputes/{dispute['id']}/resolve/",
        {"criteria": [{"criterion": "c1", "outcome": "rejected", "comment": "no"}]},
        format="json",
    )
    assert twice.status_code == 409


@pytest.mark.django_db
def test_a_rejected_dispute_changes_nothing(care, ana, sup, lead):
    call = reviewed_call(care, "agent-ana", sup)
    review = standing(call)
    before = human_references(recording_ids=[call.pk])
    estimate = agent_c1(care, "agent-ana")
    human_mean = deviation_report(ReportFilters(rubric=care)).groups[Group.ALL].criteria[0].agreement.human_mean
    dispute = client_for(ana).post(f"/api/reviews/{review.pk}/dispute/", dispute_body(), format="json").json()
    answer = client_for(lead).post(
        f"/api/disputes/{dispute['id']}/resolve/",
        {"criteria": [{"criterion": "c1", "outcome": "rejected", "comment": "The agent did promise it."}]},
        format="json",
    )
    assert answer.status_code == 200 and answer.json()["resolution"] is None
    assert human_references(recording_ids=[call.pk]) == before
    assert agent_c1(care, "agent-ana") == estimate
    report = deviation_report(ReportFilters(rubric=care))
    assert report.groups[Group.ALL].criteria[0].agreement.human_mean == human_mean
    assert report.disputes[care.criteria.get(key="c1").pk].upheld == 0
    assert not Review.objects.filter(from_dispute=True).exists()
    assert not upheld_dispute_recordings().exists()


@pytest.mark.django_db
def test_a_lead_may_uphold_with_a_value_of_their_own_or_na(care, ana, sup, lead):
    call = reviewed_call(care, "agent-ana", sup)
    body = {"criteria": [
        {"criterion": "c2", "value": 1, "reason": "I did."},
        {"criterion": "c3", "not_applicable": True, "reason": "No transfer asked."},
    ]}  # fmt: skip
    dispute = client_for(ana).post(f"/api/reviews/{standing(call).pk}/dispute/", body, format="json").json()
    answer = client_for(lead).post(
        f"/api/disputes/{dispute['id']}/resolve/",
        {"criteria": [
            {"criterion": "c2", "outcome": "upheld", "value": 3, "comment": "Partly."},
            {"criterion": "c3", "outcome": "upheld", "comment": "Right."},
        ]},
        format="json",
    )  # fmt: skip
    assert answer.status_code == 200, answer.json()
    references = human_references(recording_ids=[call.pk])
    assert references[(call.pk, "c2")].value == 3
    assert references[(call.pk, "c3")].not_applicable
    assert references[(call.pk, "c1")].value == 4


@pytest.mark.django_db
def test_each_refusal_is_a_clear_4xx(care, ana, bruno, sup, lead, settings):
    call = reviewed_call(care, "agent-ana", sup)
    review = standing(call)
    agent = client_for(ana)
    # Missing reason, unknown criterion, a value off the scale, N/A where the rubric has no exception.
    missing = agent.post(f"/api/reviews/{review.pk}/dispute/", dispute_body(reason=""), format="json")
    assert missing.status_code == 400 and "reason" in missing.json()["criteria"]["c1"]
    assert agent.post(f"/api/reviews/{review.pk}/dispute/", dispute_body(criterion="zz"), format="json").status_code == 400
    assert agent.post(f"/api/reviews/{review.pk}/dispute/", dispute_body(value=9), format="json").status_code == 400
    assert agent.post(
        f"/api/reviews/{review.pk}/dispute/", dispute_body(value=None, not_applicable=True), format="json"
    ).status_code == 400
    assert agent.post(f"/api/reviews/{review.pk}/dispute/", {"criteria": []}, format="json").status_code == 400
    assert agent.post(f"/api/reviews/{review.pk}/dispute/", dispute_body(value=4), format="json").status_code == 400
    assert not Dispute.objects.exists()
    # Not the agent's: another agent gets a 404, a supervisor or lead a 403.
    assert client_for(bruno).post(f"/api/reviews/{review.pk}/dispute/", dispute_body(), format="json").status_code == 404
    assert client_for(sup).post(f"/api/reviews/{review.pk}/dispute/", dispute_body(), format="json").status_code == 403
    # Out of time.
    Review.objects.filter(pk=review.pk).update(
        created_at=timezone.now() - timedelta(days=settings.QA_DISPUTE_DAYS, minutes=1)
    )
    late = agent.post(f"/api/reviews/{review.pk}/dispute/", dispute_body(), format="json")
    assert late.status_code == 409 and "closed_at" in late.json()
    Review.objects.filter(pk=review.pk).update(created_at=timezone.now() - timedelta(days=settings.QA_DISPUTE_DAYS - 1))
    # Already disputed.
    assert agent.post(f"/api/reviews/{review.pk}/dispute/", dispute_body(), format="json").status_code == 201
    assert agent.post(f"/api/reviews/{review.pk}/dispute/", dispute_body(value=3), format="json").status_code == 409
    dispute = Dispute.objects.get()
    # The resolution: only a lead; every criterion decided, each with a comment.
    assert agent.post(f"/api/disputes/{dispute.pk}/resolve/", {"criteria": []}, format="json").status_code == 403
    lead_client = client_for(lead)
    undecided = lead_client.post(f"/api/disputes/{dispute.pk}/resolve/", {"criteria": []}, format="json")
    assert undecided.status_code == 400 and "c1" in undecided.json()["criteria"]
    silent = lead_client.post(
        f"/api/disputes/{dispute.pk}/resolve/", {"criteria": [{"criterion": "c1", "outcome": "upheld"}]}, format="json"
    )
    assert silent.status_code == 400 and "comment" in silent.json()["criteria"]["c1"]
    assert lead_client.get("/api/disputes/", {"status": "nonsense"}).status_code == 400
    # A later review of the call: upholding can no longer change the one disputed.
    from tests.disputes.conftest import adjusted_review

    adjusted_review(call, sup, "c2", 2)
    stale = lead_client.post(
        f"/api/disputes/{dispute.pk}/resolve/",
        {"criteria": [{"criterion": "c1", "outcome": "upheld", "comment": "yes"}]},
        format="json",
    )
    assert stale.status_code == 409
    assert Dispute.objects.get(pk=dispute.pk).status == "open"


@pytest.mark.django_db
def test_acknowledging_and_what_supervisors_and_leads_see(care, ana, sup, lead, settings):
    acknowledged = reviewed_call(care, "agent-ana", sup)
    overdue = reviewed_call(care, "agent-ana", sup)
    Review.objects.filter(recording=overdue).update(
        created_at=timezone.now() - timedelta(days=settings.QA_ACKNOWLEDGE_DAYS + 1)
    )
    agent = client_for(ana)
    assert 'id="waiting-count"' in agent.get("/me/").content.decode()
    answer = agent.post(f"/api/reviews/{standing(acknowledged).pk}/acknowledge/", {"comment": "Understood"}, format="json")
    assert answer.status_code == 200 and answer.json()["comment"] == "Understood"
    for user in (sup, lead):
        page = client_for(user).get("/disputes/reviews/?status=overdue").content.decode()
        assert overdue.external_id in page and acknowledged.external_id not in page
        page = client_for(user).get("/disputes/reviews/?status=acknowledged").content.decode()
        assert acknowledged.external_id in page and "Understood" in page


def rejected_call(rubric, supervisor, *changes: tuple[str, int]):
    """A judged call of agent-ana (the judge said 4 everywhere) that the supervisor rejected, each change
    a criterion marked wrong with another value."""
    recording = judged_recording(rubric=rubric, agent_id="agent-ana", agent_name="Ana")
    review_create(
        recording=recording,
        decision="reject",
        reviewer=supervisor.username,
        user=supervisor,
        reject_reason="wrong_score",
        criteria=[
            CriterionAdjustment(criterion_key=key, adjusted_value=value, rejected=True, comment="Not what I heard.")
            for key, value in changes
        ],
    )
    return recording


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "es"])
def test_upholding_the_judges_value_against_a_reject_records_an_approve(care, ana, sup, lead, language):
    call = rejected_call(care, sup, ("c1", 2))
    disputed = standing(call)
    assert disputed.decision == "reject"
    dispute = client_for(ana).post(
        f"/api/reviews/{disputed.pk}/dispute/", dispute_body(value=4, reason="The judge had it right."), format="json"
    ).json()
    answer = client_for(lead).post(
        f"/api/disputes/{dispute['id']}/resolve/",
        {"criteria": [{"criterion": "c1", "outcome": "upheld", "comment": "The judge's 4 is right."}]},
        format="json",
    )
    assert answer.status_code == 200, answer.json()
    resolution = Review.objects.get(pk=answer.json()["resolution"])
    # Nothing the judge said is wrong any more: the resolution approves, without the reject's reason or mark.
    assert (resolution.decision, resolution.reject_reason, resolution.from_dispute) == ("approve", "", True)
    entry = resolution.criteria.get(criterion__key="c1")
    assert (entry.adjusted_value, entry.rejected) == (4, False)
    assert human_references(recording_ids=[call.pk])[(call.pk, "c1")].value == 4

    page = page_client_for(ana, language=language).get(f"/me/calls/{call.pk}/").content.decode()
    summary = page.split('id="review-summary"', 1)[1].split("</p>", 1)[0]
    expected = {"en": ("Dispute resolved by lead", "Approved"), "es": ("Reclamación resuelta por lead", "Aprobada")}
    rejected = {"en": "Rejected", "es": "Rechazada"}
    assert all(text in summary for text in expected[language]) and rejected[language] not in summary, summary
    assert 'class="outcome upheld"' in page


@pytest.mark.django_db
def test_a_resolution_that_leaves_a_criterion_wrong_stays_a_reject(care, ana, sup, lead):
    call = rejected_call(care, sup, ("c1", 2), ("c2", 1))
    dispute = client_for(ana).post(
        f"/api/reviews/{standing(call).pk}/dispute/", dispute_body(value=4, reason="The judge had it right."), format="json"
    ).json()
    answer = client_for(lead).post(
        f"/api/disputes/{dispute['id']}/resolve/",
        {"criteria": [{"criterion": "c1", "outcome": "upheld", "comment": "Yes."}]},
        format="json",
    )
    assert answer.status_code == 200, answer.json()
    resolution = Review.objects.get(pk=answer.json()["resolution"])
    assert (resolution.decision, resolution.reject_reason) == ("reject", "wrong_score")
    assert resolution.criteria.get(criterion__key="c2").rejected


@pytest.mark.django_db
def test_the_standing_filters_read_as_one_list_in_spanish(sup):
    """The filters over a supervisor's reviews are plural in Spanish ("Confirmadas", like "Pendientes"); the
    table's column keeps the singular ("Confirmada", of one review)."""
    page = page_client_for(sup, "es").get("/disputes/reviews/").content.decode()
    assert ">Confirmadas</a>" in page and ">Pendientes</a>" in page and ">Reclamadas</a>" in page
    assert '<th scope="col">Confirmada</th>' in page
