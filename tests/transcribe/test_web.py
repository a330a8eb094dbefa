"""Audio on the web side: the supervisors' upload form, the admin's, the permission-checked
audio with byte ranges, and the player's data on the review page."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from qa.models import Recording, Transcription
from tests.factories import UserFactory
from tests.review.conftest import client_for, set_evidence
from tests.transcribe.conftest import queued_with_audio, stored_files

pytestmark = pytest.mark.django_db


@pytest.fixture
def supervisor_client(media_root):
    group, _ = Group.objects.get_or_create(name="Supervisors")
    group.permissions.add(Permission.objects.get(content_type__app_label="reviews", codename="add_review"))
    return client_for(UserFactory(groups=["Supervisors"]))


def test_a_supervisor_uploads_a_call_and_it_goes_to_transcription(
    supervisor_client, rubric, sox_tone, media_root, django_capture_on_commit_callbacks
):
    form = {"external_id": "call-9", "rubric": rubric.slug, "agent_channel": "left", "agent_id": "ag-1", "team": "t"}
    audio = SimpleUploadedFile("call.wav", sox_tone.read_bytes(), content_type="audio/wav")
    with django_capture_on_commit_callbacks() as enqueued:
        response = supervisor_client.post(reverse("review-upload"), {**form, "audio": audio}, follow=True)

    assert "is being transcribed, then judged" in response.content.decode()
    recording = Recording.objects.get()
    assert (recording.source, recording.external_id, recording.status) == ("web", "call-9", "transcribing")
    assert len(enqueued) == 1 and len(stored_files(media_root)) == 1


def test_the_upload_form_shows_why_a_file_is_refused_and_stores_nothing(supervisor_client, rubric, media_root):
    form = {"external_id": "call-9", "rubric": rubric.slug, "agent_channel": "left"}
    audio = SimpleUploadedFile("call.wav", b"AGENTE: hola\n", content_type="audio/wav")
    response = supervisor_client.post(reverse("review-upload"), {**form, "audio": audio})

    assert response.status_code == 400
    assert "not readable audio" in response.content.decode()
    assert not Recording.objects.exists() and stored_files(media_root) == []


def test_the_upload_form_and_the_audio_need_the_review_permission(client, rubric, spanish_call, media_root):
    recording = queued_with_audio(*spanish_call, rubric=rubric)
    audio_url = reverse("review-audio", args=[recording.pk])
    assert "/accounts/login/" in client.get(audio_url).url
    outsider = client_for(UserFactory())
    assert outsider.get(audio_url).status_code == 403
    assert outsider.get(reverse("review-upload")).status_code == 403
    # No public address: nothing under MEDIA_URL is routed.
    assert client.get("/media/" + recording.audio.name).status_code == 404


def test_the_audio_is_served_whole_and_by_byte_range(supervisor_client, rubric, spanish_call):
    path, script = spanish_call
    recording = queued_with_audio(path, script, rubric=rubric)
    data = path.read_bytes()
    url = reverse("review-audio", args=[recording.pk])

    whole = supervisor_client.get(url)
    assert whole.status_code == 200 and b"".join(whole.streaming_content) == data
    assert (whole["Content-Type"], whole["Accept-Ranges"], whole["Cache-Control"]) == (
        "audio/wav",
        "bytes",
        "private, no-store",
    )

    part = supervisor_client.get(url, HTTP_RANGE="bytes=100-199")
    assert part.status_code == 206 and b"".join(part.streaming_content) == data[100:200]
    assert part["Content-Range"] == f"bytes 100-199/{len(data)}"
    tail = supervisor_client.get(url, HTTP_RANGE="bytes=-10")
    assert b"".join(tail.streaming_content) == data[-10:]
    assert supervisor_client.get(url, HTTP_RANGE=f"bytes={len(data)}-").status_code == 416


def _player(response) -> dict:
    match = re.search(r'<script id="player-data" type="application/json">(.*?)</script>', response.content.decode())
    return json.loads(match.group(1))


def test_the_review_page_gives_the_player_each_verified_quote_its_span(supervisor_client, rubric, spanish_call):
    path, script = spanish_call
    recording = queued_with_audio(path, script, rubric=rubric)
    set_evidence(recording, "c1", "CLIENTE: me cobraron dos veces la factura")
    set_evidence(recording, "c2", "le prometo devolverle el dinero hoy", confidence=0.0)
    recording.current_run.scores.filter(criterion__key="c3").update(evidence="")

    response = supervisor_client.get(reverse("review-detail", args=[recording.pk]))
    player = _player(response)
    assert player["src"] == reverse("review-audio", args=[recording.pk])
    assert [(turn["start_ms"], turn["end_ms"]) for turn in player["turns"]] == [(t.start_ms, t.end_ms) for t in script]
    start, end = player["quotes"]["c1"]
    words = recording.turns[1]["words"]
    # "me cobraron dos veces la factura": the second to seventh words of the customer's turn.
    assert (start, end) == (words[1]["start_ms"], words[6]["end_ms"])
    assert script[1].start_ms < start < end <= script[1].end_ms
    assert player["quotes"]["c2"] is None  # not verified: no span
    assert "c3" not in player["quotes"]
    assert 'src="/static/review/player.js"' in response.content.decode()


def test_a_call_with_unknown_speakers_says_speaker_criteria_cannot_be_trusted(supervisor_client, rubric, spanish_call):
    recording = queued_with_audio(*spanish_call, rubric=rubric, speakers_known=False)
    response = supervisor_client.get(reverse("review-detail", args=[recording.pk]))
    assert "cannot be trusted" in response.content.decode()


def test_the_admin_adds_a_recording_from_an_audio_file_and_refuses_a_bad_one(
    client, django_user_model, rubric, sox_tone, media_root
):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw"))
    url = reverse("admin:qa_recording_add")
    form = {"external_id": "call-7", "source": "admin", "rubric": rubric.pk, "agent_channel": "left", "agent_id": "a"}

    bad = client.post(url, {**form, "audio": SimpleUploadedFile("x.wav", b"RIFF....", content_type="audio/wav")})
    assert bad.status_code == 200 and "not readable audio" in bad.content.decode()
    assert not Recording.objects.exists() and stored_files(media_root) == []

    good = client.post(
        url, {**form, "audio": SimpleUploadedFile("x.wav", sox_tone.read_bytes(), content_type="audio/wav")}
    )
    assert good.status_code == 302
    recording = Recording.objects.get()
    assert recording.audio_channels == 1 and recording.transcriptions.get().status == Transcription.Status.PENDING
