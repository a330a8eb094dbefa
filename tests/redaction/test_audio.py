"""A call that came as audio: the stored recording is rewritten with the mask_at_rest words' time
spans silenced (from the recognizer's word times), the original is not kept, and sox hears silence
where the card was and the call elsewhere."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.files import File

from qa.execution import judge_run_until_done
from qa.judging import judge_run_create
from qa.models import JudgeRun, Recording
from qa.redaction.models import RecordingRedaction
from tests.factories import RecordingFactory
from tests.judge.conftest import judge_rubric
from tests.support.calls import sox

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(shutil.which("sox") is None, reason="needs sox (scripts/test installs it)"),
]

# Word times as the recognizer gives them: the card's four groups are said from 2.0 s to 4.0 s.
TURNS = [
    {"speaker": "AGENTE", "text": "Buenos días, le atiende Marta.", "start_ms": 0, "end_ms": 1500, "words": [
        {"word": "Buenos", "start_ms": 0, "end_ms": 400}, {"word": "días,", "start_ms": 400, "end_ms": 700},
        {"word": "le", "start_ms": 700, "end_ms": 850}, {"word": "atiende", "start_ms": 850, "end_ms": 1200},
        {"word": "Marta.", "start_ms": 1200, "end_ms": 1500},
    ]},
    {"speaker": "CLIENTE", "text": "La tarjeta es 4111 1111 1111 1111 gracias.", "start_ms": 1500, "end_ms": 4600, "words": [
        {"word": "La", "start_ms": 1500, "end_ms": 1650}, {"word": "tarjeta", "start_ms": 1650, "end_ms": 1850},
        {"word": "es", "start_ms": 1850, "end_ms": 2000},
        {"word": "4111", "start_ms": 2000, "end_ms": 2500}, {"word": "1111", "start_ms": 2500, "end_ms": 3000},
        {"word": "1111", "start_ms": 3000, "end_ms": 3500}, {"word": "1111", "start_ms": 3500, "end_ms": 4000},
        {"word": "gracias.", "start_ms": 4000, "end_ms": 4600},
    ]},
]
TRANSCRIPT = "".join(f"{turn['speaker']}: {turn['text']}\n" for turn in TURNS)


def rms(path: Path, start: float, length: float) -> float:
    """sox's RMS amplitude of the stretch (0 is silence; the tone is about 0.35)."""
    stats = subprocess.run(["sox", str(path), "-n", "trim", str(start), str(length), "stat"],
                           capture_output=True, text=True, check=True).stderr
    return float(next(line for line in stats.splitlines() if line.startswith("RMS     amplitude")).split()[-1])


@pytest.mark.parametrize("suffix", ["wav", "mp3"])
def test_the_card_is_silenced_in_the_stored_audio(fake_llm, settings, tmp_path, suffix):
    settings.MEDIA_ROOT = tmp_path / "media"
    call = tmp_path / f"call.{suffix}"
    sox("-n", "-r", "16000", "-c", "2", call, "synth", "5", "sine", "440", "vol", "0.5")
    recording = RecordingFactory(rubric=judge_rubric(language="es"), transcript=TRANSCRIPT, turns=TURNS,
                                 agent_name="Marta Quiroga", language="es")
    with call.open("rb") as audio:
        recording.audio.save(f"call.{suffix}", File(audio))
    stored = Path(recording.audio.path)
    assert rms(stored, 2.1, 1.8) > 0.2  # the card is audible before

    run, _created = judge_run_create(recording=recording)
    judge_run_until_done(run_id=run.pk, sleep=lambda _seconds: None)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.SUCCEEDED, run.error

    recording = Recording.objects.get(pk=recording.pk)
    assert Path(recording.audio.path) == stored
    # Silence where the card was said (a lossy codec leaves its edges: measured inside them)...
    assert rms(stored, 2.1, 1.8) < 0.01
    # ...and the call as it was around it.
    assert rms(stored, 0.2, 1.5) > 0.2 and rms(stored, 4.1, 0.8) > 0.2
    # The original is not kept: the recording's folder holds the one file.
    assert [path.name for path in stored.parent.iterdir()] == [stored.name]
    redaction = RecordingRedaction.objects.get(recording=recording)
    assert redaction.silenced_ms == [[2000, 4000]]
    # The masked word keeps the card's times, so the quote's audio span still plays.
    card_word = next(word for word in recording.turns[1]["words"] if "[TARJETA_1]" in word["word"])
    assert (card_word["start_ms"], card_word["end_ms"]) == (2000, 4000)


@pytest.mark.django_db(transaction=True)
def test_a_transcribed_call_is_masked_and_silenced_before_it_is_judged(fake_llm, eager_celery, settings, tmp_path):
    """The whole path: the audio is posted, the (remote) recognizer hears a card, the transcript is
    stored masked and the audio silenced in the transcription's worker, and the judge never sees it."""
    from qa.services import recording_ingest
    from tests.support.fake_openai import transcription

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.QA_TRANSCRIBE_MODEL = "fake-whisper"
    call = tmp_path / "call.wav"
    sox("-n", "-r", "16000", "-c", "1", call, "synth", "5", "sine", "440", "vol", "0.5")
    # The fake recognizer spreads a segment's words evenly: five over 1.0-4.0 s, the card's four
    # groups from 1.6 s to 4.0 s.
    fake_llm.script(transcription([
        {"start": 0.0, "end": 1.0, "text": "Hello."},
        {"start": 1.0, "end": 4.0, "text": "Card: 4111 1111 1111 1111"},
    ]))
    with call.open("rb") as audio:
        recording, _created = recording_ingest(
            external_id="audio-card", source="crm", rubric=judge_rubric(language="en"), audio=File(audio, name="call.wav")
        )
    recording.refresh_from_db()
    assert "4111" not in recording.transcript and "[CARD_1]" in recording.transcript
    judged = [request for request in fake_llm.requests if "messages" in request]
    assert judged and all("4111" not in json_text(request) for request in judged)
    stored = Path(recording.audio.path)
    assert rms(stored, 1.65, 2.3) < 0.01
    assert rms(stored, 0.1, 1.4) > 0.2 and rms(stored, 4.1, 0.8) > 0.2
    assert RecordingRedaction.objects.get(recording=recording).silenced_ms == [[1600, 4000]]


def json_text(request) -> str:
    import json

    return json.dumps(request, ensure_ascii=False)
