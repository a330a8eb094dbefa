"""The bundled Whisper base: assembled from its two packages, checked, and replaceable."""

from __future__ import annotations

import hashlib

from qa.transcription import LocalRecognizer, recognizer_get
from qa.whisper_model import MODEL_BIN_SHA256, MODEL_BIN_SIZE, bundled_model_ensure, bundled_model_ready


def test_the_model_is_assembled_once_checked_and_a_damaged_copy_is_replaced(tmp_path):
    directory = bundled_model_ensure(tmp_path)
    model = directory / "model.bin"
    assert model.stat().st_size == MODEL_BIN_SIZE
    assert hashlib.sha256(model.read_bytes()).hexdigest() == MODEL_BIN_SHA256
    assert {path.name for path in directory.iterdir()} == {
        "model.bin",
        "config.json",
        "tokenizer.json",
        "vocabulary.txt",
    }

    written = model.stat().st_mtime_ns
    assert bundled_model_ensure(tmp_path) == directory and model.stat().st_mtime_ns == written  # not again

    with model.open("r+b") as damaged:  # a copy cut short (a full disk, a killed process)
        damaged.truncate(MODEL_BIN_SIZE // 2)
    assert not bundled_model_ready(directory)
    bundled_model_ensure(tmp_path)
    assert model.stat().st_size == MODEL_BIN_SIZE


def test_qa_transcribe_model_path_points_the_local_recognizer_at_another_model(settings, tmp_path):
    settings.QA_TRANSCRIBE_MODEL = ""
    settings.QA_TRANSCRIBE_MODEL_PATH = str(tmp_path / "faster-whisper-large-v3")
    recognizer = recognizer_get()
    assert isinstance(recognizer, LocalRecognizer)
    assert (recognizer.name, recognizer.model, recognizer.model_path) == (
        "local",
        "faster-whisper-large-v3",
        settings.QA_TRANSCRIBE_MODEL_PATH,
    )


def test_qa_transcribe_model_selects_the_remote_service(settings, monkeypatch):
    settings.QA_TRANSCRIBE_MODEL = "whisper-1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://asr.internal:8000/v1")
    recognizer = recognizer_get()
    assert (recognizer.name, recognizer.model) == ("openai-compatible", "whisper-1")
    assert str(recognizer.client.base_url) == "http://asr.internal:8000/v1/"
