"""POST /api/recordings/batch/: each recording accepted or refused on its own with the single post's
rules, stored per chunk in one transaction with one message to the broker, nothing half-stored."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import override_settings
from rest_framework.test import APIClient

import qa.services
from access.models import DEFAULT_WORKSPACE, Role, Workspace
from access.services import member_add
from qa.models import Judge, JudgeRun, Recording
from tests.api.conftest import key_client, new_key
from tests.api.test_ingest import payload
from tests.api.test_redis_down import own_redis  # noqa: F401 (a fixture)
from tests.factories import SAMPLE_TRANSCRIPT, UserFactory, published_rubric

URL = "/api/recordings/batch/"


def items(rubric, count: int, **fields) -> list[dict]:
    return [payload(rubric, external_id=f"call-{index}", **fields) for index in range(count)]


def results(response) -> list[dict]:
    assert response.status_code == 200, response.content
    body = response.json()
    assert [result["index"] for result in body["results"]] == list(range(len(body["results"])))
    return body["results"]


def stored_with_one_pending_run(external_id: str) -> Recording:
    recording = Recording.objects.get(external_id=external_id)
    assert recording.status == Recording.Status.QUEUED
    assert recording.runs.get().status == JudgeRun.Status.PENDING
    return recording


@pytest.mark.django_db
def test_each_recording_is_stored_with_a_pending_run_and_one_message_per_chunk(
    api, rubric, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        answer = results(api.post(URL, {"recordings": items(rubric, 3)}, format="json"))

    assert [result["status"] for result in answer] == [201, 201, 201]
    for index, result in enumerate(answer):
        recording = stored_with_one_pending_run(f"call-{index}")
        assert result["recording"]["id"] == recording.pk
        assert result["recording"]["url"].endswith(f"/api/recordings/{recording.pk}/")
        assert result["recording"]["status"] == Recording.Status.QUEUED
        # The same values a single post stores.
        assert (recording.source, recording.agent_id, recording.team) == ("ccaas", "a-7", "billing")
        assert recording.transcript == SAMPLE_TRANSCRIPT and recording.language == rubric.language
    assert len(callbacks) == 1  # one publish for the chunk's three runs


@pytest.mark.django_db
def test_a_bad_item_is_refused_with_its_index_and_does_not_stop_the_others(
    api, rubric, django_capture_on_commit_callbacks
):
    batch = items(rubric, 4)
    batch[1]["transcript"] = "The customer called about a double charge."  # a summary, refused by the service
    batch[2] = {**batch[2], "rubric": "nope", "channel": "fax"}  # refused by the field checks
    del batch[3]["external_id"]
    with django_capture_on_commit_callbacks():
        answer = results(api.post(URL, {"recordings": batch + ["not an object"]}, format="json"))

    assert [result["status"] for result in answer] == [201, 400, 400, 400, 400]
    assert list(answer[1]["errors"]) == ["transcript"]
    assert answer[2]["errors"] == {"rubric": "No published rubric 'nope'.", "channel": '"fax" is not a valid choice.'}
    assert answer[3]["errors"] == {"external_id": "This field is required."}
    assert answer[4]["errors"] == {"non_field_errors": "Invalid data. Expected a dictionary, but got str."}
    assert list(Recording.objects.values_list("external_id", flat=True)) == ["call-0"]
    assert JudgeRun.objects.count() == 1


@pytest.mark.django_db
def test_each_item_answers_as_a_single_post_would_the_same_errors_included(api, rubric):
    """The batch and the single post share their checks: the same bad body, the same 400."""
    bad = payload(rubric, turns=[{"speaker": "A", "text": "hola"}, {"speaker": "B"}], agent={"name": "x"})
    del bad["transcript"]
    single = api.post("/api/recordings/", bad, format="json")
    assert single.status_code == 400
    [result] = results(api.post(URL, {"recordings": [bad]}, format="json"))
    assert result["errors"] == single.json() == {
        "agent": {"id": "This field is required."},
        "turns": {"1": {"text": "This field is required."}},
    }


@pytest.mark.django_db
def test_resends_are_idempotent_per_item_and_conflicts_are_409s(api, rubric, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        first = results(api.post(URL, {"recordings": items(rubric, 2)}, format="json"))
        again = items(rubric, 3)
        again[1]["team"] = "sales"  # other content for call-1
        answer = results(api.post(URL, {"recordings": again}, format="json"))

    assert [result["status"] for result in answer] == [200, 409, 201]
    assert answer[0]["recording"]["id"] == first[0]["recording"]["id"]
    assert answer[1]["recording"]["id"] == first[1]["recording"]["id"]
    assert "already exists with different content" in answer[1]["detail"]
    assert Recording.objects.get(external_id="call-1").team == "billing"  # unchanged
    assert Recording.objects.count() == 3 and JudgeRun.objects.count() == 3  # no second run for a resend


@pytest.mark.django_db
def test_a_single_post_and_a_batch_see_each_others_recordings(api, rubric, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        single = api.post("/api/recordings/", payload(rubric, external_id="call-0"), format="json")
        [result] = results(api.post(URL, {"recordings": items(rubric, 1)}, format="json"))
        conflict = api.post("/api/recordings/", payload(rubric, external_id="call-0", team="sales"), format="json")
    assert (single.status_code, result["status"], conflict.status_code) == (201, 200, 409)
    assert result["recording"]["id"] == single.json()["id"]


@pytest.mark.django_db
@pytest.mark.parametrize("chunk_size", [100, 2])  # duplicates in one chunk, and across chunks
def test_duplicates_within_one_batch_are_a_resend_or_a_conflict(
    api, rubric, monkeypatch, chunk_size, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(qa.services, "CHUNK_SIZE", chunk_size)
    batch = [
        payload(rubric, external_id="a"),
        payload(rubric, external_id="b"),
        payload(rubric, external_id="a"),  # the same content again
        payload(rubric, external_id="a", team="sales"),  # other content
        payload(rubric, external_id="a", source="other"),  # another source: another recording
    ]
    with django_capture_on_commit_callbacks():
        answer = results(api.post(URL, {"recordings": batch}, format="json"))

    assert [result["status"] for result in answer] == [201, 201, 200, 409, 201]
    assert answer[2]["recording"]["id"] == answer[3]["recording"]["id"] == answer[0]["recording"]["id"]
    assert Recording.objects.count() == 3 and JudgeRun.objects.count() == 3
    assert Recording.objects.get(source="ccaas", external_id="a").team == "billing"


@pytest.mark.django_db
def test_one_transaction_and_one_message_per_chunk(api, rubric, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(qa.services, "CHUNK_SIZE", 2)
    with django_capture_on_commit_callbacks() as callbacks:
        answer = results(api.post(URL, {"recordings": items(rubric, 5)}, format="json"))
    assert [result["status"] for result in answer] == [201] * 5
    assert len(callbacks) == 3  # chunks of 2, 2 and 1


@pytest.mark.django_db
def test_a_database_error_mid_chunk_stores_nothing_of_that_chunk_and_the_others_go_on(
    api, rubric, monkeypatch, django_capture_on_commit_callbacks
):
    """A real PostgreSQL error after the chunk's recordings were inserted, while inserting their runs:
    the chunk's transaction rolls back whole, the other chunks are stored, and the answer says which."""
    monkeypatch.setattr(qa.services, "CHUNK_SIZE", 2)
    with connection.cursor() as cursor:  # dropped with the test's transaction
        cursor.execute(
            """
            CREATE FUNCTION refuse_boom() RETURNS trigger AS $$
            BEGIN
                IF (SELECT external_id FROM qa_recording WHERE id = NEW.recording_id) = 'boom' THEN
                    RAISE EXCEPTION 'refused by the test';
                END IF;
                RETURN NEW;
            END $$ LANGUAGE plpgsql;
            CREATE TRIGGER refuse_boom BEFORE INSERT ON qa_judgerun FOR EACH ROW EXECUTE FUNCTION refuse_boom();
            """
        )
    batch = [payload(rubric, external_id=name) for name in ("a", "b", "c", "boom", "d")]
    with django_capture_on_commit_callbacks() as callbacks:
        answer = results(api.post(URL, {"recordings": batch}, format="json"))

    assert [result["status"] for result in answer] == [201, 201, 503, 503, 201]
    assert "Send it again" in answer[2]["detail"]
    assert sorted(Recording.objects.values_list("external_id", flat=True)) == ["a", "b", "d"]
    assert JudgeRun.objects.count() == 3
    for name in ("a", "b", "d"):
        stored_with_one_pending_run(name)
    assert len(callbacks) == 2  # nothing published for the chunk that was not stored


def _big_batch(rubric, count: int, size: int) -> list[dict]:
    turn = "AGENTE: Buenas tardes, le atiende Marta del servicio de atención al cliente, ¿en qué puedo ayudarle?\n"
    text = turn * (size // len(turn.encode()) + 1)
    return [payload(rubric, external_id=f"big-{index}", transcript=f"CLIENTE: {index}\n{text}") for index in range(count)]


@pytest.mark.django_db
def test_500_recordings_of_6_kb_fit_the_default_body_limit(api, rubric, settings, django_capture_on_commit_callbacks):
    body = json.dumps({"recordings": _big_batch(rubric, 500, 6000)})  # escaped as most clients send it
    assert len(body) > 3_000_000
    with django_capture_on_commit_callbacks() as callbacks:
        answer = results(api.post(URL, body, content_type="application/json"))
    assert [result["status"] for result in answer] == [201] * 500
    assert Recording.objects.count() == JudgeRun.objects.count() == 500
    assert len(callbacks) == 5


@pytest.mark.django_db
def test_more_than_500_is_a_400_and_nothing_is_stored(api, rubric):
    response = api.post(URL, {"recordings": items(rubric, 501)}, format="json")
    assert response.status_code == 400
    assert response.json() == {"recordings": "Send at most 500 recordings in one request; this one has 501."}
    assert not Recording.objects.exists()


@pytest.mark.django_db
@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100_000)
def test_a_body_over_the_limit_is_a_413_and_nothing_is_stored(api, rubric):
    response = api.post(URL, {"recordings": _big_batch(rubric, 20, 6000)}, format="json")
    assert response.status_code == 413
    assert "100000" in response.json()["detail"]
    assert not Recording.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], 'Send an object, {"recordings": [...]}, not a bare list.'),
        ({"items": []}, 'Send an object, {"recordings": [...]}.'),
        ({"recordings": []}, "Send a non-empty list of recordings."),
        ({"recordings": {"external_id": "x"}}, "Send a non-empty list of recordings."),
        ("just a string", 'Send an object, {"recordings": [...]}.'),
    ],
)
def test_a_body_that_is_not_a_list_of_recordings_is_a_400_naming_it(api, body, message):
    response = api.post(URL, body, format="json")
    assert response.status_code == 400
    assert response.json() == {"recordings": message}


@pytest.mark.django_db
def test_the_permissions_are_the_single_posts(rubric, django_capture_on_commit_callbacks):
    assert APIClient().post(URL, {"recordings": items(rubric, 1)}, format="json").status_code == 401
    user = UserFactory()
    client = APIClient()
    client.force_login(user)
    assert client.post(URL, {"recordings": items(rubric, 1)}, format="json").status_code == 403
    user.user_permissions.add(Permission.objects.get(codename="add_recording", content_type__app_label="qa"))
    client.force_login(user)
    # A capability alone reaches no workspace: the rubric is none of this person's.
    assert results(client.post(URL, {"recordings": items(rubric, 1)}, format="json"))[0]["status"] == 400
    member_add(user=user, workspace=Workspace.objects.get(slug=DEFAULT_WORKSPACE), role=Role.RUBRIC_OWNER)
    client.force_login(user)
    with django_capture_on_commit_callbacks():
        [result] = results(client.post(URL, {"recordings": items(rubric, 1)}, format="json"))
    assert result["status"] == 201 and Recording.objects.get().source == "web"
    assert not Recording.objects.filter(source="ccaas").exists()


@pytest.mark.django_db
def test_the_per_key_throttle_counts_batches_like_single_posts(api_key, rubric, settings, monkeypatch):
    from core.api.throttling import ApiKeyRateThrottle

    monkeypatch.setattr(ApiKeyRateThrottle, "rate", "1/min", raising=False)
    client = key_client(api_key[1])
    body = {"recordings": [{**payload(rubric), "rubric": "nope"}]}  # refused: nothing to publish
    assert client.post(URL, body, format="json").status_code == 200
    assert client.post(URL, body, format="json").status_code == 429


@pytest.mark.django_db
def test_the_schema_documents_the_batch(rubric):
    schema = APIClient().get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/recordings/batch/"]["post"]
    assert {"200", "400", "401", "403", "413", "429"} <= set(operation["responses"])
    assert {"ApiKeyAuth": []} in operation["security"]
    request = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    recordings = schema["components"]["schemas"][request]["properties"]["recordings"]
    assert recordings["maxItems"] == 500 and recordings["minItems"] == 1
    item = schema["components"]["schemas"][recordings["items"]["$ref"].rsplit("/", 1)[1]]
    assert {"external_id", "rubric", "transcript", "turns", "agent"} <= set(item["properties"])
    assert "audio" not in item["properties"]  # one recording at a time, as multipart
    result = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    results_schema = schema["components"]["schemas"][result]["properties"]["results"]["items"]["$ref"]
    properties = schema["components"]["schemas"][results_schema.rsplit("/", 1)[1]]["properties"]
    assert set(properties) == {"index", "status", "recording", "errors", "detail"}


@pytest.mark.django_db(transaction=True)  # committed for real, so the publish runs as in production
def test_with_redis_down_the_batch_keeps_its_recordings_received_for_the_sweep(own_redis):  # noqa: F811
    rubric = published_rubric(slug="care")
    _key, key = new_key("ccaas")
    client = key_client(key)
    own_redis.stop()

    answer = results(client.post(URL, {"recordings": items(rubric, 3)}, format="json"))

    assert [result["status"] for result in answer] == [201] * 3
    assert {result["recording"]["status"] for result in answer} == {Recording.Status.RECEIVED}  # honest
    assert set(Recording.objects.values_list("status", flat=True)) == {Recording.Status.RECEIVED}
    assert set(JudgeRun.objects.values_list("status", flat=True)) == {JudgeRun.Status.PENDING}  # for the sweep


@pytest.mark.django_db
def test_the_statements_of_a_single_post_and_of_a_chunk_are_pinned(api, rubric, django_capture_on_commit_callbacks):
    """Key, rubric, then one transaction: the recording's insert, the run's insert (with the default judge);
    a chunk of 100 makes the same statements plus one lookup of its ids. A change that adds one per
    recording, or per post, shows here (bench/api/README.md has the figures)."""
    from django.test.utils import CaptureQueriesContext

    with django_capture_on_commit_callbacks(), CaptureQueriesContext(connection) as single:
        assert api.post("/api/recordings/", payload(rubric, external_id="one"), format="json").status_code == 201
    with django_capture_on_commit_callbacks(), CaptureQueriesContext(connection) as resend:
        assert api.post("/api/recordings/", payload(rubric, external_id="one"), format="json").status_code == 200
    with django_capture_on_commit_callbacks(), CaptureQueriesContext(connection) as chunk:
        answer = results(api.post(URL, {"recordings": items(rubric, 100)}, format="json"))
    assert {result["status"] for result in answer} == {201}
    # Inside the test's transaction, the service's BEGIN and COMMIT are a savepoint and its release.
    # Each counts one insert of the teams the calls name (access.Team, ON CONFLICT DO NOTHING).
    assert len(single) == 7  # was 17 before the batch's store path
    assert len(resend) == 11  # the insert meets the constraint, then the lookup and the stored row
    assert len(chunk) == 8


@pytest.mark.django_db
def test_runs_get_the_default_judge_or_none(api, rubric, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        results(api.post(URL, {"recordings": items(rubric, 2)}, format="json"))
        judge = Judge.objects.create(name="house", model="gpt-x", is_default=True)
        results(api.post(URL, {"recordings": [payload(rubric, external_id=f"later-{n}") for n in range(2)]}, format="json"))
        api.post("/api/recordings/", payload(rubric, external_id="single"), format="json")
    judges = dict(JudgeRun.objects.values_list("recording__external_id", "judge"))
    assert judges == {"call-0": None, "call-1": None, "later-0": judge.pk, "later-1": judge.pk, "single": judge.pk}
