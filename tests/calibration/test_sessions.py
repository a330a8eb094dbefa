"""A calibration session from creation to agreed values, through the services and the API."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from core.errors import InvalidInputError
from qa.models import Recording
from calibration.selectors import CallSelection, session_results
from calibration.services import (
    SessionStateError,
    agreed_value_set,
    calibration_close,
    calibration_create,
)
from reviews.models import CalibrationEntry, CalibrationSession, Review
from tests.calibration.conftest import score
from tests.factories import judged_recording, published_rubric


def client_for(user) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(user)
    return client


def test_a_session_from_creation_to_agreed_values(session, lead, supervisors, calls):
    ana, ben, eva = supervisors
    # c1: ana and ben agree on every call, eva is one point harsher except on call 4 (three below).
    for call, (a, b, e) in zip(calls, [(1, 1, 1), (2, 2, 1), (3, 3, 2), (5, 5, 2)]):
        score(session, ana, call, a)
        score(session, ben, call, b)
        score(session, eva, call, e, comment="too harsh?" if call == calls[3] else "")
    score(session, ana, calls[0], 2)  # an author may change their entry while the session is open
    assert CalibrationEntry.objects.filter(participant=ana).count() == 4
    # Entries are not reviews: the calls stay where the judge put them.
    assert not Review.objects.exists()
    assert {call.status for call in Recording.objects.filter(pk__in=[c.pk for c in calls])} == {"judged"}

    calibration_close(session=session, user=lead)
    with pytest.raises(SessionStateError):
        score(session, ana, calls[0], 3)

    for call, value in zip(calls, (1, 2, 3, 5)):
        agreed_value_set(
            session=session, recording_id=call.pk, criterion_key="c1", value=value, not_applicable=False,
            note="discussed", user=lead,
        )  # fmt: skip
    results = session_results(session=session)
    c1 = results.criteria[0]
    # Call 4 (spread 3) is the only one to discuss, and comes first.
    assert [row.call.recording_id for row in c1.rows][0] == calls[3].pk
    assert c1.rows[0].to_discuss and not any(row.to_discuss for row in c1.rows[1:])
    assert [value.value for value in c1.rows[0].values] == [5, 5, 2]  # ana, ben, eva
    assert c1.rows[0].judge.value == 4
    # Pairs per call: (2,1,1) (2,2,1) (3,3,2) (5,5,2) -> 12 pairs, exact: ben-eva, ana-ben x3 = 4.
    assert c1.agreement.pairs == 12
    assert c1.agreement.exact_agreement == 4 / 12
    # eva sits below the median on three calls: the harsh one.
    bias = c1.agreement.bias
    assert bias[eva.pk] < 0 < bias[ana.pk] + 1e-9 and bias[ana.pk] == pytest.approx(0.25)
    assert bias[eva.pk] == pytest.approx((0 - 1 - 1 - 3) / 4)
    # The judge gave 1, 2, 3, 4 against agreed 1, 2, 3, 5.
    assert c1.judge_vs_agreed_n == 4
    assert c1.judge_vs_agreed_mae == pytest.approx(0.25)
    assert results.comments[session.calls.get(recording=calls[3]).pk] == [("eva", "too harsh?")]


def test_the_api_from_entries_to_close_with_the_issues_shape(session, lead, supervisors, calls):
    ana, ben, _eva = supervisors
    url = f"/api/calibrations/{session.pk}/"
    body = {
        "recording": calls[0].pk,
        "criteria": [{"criterion_key": "c1", "value": 4}, {"criterion_key": "c2", "not_applicable": True}],
        "comment": "clear greeting",
    }
    response = client_for(ana).post(f"{url}entries/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json()["criteria"] == [
        {"criterion_key": "c1", "value": 4, "not_applicable": False},
        {"criterion_key": "c2", "value": None, "not_applicable": True},
    ]
    body["criteria"][0]["value"] = 3
    assert client_for(ben).post(f"{url}entries/", body, content_type="application/json").status_code == 201

    # Open: a participant sees their own progress only; no counts, since per criterion they tell who
    # marked it N/A. The lead sees the counts, no figures.
    own = client_for(ana).get(url).json()
    assert set(own) == {"id", "name", "status", "rubric", "participants", "criteria", "own_progress"}
    assert own["status"] == "open" and own["participants"] == ["ana", "ben", "eva"]
    assert own["criteria"] == [] and own["own_progress"] == {"scored": 1, "calls": 4}
    open_detail = client_for(lead).get(url).json()
    assert open_detail["own_progress"] is None
    c1 = open_detail["criteria"][0]
    assert set(c1) == {
        "criterion_key", "n_recordings", "n_raters", "exact_agreement", "within_one", "mean_pairwise_qwk", "alpha",
        "judge_vs_agreed_qwk", "judge_vs_agreed_mae",
    }  # fmt: skip
    assert (c1["n_recordings"], c1["n_raters"], c1["exact_agreement"], c1["alpha"]) == (1, 2, None, None)

    assert client_for(ana).post(f"{url}close/").status_code == 403  # a supervisor cannot close
    closed = client_for(lead).post(f"{url}close/")
    assert closed.status_code == 200 and closed.json()["status"] == "closed"
    assert closed.json()["criteria"][0]["exact_agreement"] == 0.0
    assert closed.json()["criteria"][0]["within_one"] == 1.0
    assert client_for(lead).post(f"{url}close/").status_code == 409
    late = client_for(ana).post(f"{url}entries/", body, content_type="application/json")
    assert late.status_code == 409 and "closed" in late.json()["detail"]
    assert [item["id"] for item in client_for(ben).get("/api/calibrations/").json()] == [session.pk]


def test_entries_are_refused_whole_with_the_problem_named(session, supervisors, calls, lead):
    ana = supervisors[0]
    url = f"/api/calibrations/{session.pk}/entries/"
    bad = {"recording": calls[0].pk, "criteria": [{"criterion_key": "c1", "value": 9}]}
    response = client_for(ana).post(url, bad, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "criteria": {"0": "'c1' must be between 1 and 5.", "c2": "'c2' needs a value, or \"does not apply\"."}
    }
    other = judged_recording(rubric=session.rubric)
    response = client_for(ana).post(url, {"recording": other.pk, "criteria": []}, content_type="application/json")
    assert response.status_code == 400 and str(other.pk) in response.json()["recording"]
    # The lead is no participant: 403, and nothing stored.
    good = {
        "recording": calls[0].pk,
        "criteria": [{"criterion_key": "c1", "value": 3}, {"criterion_key": "c2", "value": 2}],
    }
    assert client_for(lead).post(url, good, content_type="application/json").status_code == 403
    assert not CalibrationEntry.objects.exists()


def test_a_supervisor_cannot_create_a_session(supervisors, cal_rubric, calls):
    with pytest.raises(InvalidInputError) as error:
        calibration_create(
            name="mine", rubric=cal_rubric, lead=supervisors[0], participants=supervisors,
            selection=CallSelection(sample=2, seed=1),
        )  # fmt: skip
    assert "lead" in error.value.errors
    assert not CalibrationSession.objects.exists()


def test_a_seeded_sample_draws_the_same_calls_again(lead, supervisors, cal_rubric, calls):
    def draw(seed: int) -> list[int]:
        session = calibration_create(
            name="s", rubric=cal_rubric, lead=lead, participants=supervisors[:2],
            selection=CallSelection(sample=2, seed=seed),
        )  # fmt: skip
        return sorted(session.calls.values_list("recording_id", flat=True))

    first = draw(7)
    assert first == draw(7) and len(first) == 2 and set(first) <= {call.pk for call in calls}
    with pytest.raises(InvalidInputError, match="Only 4 judged calls match"):
        draw_big = CallSelection(sample=5, seed=7)
        calibration_create(name="s", rubric=cal_rubric, lead=lead, participants=supervisors[:2], selection=draw_big)


def test_the_command_prints_the_api_path_last(lead, supervisors, cal_rubric, calls):
    out = StringIO()
    call_command(
        "calibration_create", "--rubric", "care", "--name", "From a script", "--sample", "3", "--seed", "5",
        "--participants", "ana", "ben", "--lead", "lead", stdout=out,
    )  # fmt: skip
    session = CalibrationSession.objects.get()
    assert out.getvalue().splitlines()[-1] == f"/api/calibrations/{session.pk}/"
    assert (session.calls.count(), session.selection) == (3, {"sample": 3, "seed": 5})
    with pytest.raises(CommandError, match="No such user: zoe"):
        call_command("calibration_create", "--rubric", "care", "--name", "x", "--recordings", str(calls[0].pk),
                     "--participants", "ana", "zoe", "--lead", "lead")  # fmt: skip


def test_the_calibration_api_is_in_the_openapi_schema(lead):
    schema = client_for(lead).get("/api/schema/?format=json").json()
    assert {
        "/api/calibrations/", "/api/calibrations/{id}/", "/api/calibrations/{id}/entries/",
        "/api/calibrations/{id}/close/",
    } <= set(schema["paths"])  # fmt: skip
    detail = schema["components"]["schemas"]["SessionDetail"]["properties"]
    assert set(detail) == {"id", "name", "status", "rubric", "participants", "criteria", "own_progress"}


def test_every_matching_call_is_taken_up_to_200(lead, supervisors, cal_rubric, calls, monkeypatch):
    from calibration import services

    assert services.MAX_CALLS == 200
    everything = calibration_create(
        name="all", rubric=cal_rubric, lead=lead, participants=supervisors[:2], selection=CallSelection()
    )
    assert everything.calls.count() == 4
    monkeypatch.setattr(services, "MAX_CALLS", 3)
    with pytest.raises(InvalidInputError, match="4 calls match; a session takes at most 3"):
        calibration_create(
            name="all", rubric=cal_rubric, lead=lead, participants=supervisors[:2], selection=CallSelection()
        )


def test_a_new_version_with_no_calls_yet_says_why_none_match(lead, supervisors, cal_rubric, calls):
    newer = published_rubric(criteria=2, slug=cal_rubric.slug, version=cal_rubric.version + 1, name=cal_rubric.name)
    with pytest.raises(InvalidInputError) as refused:
        calibration_create(
            name="s", rubric=newer, lead=lead, participants=supervisors[:2], selection=CallSelection(sample=2, seed=1)
        )
    message = refused.value.errors["recordings"]
    assert message.startswith("Only 0 judged calls match; a sample of 2 is not possible.")
    assert f"Only calls judged with v{newer.version}, the published version, can be calibrated on it; 4 matching" in message
