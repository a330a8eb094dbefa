from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from qa.models import Recording
from reviews.models import Review
from tests.factories import RecordingFactory, UserFactory, judged_recording, published_rubric


def url(recording: Recording) -> str:
    return f"/api/recordings/{recording.pk}/review/"


@pytest.mark.django_db
def test_a_key_with_review_rights_posts_a_review_recorded_with_the_key(review_api, review_key):
    recording = judged_recording(values={"c1": 4, "c2": 2})
    response = review_api.post(
        url(recording),
        {
            "reviewer": "supervisor-1",
            "decision": "approve",
            "adjusted_mean": 3.8,
            "comment": "Fine",
            "criteria": [{"criterion_key": "c2", "adjusted_value": 3, "comment": "Partly met at 02:10"}],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    review = Review.objects.get()
    assert body["id"] == review.pk
    assert (review.reviewer, review.api_key, review.user, review.adjusted_mean) == (
        "supervisor-1",
        review_key[0],
        None,
        3.8,
    )
    assert body["api_key"] == "qa-tool"
    assert body["criteria"] == [
        {
            "criterion_key": "c2",
            "adjusted_value": 3,
            "not_applicable": False,
            "rejected": False,
            "comment": "Partly met at 02:10",
        }
    ]
    recording.refresh_from_db()
    assert recording.status == Recording.Status.REVIEWED


@pytest.mark.django_db
def test_the_path_without_slash_works_too(review_api):
    recording = judged_recording()
    response = review_api.post(
        f"/recordings/{recording.pk}/review", {"reviewer": "supervisor-1", "decision": "approve"}, format="json"
    )
    assert response.status_code == 201
    assert Review.objects.get().reviewer == "supervisor-1"


@pytest.mark.django_db
def test_a_key_must_name_the_reviewer(review_api):
    recording = judged_recording()
    response = review_api.post(url(recording), {"decision": "approve"}, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["reviewer"]


@pytest.mark.django_db
def test_a_key_without_review_rights_is_forbidden(api):
    recording = judged_recording()
    response = api.post(url(recording), {"reviewer": "x", "decision": "approve"}, format="json")
    assert response.status_code == 403
    assert response.json()["detail"]
    assert not Review.objects.exists()


@pytest.mark.django_db
def test_no_key_is_a_401():
    recording = judged_recording()
    response = APIClient().post(url(recording), {"reviewer": "x", "decision": "approve"}, format="json")
    assert response.status_code == 401


@pytest.mark.django_db
def test_a_supervisor_session_reviews_as_the_logged_in_user_with_csrf(supervisor):
    recording = judged_recording()
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(supervisor)
    marked = {"criterion_key": "c1", "rejected": True, "comment": "The quote is not in the call."}
    body = {"reviewer": "someone-else", "decision": "reject", "criteria": [marked]}

    assert client.post(url(recording), body, format="json").status_code == 403  # no CSRF token

    secret = "a" * 32  # Django checks that the header repeats the cookie's secret
    client.cookies["csrftoken"] = secret
    response = client.post(url(recording), body, format="json", HTTP_X_CSRFTOKEN=secret)
    assert response.status_code == 201, response.json()
    review = Review.objects.get()
    assert (review.reviewer, review.user, review.api_key) == ("supervisor", supervisor, None)


@pytest.mark.django_db
def test_a_session_user_who_is_not_a_supervisor_is_forbidden():
    recording = judged_recording()
    client = APIClient()
    client.force_login(UserFactory(is_staff=True))
    assert client.post(url(recording), {"decision": "approve"}, format="json").status_code == 403


@pytest.mark.django_db
def test_a_recording_not_judged_yet_is_a_conflict(review_api):
    recording = RecordingFactory(status=Recording.Status.QUEUED)
    response = review_api.post(url(recording), {"reviewer": "s", "decision": "approve"}, format="json")
    assert response.status_code == 409
    assert response.json()["detail"]


@pytest.mark.django_db
def test_an_unknown_recording_is_a_404(review_api):
    response = review_api.post(
        "/api/recordings/999999/review/", {"reviewer": "s", "decision": "approve"}, format="json"
    )
    assert response.status_code == 404


BAD_REVIEWS = {
    "unknown decision": ({"decision": "maybe"}, "decision"),
    "missing decision": ({"decision": None}, "decision"),
    "adjusted_mean above the scale": ({"adjusted_mean": 7}, "adjusted_mean"),
    "adjusted_mean below the scale": ({"adjusted_mean": 0.5}, "adjusted_mean"),
    "adjusted_mean of the wrong type": ({"adjusted_mean": "high"}, "adjusted_mean"),
    "adjusted_value outside the scale": (
        {"criteria": [{"criterion_key": "c1", "adjusted_value": 9, "comment": "x"}]},
        "criteria",
    ),
    "unknown criterion key": ({"criteria": [{"criterion_key": "nope", "adjusted_value": 3}]}, "criteria"),
    "criteria of the wrong type": ({"criteria": "c1=3"}, "criteria"),
    "a changed value without a comment": ({"criteria": [{"criterion_key": "c1", "adjusted_value": 2}]}, "criteria"),
    "not_applicable of the wrong type": (
        {"criteria": [{"criterion_key": "c1", "not_applicable": "perhaps"}]},
        "criteria",
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", BAD_REVIEWS.values(), ids=BAD_REVIEWS.keys())
def test_bad_reviews_are_a_400_on_their_field_and_nothing_is_stored(review_api, case):
    change, field = case
    recording = judged_recording(values={"c1": 4})
    body = {"reviewer": "s", "decision": "approve", **change}
    if body["decision"] is None:
        del body["decision"]
    response = review_api.post(url(recording), body, format="json")
    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert not Review.objects.exists()
    recording.refresh_from_db()
    assert recording.status == Recording.Status.JUDGED


@pytest.mark.django_db
def test_each_bad_criterion_is_named_by_its_position(review_api):
    recording = judged_recording(values={"c1": 4})
    response = review_api.post(
        url(recording),
        {
            "reviewer": "s",
            "decision": "approve",
            "criteria": [
                {"criterion_key": "c1"},
                {"criterion_key": "nope", "adjusted_value": 3},
                {"criterion_key": "c2", "adjusted_value": 9, "comment": "x"},
            ],
        },
        format="json",
    )
    assert response.status_code == 400
    assert set(response.json()["criteria"]) == {"1", "2"}


@pytest.mark.django_db
def test_not_applicable_round_trips(review_api):
    recording = judged_recording(values={"c1": 4}, rubric=published_rubric(not_applicable=("c1",)))
    entry = {"criterion_key": "c1", "not_applicable": True, "comment": "The customer asked for a transfer."}
    response = review_api.post(
        url(recording), {"reviewer": "s", "decision": "approve", "criteria": [entry]}, format="json"
    )
    assert response.status_code == 201, response.json()
    expected = [{**entry, "adjusted_value": None, "rejected": False}]
    assert response.json()["criteria"] == expected
    assert Review.objects.get().criteria.get().not_applicable
    [review] = review_api.get(f"/api/recordings/{recording.pk}/").json()["reviews"]
    assert review["criteria"] == expected


@pytest.mark.django_db
def test_not_applicable_is_refused_for_a_criterion_without_that_exception(review_api):
    recording = judged_recording(values={"c1": 4}, rubric=published_rubric(not_applicable=("c2",)))
    body = {
        "reviewer": "s",
        "decision": "approve",
        "criteria": [{"criterion_key": "c1", "not_applicable": True, "comment": "No aplica."}],
    }
    response = review_api.post(url(recording), body, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "criteria": {"0": "“Criterion 1” cannot be marked not applicable: its rubric lists no \"not applicable\" exception."}
    }
    assert not Review.objects.exists()


@pytest.mark.django_db
def test_a_reject_with_nothing_marked_is_a_400_and_a_marked_one_keeps_its_reason(review_api):
    recording = judged_recording(values={"c1": 4})
    response = review_api.post(url(recording), {"reviewer": "s", "decision": "reject"}, format="json")
    assert response.status_code == 400
    assert "A reject must say what was wrong" in response.json()["decision"]
    assert not Review.objects.exists()

    body = {
        "reviewer": "s",
        "decision": "reject",
        "reject_reason": "transcript_problem",
        "criteria": [{"criterion_key": "c1", "rejected": True, "comment": "The ASR dropped the greeting."}],
    }
    response = review_api.post(url(recording), body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["reject_reason"] == "transcript_problem"


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["reviewer", "comment"])
def test_a_number_where_the_schema_says_string_is_a_400_on_its_field(review_api, field):
    """DRF's CharField would store 0 as "0"; the schema says string, so a number is refused."""
    recording = judged_recording()
    body = {"reviewer": "supervisor-1", "decision": "approve", field: 0}
    response = review_api.post(url(recording), body, format="json")
    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert not Review.objects.exists()
