"""Stereo calls spoken by espeak-ng and assembled with sox, from known scripts.

Each turn is spoken on its speaker's channel (the agent on the left) while the
other channel is silent, with a short pause between turns, so the test knows
when every turn starts and ends. Needs the Debian packages espeak-ng and sox
(scripts/test installs them).

    python -m tests.support.calls es out.wav      # the test script, to listen to
    python -m tests.support.calls samples/recordings/es-001-cobro-duplicado.yaml out.wav --turns 6
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

RATE = 16_000
PAUSE_SECONDS = 0.5
VOICES = {"es": "es", "en": "en-us"}

SCRIPTS = {
    "es": [
        ("agent", "Buenos días, le atiende Marta de Telco Sur. ¿En qué puedo ayudarle?"),
        ("customer", "Hola, me cobraron dos veces la factura de octubre."),
        ("agent", "Lamento la molestia. Le abro un reclamo para la devolución del segundo débito."),
        ("customer", "Bueno, perfecto, muchas gracias."),
    ],
    "en": [
        ("agent", "Good morning, this is Sam from North Bank. How can I help you today?"),
        ("customer", "Hi, I lost my card yesterday and I need to block it."),
        ("agent", "I am sorry to hear that. I have blocked the card and a new one will arrive in five days."),
        ("customer", "Great, thank you very much."),
    ],
}


@dataclass(frozen=True)
class ScriptTurn:
    role: str
    text: str
    start_ms: int
    end_ms: int


def tools_missing() -> list[str]:
    return [tool for tool in ("espeak-ng", "sox") if shutil.which(tool) is None]


def sox(*arguments: str | Path) -> None:
    """Run sox repeatably (`-R`): its dither, applied when it changes the rate or the depth, otherwise
    draws a new random seed each run, so the same script made different audio, and the recognizer's word
    error rate on it moved between runs (0.37 to 0.50 on the four-channel call)."""
    subprocess.run(["sox", "-R", *map(str, arguments)], check=True)


def _seconds(path: Path) -> float:
    return float(subprocess.run(["soxi", "-D", str(path)], check=True, capture_output=True, text=True).stdout)


def _tracks(script: list[tuple[str, str]], *, language: str, work: Path, repeat: int = 1):
    """The agent's and the customer's tracks at `work`, each silent while the other speaks, and
    each turn with the time its speech occupies."""
    turns, agent, customer = [], [], []
    elapsed = 0.0
    for index, (role, text) in enumerate(script * repeat):
        spoken, silent = work / f"{index}.wav", work / f"{index}-silent.wav"
        raw = work / f"{index}-raw.wav"
        subprocess.run(["espeak-ng", "-v", VOICES[language], "-s", "150", "-w", str(raw), text], check=True)
        # Speech then a pause, at the call's rate; the other side gets the same length of silence.
        sox(raw, "-r", str(RATE), spoken, "pad", "0", str(PAUSE_SECONDS))
        sox(spoken, silent, "vol", "0")
        length = _seconds(spoken)
        turns.append(ScriptTurn(role, text, round(elapsed * 1000), round((elapsed + length - PAUSE_SECONDS) * 1000)))
        elapsed += length
        agent.append(spoken if role == "agent" else silent)
        customer.append(silent if role == "agent" else spoken)
    sox(*agent, work / "agent.wav")
    sox(*customer, work / "customer.wav")
    return turns, work / "agent.wav", work / "customer.wav"


def stereo_call(
    script: list[tuple[str, str]], *, language: str, out: Path, agent_channel: str = "left", repeat: int = 1
) -> list[ScriptTurn]:
    """Write the script as a two-channel 16 kHz file at `out` (any format sox writes, by its
    extension); return each turn with the time its speech occupies."""
    with tempfile.TemporaryDirectory() as tmp:
        turns, agent, customer = _tracks(script, language=language, work=Path(tmp), repeat=repeat)
        left, right = (agent, customer) if agent_channel == "left" else (customer, agent)
        sox("-M", left, right, out)
    return turns


def multichannel_call(
    script: list[tuple[str, str]], *, language: str, out: Path, channels: list[str]
) -> list[ScriptTurn]:
    """Write the script with one track per entry of `channels`, in order: "agent", "customer",
    "silence", or any other text, spoken by espeak-ng from the start (a third voice on the
    line, which a channel map leaves out)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        turns, agent, customer = _tracks(script, language=language, work=work)
        tracks = []
        for index, content in enumerate(channels):
            if content in ("agent", "customer"):
                tracks.append(agent if content == "agent" else customer)
                continue
            track, raw = work / f"channel-{index}.wav", work / f"channel-{index}-raw.wav"
            if content == "silence":
                sox(agent, track, "vol", "0")
            else:
                subprocess.run(["espeak-ng", "-v", VOICES[language], "-s", "150", "-w", str(raw), content], check=True)
                sox(raw, "-r", str(RATE), track)
            tracks.append(track)
        # sox -M pads the shorter tracks with silence to the longest.
        sox("-M", *tracks, out)
    return turns


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word-level Levenshtein distance over the reference's length, on the verifier's normalised words."""
    from qa.evidence import _TOKEN, _normalize_word

    ref = [_normalize_word(word) for word in _TOKEN.findall(reference)]
    hyp = [_normalize_word(word) for word in _TOKEN.findall(hypothesis)]
    previous = list(range(len(hyp) + 1))
    for i, ref_word in enumerate(ref, start=1):
        current = [i] + [0] * len(hyp)
        for j, hyp_word in enumerate(hyp, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref_word != hyp_word))
        previous = current
    return previous[-1] / max(len(ref), 1)


def sample_script(path: Path, turns: int) -> tuple[str, list[tuple[str, str]]]:
    """The language and first turns of a sample call's transcript (AGENTE/AGENT lines are the agent's)."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    script = []
    for line in data["transcript"].splitlines()[:turns]:
        label, _, text = line.partition(": ")
        script.append(("agent" if label in ("AGENTE", "AGENT") else "customer", text))
    return data["language"], script


if __name__ == "__main__":
    source, target = sys.argv[1], Path(sys.argv[2])
    if source in SCRIPTS:
        language, script = source, SCRIPTS[source]
    else:
        language, script = sample_script(Path(source), int(sys.argv[4]) if sys.argv[3:4] == ["--turns"] else 100)
    for turn in stereo_call(script, language=language, out=target):
        print(f"{turn.start_ms:>6} {turn.end_ms:>6} {turn.role:<8} {turn.text}")


def headerless_vbr_mp3(out: Path, *, loud_seconds: float, silent_seconds: float) -> None:
    """A mono 44.1 kHz MP3 at a variable bitrate without its length header (`lame -t` writes no
    Xing/LAME frame): noise, at a high bitrate, then digital silence, at the lowest. FFmpeg estimates
    such a file's length from its first frames' bitrate, so it reports a fraction of the real length.
    Needs the Debian package lame (scripts/test installs it)."""
    if shutil.which("lame") is None:
        raise RuntimeError("Missing lame: install the Debian package lame (scripts/test does).")
    wav = out.with_suffix(".wav")
    sox("-n", "-r", "44100", "-c", "1", wav, "synth", str(loud_seconds), "whitenoise", "vol", "0.8",
        ":", "synth", str(silent_seconds), "sine", "440", "vol", "0")  # fmt: skip
    subprocess.run(["lame", "--quiet", "-V", "0", "-t", str(wav), str(out)], check=True)
    wav.unlink()
