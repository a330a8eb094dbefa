"""POST /api/recordings/ with the call's audio, as multipart/form-data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from qa.models import Recording, Transcription
from tests.api.conftest import key_client, new_key
from tests.factories import published_rubric
from tests.support.curl import curl_run
from tests.transcribe.conftest import stored_files

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


@pytest.fixture
def api(db):
    return key_client(new_key("ccaas")[1])


def _form(rubric, audio: bytes, name: str = "call.wav", **fields):
    return {
        "external_id": "call-1",
        "rubric": rubric.slug,
        "agent": "ag-1",
        "audio": SimpleUploadedFile(name, audio),
        **fields,
    }


def test_a_multipart_post_with_audio_is_stored_and_goes_to_transcription(
    api, rubric, spanish_call, media_root, django_capture_on_commit_callbacks
):
    path, _ = spanish_call
    with django_capture_on_commit_callbacks() as enqueued:
        response = api.post(
            "/api/recordings/", _form(rubric, path.read_bytes(), agent_channel="right"), format="multipart"
        )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["status"], body["audio_channels"], body["agent_channel"], body["source"]) == (
        "transcribing",
        2,
        "right",
        "ccaas",
    )
    assert body["agent"]["id"] == "ag-1" and body["duration_seconds"] == 19
    assert Transcription.objects.get().status == "pending" and len(enqueued) == 1
    [stored] = stored_files(media_root)
    assert stored.read_bytes() == path.read_bytes()

    # The same post again is the same recording; rejudging waits for the transcript.
    again = api.post("/api/recordings/", _form(rubric, path.read_bytes(), agent_channel="right"), format="multipart")
    assert (again.status_code, again.json()["id"]) == (200, body["id"])
    rejudge = api.post(f"/api/recordings/{body['id']}/rejudge/")
    assert rejudge.status_code == 409 and "being transcribed" in rejudge.json()["detail"]


def test_a_bad_audio_file_is_a_400_naming_it_and_nothing_is_stored(api, rubric, media_root):
    response = api.post("/api/recordings/", _form(rubric, b"not audio at all"), format="multipart")
    assert response.status_code == 400
    assert "not readable audio" in response.json()["audio"]
    empty = api.post("/api/recordings/", _form(rubric, b""), format="multipart")
    assert (empty.status_code, empty.json()["audio"]) == (400, "The audio file is empty.")
    assert not Recording.objects.exists() and stored_files(media_root) == []


def test_audio_over_the_size_limit_is_a_413_and_nothing_is_stored(api, rubric, spanish_call, media_root, settings):
    data = spanish_call[0].read_bytes()
    settings.QA_AUDIO_MAX_BYTES = len(data) - 1
    response = api.post("/api/recordings/", _form(rubric, data), format="multipart")
    assert response.status_code == 413 and "limit is" in response.json()["detail"]
    assert not Recording.objects.exists() and stored_files(media_root) == []


def _readme_curl() -> str:
    readme = (ROOT / "docs/api/audio.md").read_text(encoding="utf-8")
    return re.search(r"```sh\n(curl -X POST [^`]*?-F audio=@[^`]*?)\n```", readme).group(1)


@pytest.mark.django_db(transaction=True)
def test_the_documented_curl_posts_a_sample_calls_audio(live_server, media_root, settings):
    published_rubric(slug="customer-care", language="en")
    _, key = new_key("crm")
    body, status = curl_run(_readme_curl(), server=live_server.url, key=key, cwd=ROOT, timeout=60)

    assert status == "201", body
    recording = Recording.objects.get(pk=json.loads(body)["id"])
    assert (recording.external_id, recording.agent_id, recording.agent_channel) == ("call-8813", "ag-101", "left")
    assert (recording.status, recording.audio_channels, recording.duration_seconds) == ("transcribing", 2, 30)
