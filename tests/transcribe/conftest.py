from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.calls import SCRIPTS, ScriptTurn, stereo_call, tools_missing


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
    """`sox_file(name, *effect_args)`: a file sox synthesises (`sox -n name ...`)."""
    directory = tmp_path_factory.mktemp("sox")

    def make(name: str, *args: str) -> Path:
        path = directory / name
        subprocess.run(["sox", "-n", str(path), *args], check=True)
        return path

    return make
