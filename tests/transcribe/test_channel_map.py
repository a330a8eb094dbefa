"""Audio of more than two channels: a channel map names the agent's and the customer's, the
others are not transcribed; without one, or naming a channel the file lacks, it is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files import File
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from qa.audio import channel_map_check
from core.errors import InvalidInputError
from qa.models import Recording, Transcription
from qa.services import recording_ingest
from qa.transcription import recognizer_get, transcribe
from tests.api.conftest import key_client, new_key
from tests.review.conftest import client_for, queued
from tests.support.calls import SCRIPTS, multichannel_call, word_error_rate
from tests.transcribe.conftest import stored_files
from tests.transcribe.test_local import WER_BOUND

# A third voice on the line (hold message, a supervisor listening in): words that must not reach the transcript.
OTHER_VOICE = "Su llamada es importante para nosotros, por favor espere en línea."
# Channel 1 the customer, 2 the other voice, 3 the agent, 4 silent.
LAYOUT = ["customer", OTHER_VOICE, "agent", "silence"]


@pytest.fixture(scope="module")
def four_channel_call(tmp_path_factory):
    path = tmp_path_factory.mktemp("calls") / "four.wav"
    return path, multichannel_call(SCRIPTS["es"], language="es", out=path, channels=LAYOUT)


@pytest.mark.parametrize(
    ("channels", "agent", "customer", "kept"),
    [
        (1, "left", "", ("", "")),  # mono: no channels, the speakers are unknown
        (2, "", "", ("left", "")),  # the QA_AGENT_CHANNEL setting's default
        (2, "2", "", ("right", "")),
        (2, "", "left", ("right", "")),  # the agent is on the one that is not the customer's
        (2, "left", "2", ("left", "")),
        (4, "3", "1", ("3", "1")),
        (3, "right", "3", ("2", "3")),  # left and right are channels 1 and 2 in any file
    ],
)
def test_a_channel_map_is_kept_as_the_recording_stores_it(channels, agent, customer, kept):
    assert channel_map_check(channels=channels, agent_channel=agent, customer_channel=customer) == kept


@pytest.mark.parametrize(
    ("channels", "agent", "customer", "field", "message"),
    [
        (4, "", "", "audio", "The audio has 4 channels: say which is the agent's and which the customer's"),
        (4, "3", "", "audio", "with agent_channel and customer_channel (channel numbers, 1 to 4)"),
        (4, "5", "1", "agent_channel", "agent_channel is channel 5, but the audio has 4 channels."),
        (3, "1", "4", "customer_channel", "customer_channel is channel 4, but the audio has 3 channels."),
        (2, "3", "", "agent_channel", "agent_channel is channel 3, but the audio has 2 channels."),
        (4, "2", "2", "customer_channel", "The agent and the customer are both on channel 2."),
        (2, "left", "left", "customer_channel", "both on channel 1"),
    ],
)
def test_a_channel_map_the_file_cannot_satisfy_is_refused_naming_the_problem(
    channels, agent, customer, field, message
):
    with pytest.raises(InvalidInputError) as refused:
        channel_map_check(channels=channels, agent_channel=agent, customer_channel=customer)
    assert message in refused.value.errors[field]


def _ingest(rubric, path: Path, **fields):
    with path.open("rb") as handle:
        return recording_ingest(
            external_id="call-4", source="crm", rubric=rubric, audio=File(handle, name=path.name), **fields
        )


@pytest.mark.django_db
def test_four_channels_with_a_map_are_stored_with_it(rubric, media_root, sox_file, django_capture_on_commit_callbacks):
    path = sox_file("four.wav", 16000, 4, "synth", "2", "sine", "440")
    with django_capture_on_commit_callbacks() as enqueued:
        recording, created = _ingest(rubric, path, agent_channel="3", customer_channel="1")
    recording.refresh_from_db()
    assert created and (recording.audio_channels, recording.agent_channel, recording.customer_channel) == (4, "3", "1")
    assert recording.ignored_channels == [2, 4]
    assert len(enqueued) == 1 and len(stored_files(media_root)) == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({}, "audio", "The audio has 4 channels"),
        ({"agent_channel": "3"}, "audio", "The audio has 4 channels"),
        ({"agent_channel": "5", "customer_channel": "1"}, "agent_channel", "the audio has 4 channels"),
        ({"agent_channel": "3", "customer_channel": "back"}, "customer_channel", "a channel's number, from 1"),
        ({"agent_channel": "0", "customer_channel": "1"}, "agent_channel", "a channel's number, from 1"),
    ],
)
def test_four_channels_without_a_usable_map_are_refused_with_nothing_stored(
    rubric, media_root, sox_file, fields, field, message, django_capture_on_commit_callbacks
):
    path = sox_file("four.wav", 16000, 4, "synth", "2", "sine", "440")
    with django_capture_on_commit_callbacks() as enqueued, pytest.raises(InvalidInputError) as refused:
        _ingest(rubric, path, **fields)
    assert message in refused.value.errors[field]
    assert (Recording.objects.count(), Transcription.objects.count(), enqueued) == (0, 0, [])
    assert stored_files(media_root) == []


@pytest.mark.django_db
def test_the_api_takes_the_channel_map_as_form_fields(rubric, media_root, sox_file):
    api = key_client(new_key("ccaas")[1])
    audio = sox_file("four.wav", 16000, 4, "synth", "2", "sine", "440").read_bytes()

    def post(**fields):
        form = {"external_id": "call-4", "rubric": rubric.slug, "audio": SimpleUploadedFile("four.wav", audio)}
        return api.post("/api/recordings/", {**form, **fields}, format="multipart")

    missing = post()
    assert missing.status_code == 400 and "The audio has 4 channels" in str(missing.json())
    absent = post(agent_channel="3", customer_channel="7")
    assert absent.status_code == 400
    assert "customer_channel is channel 7, but the audio has 4 channels." in str(absent.json())
    assert not Recording.objects.exists() and stored_files(media_root) == []

    created = post(agent_channel="3", customer_channel="1")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["audio_channels"], body["agent_channel"], body["customer_channel"]) == (4, "3", "1")
    assert post(agent_channel="3", customer_channel="1").status_code == 200  # the same post again
    assert post(agent_channel="1", customer_channel="3").status_code == 409  # the speakers swapped: other content


@pytest.mark.django_db
def test_the_upload_form_asks_for_the_map_and_the_page_says_which_channels_were_left_out(
    rubric, media_root, sox_file
):
    from django.contrib.auth.models import Group, Permission

    from tests.factories import UserFactory

    group, _ = Group.objects.get_or_create(name="Supervisors")
    group.permissions.add(Permission.objects.get(content_type__app_label="reviews", codename="add_review"))
    client = client_for(UserFactory(groups=["Supervisors"]))
    audio = sox_file("four.wav", 16000, 4, "synth", "2", "sine", "440").read_bytes()
    form = {"external_id": "call-4", "rubric": rubric.slug, "agent_channel": "3"}

    refused = client.post(reverse("review-upload"), {**form, "audio": SimpleUploadedFile("four.wav", audio)})
    assert refused.status_code == 400 and "The audio has 4 channels" in refused.content.decode()
    assert not Recording.objects.exists() and stored_files(media_root) == []

    form["customer_channel"] = "1"
    client.post(reverse("review-upload"), {**form, "audio": SimpleUploadedFile("four.wav", audio)})
    uploaded = Recording.objects.get()
    assert (uploaded.audio_channels, uploaded.agent_channel, uploaded.customer_channel) == (4, "3", "1")

    # Once transcribed and judged, its review page says which channels were left out.
    judged = queued(rubric=rubric, external_id="call-5", audio_channels=4, agent_channel="3", customer_channel="1")
    page = client.get(reverse("review-detail", args=[judged.pk])).content.decode()
    assert "the agent's is channel 3, the customer's channel 1; the others (2, 4) were not transcribed" in page
    stereo = queued(rubric=rubric, external_id="call-6", audio_channels=2, agent_channel="left")
    assert "ignored-channels-notice" not in client.get(reverse("review-detail", args=[stereo.pk])).content.decode()


def test_the_local_recognizer_transcribes_only_the_mapped_channels(four_channel_call):
    path, script = four_channel_call
    with path.open("rb") as audio:
        transcript = transcribe(
            audio, channels=4, agent_channel="3", customer_channel="1", language="es", recognizer=recognizer_get()
        )
    assert [turn.speaker for turn in transcript.turns] == ["AGENTE", "CLIENTE", "AGENTE", "CLIENTE"]
    heard = " ".join(turn.text for turn in transcript.turns)
    wer = word_error_rate(" ".join(turn.text for turn in script), heard)
    print(f"WER {wer:.2f}: {heard}")
    assert wer < WER_BOUND
    # Channel 2's voice speaks over the agent's first turn: none of its words are in the transcript.
    assert not {"importante", "nosotros", "espere"} & set(heard.lower().replace(",", " ").split())


@pytest.mark.django_db
def test_the_admin_asks_for_the_map_of_four_channels(client, django_user_model, rubric, sox_file, media_root):
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw"))
    url = reverse("admin:qa_recording_add")
    audio = sox_file("four.wav", 16000, 4, "synth", "2", "sine", "440").read_bytes()
    form = {"external_id": "call-7", "source": "admin", "rubric": rubric.pk, "agent_channel": "3"}

    refused = client.post(url, {**form, "customer_channel": "9", "audio": SimpleUploadedFile("four.wav", audio)})
    assert refused.status_code == 200
    assert "customer_channel is channel 9, but the audio has 4 channels." in refused.content.decode()
    assert not Recording.objects.exists() and stored_files(media_root) == []

    added = client.post(url, {**form, "customer_channel": "1", "audio": SimpleUploadedFile("four.wav", audio)})
    assert added.status_code == 302
    recording = Recording.objects.get()
    assert (recording.audio_channels, recording.agent_channel, recording.customer_channel) == (4, "3", "1")
