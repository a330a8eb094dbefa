"""The review's invariants, whoever calls: an approve never carries a judge value that does not exist,
a final review is replaced only on purpose, a claimed call belongs to its holder, only reviewers review,
and a blind call shows no judgment through the API either."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from core.errors import InvalidInputError
from qa.models import Recording
from reviews.models import Review, ReviewClaim
from reviews.reference import human_references
from reviews.services import (
    CriterionAdjustment,
    FinalReviewLockedError,
    RecordingClaimedError,
    review_create,
    reviews_human_values_store,
)
from tests.api.conftest import key_client, new_key
from tests.factories import UserFactory, judged_recording, published_rubric

UNVERIFIED_QUOTE = "agent:1.0.0.0.1: the model invented this"


def with_unverified(recording: Recording, *keys: str) -> Recording:
    """The judge's quotes for `keys` were not found: stored as the verifier stores them."""
    recording.current_run.scores.filter(criterion__key__in=keys).update(
        evidence=UNVERIFIED_QUOTE, evidence_verified=False, verification_status="not_found", confidence=0
    )
    return recording


def session_api(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    client.credentials(HTTP_ACCEPT_LANGUAGE="en")
    return client


# --- An approve cannot carry an unverified value -----------------------------------------------


@pytest.mark.django_db
def test_an_approve_with_an_unverified_criterion_is_refused_naming_it_and_nothing_is_stored(supervisor):
    recording = with_unverified(judged_recording(values={"c1": 4, "c2": 5, "c3": 3}), "c2")
    with pytest.raises(InvalidInputError) as caught:
        review_create(recording=recording, decision="approve", reviewer="s", user=supervisor)
    assert set(caught.value.errors) == {"unverified"}
    assert set(caught.value.errors["unverified"]) == {"c2"}
    assert "“Criterion 2”" in caught.value.errors["unverified"]["c2"]
    assert not Review.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "word",
    [
        CriterionAdjustment("c2", adjusted_value=5),  # the supervisor's own value, even the judge's number
        CriterionAdjustment("c2", rejected=True, comment="Not said"),
    ],
    ids=["own value", "judge wrong"],
)
def test_an_approve_is_accepted_once_the_unverified_criterion_has_the_supervisors_word(supervisor, word):
    recording = with_unverified(judged_recording(values={"c1": 4, "c2": 5, "c3": 3}), "c2")
    review = review_create(recording=recording, decision="approve", reviewer="s", user=supervisor, criteria=[word])
    review.refresh_from_db()
    # Giving a value where the judge's does not exist is no change of the judge's value: no comment needed.
    human = review.human_values
    assert human == ({"c1": 4, "c2": 5, "c3": 3} if word.adjusted_value else {"c1": 4, "c3": 3})


@pytest.mark.django_db
def test_not_applicable_answers_an_unverified_criterion_too(supervisor):
    recording = with_unverified(
        judged_recording(values={"c1": 4, "c2": 2}, rubric=published_rubric(criteria=2, not_applicable=("c2",))), "c2"
    )
    review = review_create(
        recording=recording,
        decision="approve",
        reviewer="s",
        user=supervisor,
        criteria=[CriterionAdjustment("c2", not_applicable=True)],
    )
    review.refresh_from_db()
    assert review.human_values == {"c1": 4}
    assert human_references(recording_ids=[recording.pk])[recording.pk, "c2"].not_applicable


@pytest.mark.django_db
def test_an_approve_stored_before_the_rule_gives_no_human_value_for_an_unverified_score():
    """The human reference itself never takes an unverified judge value, so approves made before the
    service refused them (the migration recomputes their values) count for nothing there."""
    recording = with_unverified(judged_recording(values={"c1": 4, "c2": 5}), "c2")
    old = Review.objects.create(recording=recording, run=recording.current_run, reviewer="s", decision="approve")
    reviews_human_values_store(reviews=Review.objects.filter(pk=old.pk))
    old.refresh_from_db()
    assert old.human_values == {"c1": 4, "c3": 4}
    references = human_references(recording_ids=[recording.pk])
    assert (recording.pk, "c2") not in references
    assert references[recording.pk, "c1"].value == 4


@pytest.mark.django_db
def test_the_api_refuses_the_approve_with_400_naming_the_criteria_then_accepts_it():
    review_api = key_client(new_key("qa-tool", can_review=True, all_sources=True)[1])
    recording = with_unverified(judged_recording(values={"c1": 4, "c2": 5, "c3": 3}), "c1", "c3")
    url = f"/api/recordings/{recording.pk}/review/"
    refused = review_api.post(url, {"reviewer": "ana", "decision": "approve"}, format="json")
    assert refused.status_code == 400
    assert list(refused.json()["unverified"]) == ["c1", "c3"]
    assert not Review.objects.exists()
    criteria = [{"criterion_key": "c1", "adjusted_value": 2}, {"criterion_key": "c3", "adjusted_value": 3}]
    accepted = review_api.post(url, {"reviewer": "ana", "decision": "approve", "criteria": criteria}, format="json")
    assert accepted.status_code == 201, accepted.json()
    assert Review.objects.get().human_values == {"c1": 2, "c2": 5, "c3": 3}


@pytest.mark.django_db
def test_the_page_preselects_nothing_for_an_unverified_criterion_and_names_it_on_approve(supervisor):
    recording = with_unverified(
        judged_recording(values={"c1": 4, "c2": 5, "c3": 3}, status=Recording.Status.IN_REVIEW), "c2"
    )
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(supervisor)
    url = f"/review/{recording.pk}/"
    page = client.get(url).content.decode()
    assert _checked(page, "c1") == "4"  # a verified value starts at the judge's
    assert _checked(page, "c2") is None  # nothing preselected where the judge's value does not exist
    refused = client.post(url, {"decision": "approve"})
    assert refused.status_code == 200 and not Review.objects.exists()
    body = refused.content.decode()
    assert "quote was not found in the transcript, so its value does not exist" in body
    assert 'href="#criterion-c2"' in body  # the error summary links to (and so focuses) the criterion
    saved = client.post(url, {"decision": "approve", "criterion-c2-value": "5"})
    assert saved.status_code == 302
    assert Review.objects.get().human_values == {"c1": 4, "c2": 5, "c3": 3}


def _checked(page: str, key: str) -> str | None:
    """The value of the checked radio button of a criterion, as the browser would submit it."""
    for tag in re.findall(rf'<input[^>]*name="criterion-{key}-value"[^>]*>', page):
        if " checked" in tag:
            return re.search(r'value="([^"]*)"', tag).group(1)
    return None


# --- A final review is replaced on purpose only; a claim holds; only reviewers review ------------


@pytest.mark.django_db
def test_a_final_review_is_not_superseded_through_the_api_unless_asked():
    review_api = key_client(new_key("qa-tool", can_review=True, all_sources=True)[1])
    recording = judged_recording()
    url = f"/api/recordings/{recording.pk}/review/"
    assert review_api.post(url, {"reviewer": "ana", "decision": "approve"}, format="json").status_code == 201
    again = review_api.post(url, {"reviewer": "ben", "decision": "approve"}, format="json")
    assert again.status_code == 409
    assert "already has a final review" in again.json()["detail"]
    assert Review.objects.count() == 1
    replaced = review_api.post(url, {"reviewer": "ben", "decision": "approve", "replace_final": True}, format="json")
    assert replaced.status_code == 201
    assert Review.objects.count() == 2


@pytest.mark.django_db
def test_needs_another_review_is_not_final_so_the_next_review_needs_no_flag(supervisor):
    recording = judged_recording(status=Recording.Status.IN_REVIEW)
    review_create(recording=recording, decision="needs_review", reviewer="s", user=supervisor)
    review_create(recording=recording, decision="approve", reviewer="s", user=supervisor)
    with pytest.raises(FinalReviewLockedError):
        review_create(recording=recording, decision="reject", reviewer="s", user=supervisor)


@pytest.mark.django_db
def test_a_call_claimed_by_another_supervisor_is_a_409_naming_who_and_until_when(supervisor):
    review_api = key_client(new_key("qa-tool", can_review=True, all_sources=True)[1])
    recording = judged_recording(status=Recording.Status.IN_REVIEW)
    until = timezone.now() + timedelta(minutes=20)
    ReviewClaim.objects.create(recording=recording, user=supervisor, expires_at=until)
    url = f"/api/recordings/{recording.pk}/review/"

    by_key = review_api.post(url, {"reviewer": "ana", "decision": "approve"}, format="json")
    other = UserFactory(username="ben", groups=["Supervisors"])
    by_other = session_api(other).post(url, {"decision": "approve"}, format="json")
    for response in (by_key, by_other):
        assert response.status_code == 409
        body = response.json()
        assert body["claimed_by"] == "supervisor"
        assert body["claimed_until"] == until.isoformat()
        assert "supervisor is reviewing" in body["detail"]
    assert not Review.objects.exists()
    assert ReviewClaim.objects.get(recording=recording).user == supervisor  # the holder keeps it

    mine = session_api(supervisor).post(url, {"decision": "approve"}, format="json")
    assert mine.status_code == 201
    assert not ReviewClaim.objects.filter(recording=recording).exists()


@pytest.mark.django_db
def test_an_expired_claim_does_not_block():
    recording = judged_recording()
    holder = UserFactory(username="ana", groups=["Supervisors"])
    ReviewClaim.objects.create(recording=recording, user=holder, expires_at=timezone.now() - timedelta(seconds=1))
    other = UserFactory(username="ben", groups=["Supervisors"])
    review_create(recording=recording, decision="approve", reviewer="ben", user=other)


@pytest.mark.django_db
def test_the_service_refuses_a_user_who_may_not_review(rubric_owner):
    recording = judged_recording()
    with pytest.raises(PermissionDenied):
        review_create(recording=recording, decision="approve", reviewer="owner", user=rubric_owner)
    assert not Review.objects.exists()


@pytest.mark.django_db
def test_a_key_without_review_rights_is_refused_by_the_service_too():
    api_key, _ = new_key("reader")
    with pytest.raises(PermissionDenied):
        review_create(recording=judged_recording(), decision="approve", reviewer="x", api_key=api_key)


@pytest.mark.django_db
def test_the_claim_check_sits_in_the_service_for_every_caller(supervisor):
    recording = judged_recording(status=Recording.Status.IN_REVIEW)
    ReviewClaim.objects.create(recording=recording, user=supervisor, expires_at=timezone.now() + timedelta(minutes=5))
    with pytest.raises(RecordingClaimedError):
        review_create(recording=recording, decision="approve", reviewer="script")


# --- Blind means blind on the API ----------------------------------------------------------------

JUDGE_WORDS = ("JUDGE-QUOTE-SECRET", "JUDGE-RATIONALE-SECRET")


def blind_audit() -> Recording:
    recording = judged_recording(status=Recording.Status.IN_REVIEW, values={"c1": 2, "c2": 5, "c3": 1})
    Recording.objects.filter(pk=recording.pk).update(review_reasons=[Recording.ReviewReason.RANDOM_AUDIT])
    recording.current_run.scores.update(evidence=JUDGE_WORDS[0], rationale=JUDGE_WORDS[1])
    recording.refresh_from_db()
    return recording


@pytest.mark.django_db
def test_a_blind_audit_shows_no_judgment_through_the_api_to_the_supervisor_until_they_review(supervisor):
    recording = blind_audit()
    url = f"/api/recordings/{recording.pk}/"
    client = session_api(supervisor)
    body = client.get(url).json()
    assert body["judgment_hidden"] is True
    assert body["scores"] == [] and body["reviews"] == []
    text = client.get(url).content.decode()
    assert not any(words in text for words in JUDGE_WORDS) and "confidence" not in text

    # Another supervisor's "needs another review" on it is hidden too (it carries values).
    ben = UserFactory(username="ben", groups=["Supervisors"])
    review_create(
        recording=recording, decision="needs_review", reviewer="ben", user=ben,
        criteria=[CriterionAdjustment("c1", adjusted_value=3)],
    )  # fmt: skip
    assert client.get(url).json()["reviews"] == []

    review_create(
        recording=recording, decision="approve", reviewer="supervisor", user=supervisor,
        criteria=[CriterionAdjustment(key, adjusted_value=3) for key in ("c1", "c2", "c3")],
    )  # fmt: skip
    revealed = client.get(url).json()
    assert revealed["judgment_hidden"] is False
    assert [score["value"] for score in revealed["scores"]] == [2, 5, 1]


@pytest.mark.django_db
def test_an_external_systems_key_reads_the_blind_audits_judgment():
    api = key_client(new_key("ccaas", all_sources=True)[1])
    recording = blind_audit()
    body = api.get(f"/api/recordings/{recording.pk}/").json()
    assert body["judgment_hidden"] is False
    assert [score["value"] for score in body["scores"]] == [2, 5, 1]


@pytest.mark.django_db
def test_a_blind_audit_review_through_the_api_session_is_stored_as_blind(supervisor):
    recording = blind_audit()
    response = session_api(supervisor).post(
        f"/api/recordings/{recording.pk}/review/",
        {"decision": "approve", "criteria": [{"criterion_key": key, "adjusted_value": 4} for key in ("c1", "c2", "c3")]},
        format="json",
    )
    # A blind value is the supervisor's own: no "changed" comment is asked for, and it counts as independent.
    assert response.status_code == 201, response.json()
    assert Review.objects.get().blind is True


@pytest.mark.django_db
def test_an_open_calibration_hides_the_judgment_from_its_participants_on_the_api():
    from calibration.selectors import CallSelection
    from calibration.services import calibration_create

    lead = UserFactory(username="lead", groups=["QA leads"])
    ana = UserFactory(username="ana", groups=["Supervisors"])
    ben = UserFactory(username="ben", groups=["Supervisors"])
    outsider = UserFactory(username="zoe", groups=["Supervisors"])
    recording = judged_recording(values={"c1": 2, "c2": 5, "c3": 1})
    calibration_create(
        name="s", rubric=recording.rubric, lead=lead, participants=[ana, ben],
        selection=CallSelection(recording_ids=(recording.pk,)),
    )  # fmt: skip
    url = f"/api/recordings/{recording.pk}/"
    assert session_api(ana).get(url).json()["scores"] == []
    assert len(session_api(outsider).get(url).json()["scores"]) == 3
    assert key_client(new_key("ccaas", all_sources=True)[1]).get(url).json()["judgment_hidden"] is False


@pytest.mark.django_db
def test_a_blind_audit_leaks_nothing_through_the_admin_or_the_scores_drill_down_and_its_csv(supervisor):
    supervisor.is_staff = True  # supervisors browse the admin (create_demo_users makes them staff)
    supervisor.save(update_fields=["is_staff"])
    recording = blind_audit()
    seen = judged_recording(values={"c1": 3}, rubric=recording.rubric)  # an ordinary judged call beside it
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(supervisor)
    slug = recording.rubric.slug
    pages = {
        "score list": "/admin/qa/score/",
        "run list": "/admin/qa/judgerun/",
        "recording": f"/admin/qa/recording/{recording.pk}/change/",
        "drill-down": f"/reports/evidence/scores/?rubric={slug}",
        "drill-down csv": f"/reports/evidence/scores/?rubric={slug}&format=csv",
    }
    seen_score = seen.current_run.scores.first()
    shown = {
        "score list": f"/admin/qa/score/{seen_score.pk}/change/",
        "run list": f"/admin/qa/judgerun/{seen.current_run_id}/change/",
        "recording": recording.external_id,
        "drill-down": seen.external_id,
        "drill-down csv": seen.external_id,
    }
    for name, url in pages.items():
        response = client.get(url)
        assert response.status_code == 200, name
        text = b"".join(response.streaming_content if response.streaming else [response.content]).decode()
        assert not any(words in text for words in JUDGE_WORDS), name
        assert shown[name] in text, name  # the page itself still shows what is not blind
    assert client.get(f"/admin/qa/judgerun/{recording.current_run_id}/change/").status_code == 302  # not found

    # Once they reviewed it, the judgment is theirs to see everywhere.
    review_create(
        recording=recording, decision="approve", reviewer="supervisor", user=supervisor,
        criteria=[CriterionAdjustment(key, adjusted_value=3) for key in ("c1", "c2", "c3")],
    )  # fmt: skip
    blind_score = recording.current_run.scores.first()
    assert f"/admin/qa/score/{blind_score.pk}/change/" in client.get("/admin/qa/score/").content.decode()
    assert JUDGE_WORDS[1] in client.get(f"/admin/qa/score/{blind_score.pk}/change/").content.decode()
