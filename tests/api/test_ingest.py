from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from access.models import Membership, Role
from qa.models import JudgeRun, Recording
from tests.factories import SAMPLE_TRANSCRIPT, RubricFactory, UserFactory, published_rubric
from tests.api.conftest import key_client, new_key

URL = "/api/recordings/"


def payload(rubric, **fields) -> dict:
    return {
        "external_id": "call-1",
        "rubric": rubric.slug,
        "agent": {"id": "a-7", "name": "Marta"},
        "team": "billing",
        "channel": "voice",
        "occurred_at": "2026-01-05T10:00:00Z",
        "transcript": SAMPLE_TRANSCRIPT,
        **fields,
    }


@pytest.mark.django_db
def test_a_new_recording_is_stored_and_its_judgment_enqueued(api, rubric, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = api.post(URL, payload(rubric), format="json")

    assert response.status_code == 201
    body = response.json()
    recording = Recording.objects.get()
    assert body["id"] == recording.pk
    assert body["status"] == Recording.Status.QUEUED
    assert body["rubric"] == rubric.slug and body["rubric_version"] == rubric.version
    assert body["links"]["self"].endswith(f"/api/recordings/{recording.pk}/")
    assert response["Location"] == body["links"]["self"]
    assert body["source"] == "ccaas"  # the key's name
    assert (recording.agent_id, recording.agent_name, recording.language) == ("a-7", "Marta", rubric.language)
    assert recording.transcript == SAMPLE_TRANSCRIPT
    assert recording.runs.get().status == JudgeRun.Status.PENDING
    assert len(callbacks) == 1  # the publish to the worker, after commit


@pytest.mark.django_db
def test_turns_are_rendered_to_the_verbatim_transcript(api, rubric, django_capture_on_commit_callbacks):
    turns = [
        {"speaker": "AGENTE", "text": "Buenas tardes.", "start_ms": 0, "end_ms": 900},
        {"speaker": "CLIENTE", "text": "Hola.", "start_ms": 1000, "end_ms": 1400},
    ]
    data = payload(rubric, transcript=None, turns=turns, agent="a-9", source="speech-export")
    del data["transcript"]
    with django_capture_on_commit_callbacks():
        response = api.post(URL, data, format="json")
    assert response.status_code == 201, response.json()
    recording = Recording.objects.get()
    assert recording.transcript == "AGENTE: Buenas tardes.\nCLIENTE: Hola.\n"
    assert recording.turns[1] == {"speaker": "CLIENTE", "text": "Hola.", "start_ms": 1000, "end_ms": 1400}
    assert (recording.source, recording.agent_id, recording.agent_name) == ("speech-export", "a-9", "")


@pytest.mark.django_db
def test_the_same_post_again_returns_the_stored_recording_without_a_second_run(
    api, rubric, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        first = api.post(URL, payload(rubric), format="json")
        again = api.post(URL, payload(rubric), format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert JudgeRun.objects.count() == 1


@pytest.mark.django_db
def test_the_same_id_with_different_content_is_a_conflict(api, rubric, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        first = api.post(URL, payload(rubric), format="json")
        response = api.post(URL, payload(rubric, team="sales"), format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["detail"]
    assert body["recording"]["id"] == first.json()["id"]
    assert body["recording"]["url"] == first.json()["links"]["self"]
    assert Recording.objects.get().team == "billing"


@pytest.mark.django_db
def test_the_same_id_from_another_source_is_another_recording(api, rubric, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        api.post(URL, payload(rubric), format="json")
        response = api.post(URL, payload(rubric, source="other"), format="json")
    assert response.status_code == 201
    assert Recording.objects.count() == 2


def _future() -> str:
    return (timezone.now() + timedelta(days=1)).isoformat()


BAD_BODIES = {
    "missing external_id": (lambda data: data.pop("external_id"), "external_id"),
    "blank external_id": (lambda data: data.update(external_id=" "), "external_id"),
    "external_id of the wrong type": (lambda data: data.update(external_id={"a": 1}), "external_id"),
    "external_id a number, not a string": (lambda data: data.update(external_id=42), "external_id"),
    "a transcript that is a number": (lambda data: data.update(transcript=1.5), "transcript"),
    "neither transcript nor turns": (lambda data: data.pop("transcript"), "transcript"),
    "both transcript and turns": (
        lambda data: data.update(turns=[{"speaker": "A", "text": "hola"}]),
        "transcript",
    ),
    "a summary instead of a transcript": (
        lambda data: data.update(transcript="The customer called about a double charge and was helped."),
        "transcript",
    ),
    "an empty transcript": (lambda data: data.update(transcript=""), "transcript"),
    "empty turns": (lambda data: (data.pop("transcript"), data.update(turns=[])), "turns"),
    "turns of the wrong type": (lambda data: (data.pop("transcript"), data.update(turns="AGENTE: hola")), "turns"),
    "unknown rubric": (lambda data: data.update(rubric="nope"), "rubric"),
    "occurred_at in the future": (lambda data: data.update(occurred_at=_future()), "occurred_at"),
    "occurred_at unparsable": (lambda data: data.update(occurred_at="yesterday"), "occurred_at"),
    "unknown channel": (lambda data: data.update(channel="fax"), "channel"),
    "agent of the wrong type": (lambda data: data.update(agent=7), "agent"),
    "agent without an id": (lambda data: data.update(agent={"name": "Marta"}), "agent"),
    "negative duration": (lambda data: data.update(duration_seconds=-1), "duration_seconds"),
    "team too long": (lambda data: data.update(team="x" * 101), "team"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_bad_input_is_a_400_on_its_field_and_nothing_is_stored(api, rubric, case):
    change, field = case
    data = payload(rubric)
    change(data)
    response = api.post(URL, data, format="json")
    assert response.status_code == 400
    errors = response.json()
    assert list(errors) == [field]
    assert isinstance(errors[field], (str, dict)) and errors[field]
    assert not Recording.objects.exists() and not JudgeRun.objects.exists()


@pytest.mark.django_db
def test_each_bad_turn_is_named_by_its_position(api, rubric):
    data = payload(rubric, turns=[{"speaker": "A", "text": "hola"}, {"speaker": "B"}, {"speaker": "C", "text": 5}])
    del data["transcript"]
    response = api.post(URL, data, format="json")
    assert response.status_code == 400
    # Only the bad turns; a number is not a text (the schema says string).
    assert response.json() == {"turns": {"1": {"text": "This field is required."}, "2": {"text": "Not a valid string."}}}


@pytest.mark.django_db
def test_a_turn_the_service_refuses_is_named_by_its_position(api, rubric):
    data = payload(rubric, turns=[{"speaker": "A", "text": "hola"}, {"speaker": "B", "text": "   "}])
    del data["transcript"]
    response = api.post(URL, data, format="json")
    assert response.status_code == 400
    assert list(response.json()["turns"]) == ["1"]


@pytest.mark.django_db
def test_a_rubric_without_a_published_version_is_refused(api):
    draft = RubricFactory(slug="draft-only")
    response = api.post(URL, payload(draft), format="json")
    assert response.status_code == 400
    assert "draft-only" in response.json()["rubric"]


@pytest.mark.django_db
def test_the_latest_published_version_is_used(api, django_capture_on_commit_callbacks):
    from rubrics.services import rubric_new_version, rubric_publish

    first = published_rubric(slug="support")
    second = rubric_publish(rubric=rubric_new_version(rubric=first))
    with django_capture_on_commit_callbacks():
        response = api.post(URL, payload(second), format="json")
    assert response.json()["rubric_version"] == second.version == 2


@pytest.mark.django_db
@pytest.mark.parametrize("body", ['{"external_id": "x",', "[1, 2]", '"just a string"'])
def test_malformed_or_non_object_json_is_a_400(api, rubric, body):
    response = api.post(URL, body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()
    assert not Recording.objects.exists()


@pytest.mark.django_db
def test_json_nested_too_deeply_is_a_400_not_a_crash(api):
    response = api.post(URL, "[" * 100_000 + "]" * 100_000, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON parse error")


@pytest.mark.django_db
def test_malformed_json_says_so(api):
    response = api.post(URL, '{"external_id": ', content_type="application/json")
    assert response.json()["detail"].startswith("JSON parse error")


@pytest.mark.django_db
def test_form_encoded_bodies_are_refused(api, rubric):
    # JSON, or multipart/form-data for audio (tests/transcribe/test_api.py); nothing else.
    response = api.post(URL, "external_id=x", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert not Recording.objects.exists()


@pytest.mark.django_db
@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
def test_a_body_over_the_limit_is_a_413_json(api, rubric):
    lines = "".join(f"AGENTE: línea {n} de una llamada muy larga.\n" for n in range(1000))
    response = api.post(URL, payload(rubric, transcript=lines), format="json")
    assert response.status_code == 413
    assert "10000" in response.json()["detail"]
    assert not Recording.objects.exists()


@pytest.mark.django_db
def test_a_session_allowed_to_add_recordings_posts_with_source_web_by_default(
    rubric, django_capture_on_commit_callbacks
):
    user = UserFactory()
    user.user_permissions.add(Permission.objects.get(codename="add_recording", content_type__app_label="qa"))
    # Posting needs the rubric's workspace too: a member of it (here with a role that has no posting of its own).
    Membership.objects.create(user=user, workspace=rubric.workspace, role=Role.AGENT, agent_id="nobody")
    client = APIClient()
    client.force_login(user)
    with django_capture_on_commit_callbacks():
        response = client.post(URL, payload(rubric), format="json")
    assert response.status_code == 201
    assert Recording.objects.get().source == "web"


@pytest.mark.django_db
@pytest.mark.parametrize(("field", "value"), [("external_id", "call-1\u001b[2K"), ("source", "crm\r\nX-Forged: 1")])
def test_control_characters_in_identifiers_are_a_400_naming_the_field(rubric, field, value):
    # A key for all sources, which may name any source (tests/api/test_key_sources.py): the
    # identifier's own check answers.
    api = key_client(new_key("hub", all_sources=True)[1])
    response = api.post(URL, payload(rubric, **{field: value}), format="json")

    assert response.status_code == 400
    assert "control characters" in response.json()[field]
    assert not Recording.objects.exists()
