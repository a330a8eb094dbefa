from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.calls import SCRIPTS, ScriptTurn, sox, stereo_call, tools_missing


@pytest.fixture(scope="session", autouse=True)
def _speech_tools():
    if missing := tools_missing():
        pytest.fail(f"Missing {', '.join(missing)}: install the Debian packages espeak-ng and sox (scripts/test does).")


@pytest.fixture(scope="session")
def spanish_call(tmp_path_factory) -> tuple[Path, list[ScriptTurn]]:
    """The Spanish script as a two-channel WAV, agent on the left."""
    path = tmp_path_factory.mktemp("calls") / "es.wav"
    return path, stereo_call(SCRIPTS["es"], language="es", out=path)


@pytest.fixture(scope="session")
def sox_file(tmp_path_factory):
    """`sox_file(name, rate, channels, *effects)`: a file sox synthesises (`sox -n -r R -c C name effects`)."""
    directory = tmp_path_factory.mktemp("sox")

    def make(name: str, rate: int, channels: int, *effects: str) -> Path:
        path = directory / name
        sox("-n", "-r", str(rate), "-c", str(channels), path, *effects)
        return path

    return make


@pytest.fixture
def media_root(settings, tmp_path):
    """The storage's root for this test, to see exactly what was stored."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def stored_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []


@pytest.fixture
def sox_tone(sox_file) -> Path:
    """Two seconds of a mono tone (the fake server does not listen; a real recognizer would hear no words)."""
    return sox_file("tone.wav", 16000, 1, "synth", "2", "sine", "440")


def queued_with_audio(path: Path, script: list[ScriptTurn], **fields):
    """A call in review with its audio and timed turns: the script's turns at the times sox put
    them, each word given an even share of its turn (the recognizer's alignment is tested apart)."""
    from django.core.files import File

    from qa.services import turns_render
    from qa.transcription import SpeakerTurn, Word, speaker_labels
    from tests.review.conftest import queued

    labels = speaker_labels("es")
    turns = []
    for said in script:
        words = said.text.split()
        step = (said.end_ms - said.start_ms) // len(words)
        timed = [Word(word, said.start_ms + i * step, said.start_ms + (i + 1) * step) for i, word in enumerate(words)]
        turns.append(SpeakerTurn(labels[said.role], said.start_ms, said.end_ms, timed))
    with path.open("rb") as handle:
        return queued(
            transcript=turns_render(turns),
            turns=[turn.to_dict() for turn in turns],
            audio=File(handle, name=path.name),
            audio_channels=2,
            agent_channel="left",
            transcript_source="asr",
            **fields,
        )
