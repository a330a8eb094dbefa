from io import StringIO

import pytest
from django.core.management import call_command

from qa.evidence import parse_turns
from qa.models import JudgeRun, Recording, Transcription
from rubrics.models import Rubric
from tests.support.fake_openai import transcription


@pytest.mark.django_db
def test_load_samples_publishes_the_rubrics_and_loads_every_recording_once():
    call_command("load_samples", stdout=StringIO())
    call_command("load_samples", stdout=StringIO())  # again: nothing new, nothing duplicated

    assert set(Rubric.objects.filter(status="published").values_list("slug", flat=True)) == {
        "soporte-cobranzas",
        "customer-care",
    }
    assert Rubric.objects.count() == 2
    recordings = Recording.objects.filter(audio="")
    assert recordings.count() >= 10
    assert set(recordings.values_list("language", flat=True)) == {"es", "en"}
    assert recordings.filter(transcript_source="asr").count() >= 3
    assert all(parse_turns(r.transcript)[0].speaker for r in recordings)
    # Left for `judge` to pick up, so a first run judges only what it asks for.
    assert set(recordings.values_list("status", flat=True)) == {Recording.Status.RECEIVED}
    assert not JudgeRun.objects.exists()
    # The two audio calls wait for their transcription (a worker's job here: a broker is configured).
    audio = Recording.objects.exclude(audio="").order_by("external_id")
    assert [(r.external_id, r.audio_channels, r.status) for r in audio] == [
        ("en-101", 2, Recording.Status.TRANSCRIBING),
        ("es-101", 2, Recording.Status.TRANSCRIBING),
    ]
    assert Transcription.objects.filter(status="pending", judge_after=False).count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_audio_samples_are_transcribed_into_agent_and_customer_turns_and_left_for_judge(
    fake_llm, eager_celery, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    settings.QA_TRANSCRIBE_MODEL = "fake-whisper"
    # The fake server does not listen: each channel "hears" one line (English sorts first).
    fake_llm.script(
        transcription([{"start": 0.0, "end": 5.8, "text": "Hello, this is Harbor Bank."}]),
        transcription([{"start": 6.3, "end": 10.7, "text": "Hi, I lost my debit card."}]),
        transcription([{"start": 0.0, "end": 5.1, "text": "Buenos días, le atiende Marta."}]),
        transcription([{"start": 5.6, "end": 12.1, "text": "Hola, me cobraron dos veces."}]),
    )
    call_command("load_samples", stdout=StringIO())

    english, spanish = Recording.objects.exclude(audio="").order_by("external_id")
    assert english.transcript == "AGENT: Hello, this is Harbor Bank.\nCUSTOMER: Hi, I lost my debit card.\n"
    assert spanish.transcript == "AGENTE: Buenos días, le atiende Marta.\nCLIENTE: Hola, me cobraron dos veces.\n"
    assert {english.status, spanish.status} == {Recording.Status.RECEIVED}
    assert english.duration_seconds == 30 and spanish.duration_seconds == 40
    assert not JudgeRun.objects.exists()


@pytest.mark.django_db
def test_unchanged_sample_rubrics_are_not_published_again():
    first = StringIO()
    call_command("load_samples", stdout=first)
    # The rubric's name and version, not its str(), which adds the status in the site's language:
    # "Published Customer care (banking) v1 (Publicada)."
    assert "Published Customer care (banking) v1.\n" in first.getvalue(), first.getvalue()
    assert "(Publicada)" not in first.getvalue()
    v1 = Rubric.objects.get(slug="customer-care")
    out = StringIO()
    call_command("load_samples", stdout=out)
    assert "Rubric Customer care (banking) v1 is up to date." in out.getvalue(), out.getvalue()
    assert Rubric.objects.filter(slug="customer-care").count() == 1
    assert v1.criteria.count() == 6
