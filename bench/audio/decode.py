"""Peak memory and time of the worker's audio decoding on a long call. See README.md beside this file.

.venv/bin/python bench/audio/decode.py --hours 3 [--file call.mp3] [--decoder worker|faster-whisper]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

# In a child process each, so each peak is its own: (label, code run on `path`).
DECODERS = {
    # What the worker does: qa.transcription.audio_decode, both channels of a stereo call.
    "worker": (
        "from qa.transcription import TranscriptionError, audio_decode\n"
        "try:\n"
        "    decoded = audio_decode(open(path, 'rb'), keep=[0, 1])\n"
        "    result = f'decoded {decoded.seconds:.0f} s'\n"
        "except TranscriptionError as error:\n"
        "    result = f'refused: {error}'\n"
    ),
    # faster-whisper's own decoder (what the worker called before): the whole file, both channels.
    "faster-whisper": (
        "from faster_whisper.audio import decode_audio\n"
        "left, right = decode_audio(path, split_stereo=True)\n"
        "result = f'decoded {len(left) / 16000:.0f} s'\n"
    ),
}


def headerless_vbr_mp3(path: Path, seconds: int) -> None:
    """A two-channel 16 kHz call as a variable-bitrate MP3 without its length header (`lame -t`):
    20 s of noise then silence, so the header's estimate, from the first frames' bitrate, is short."""
    sox = subprocess.Popen(
        ["sox", "-R", "-n", "-r", "16000", "-c", "2", "-t", "wav", "-", "synth", "20", "whitenoise", "vol", "0.5",
         ":", "synth", str(seconds - 20), "sine", "300", "vol", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    subprocess.run(["lame", "--quiet", "-V", "9", "-t", "-", str(path)], stdin=sox.stdout, check=True)
    sox.wait()


def measure(label: str, path: Path) -> dict:
    code = (
        "import django, json, resource, sys, time\n"
        "django.setup()\n"
        f"path = {str(path)!r}\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "started = time.monotonic()\n"
        f"{DECODERS[label]}"
        "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(json.dumps({'result': result, 'seconds': round(time.monotonic() - started, 1),\n"
        "    'rss_before_mb': before // 1024, 'peak_rss_mb': peak // 1024}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return {"decoder": label, **json.loads(done.stdout.strip().splitlines()[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=3.0, help="length of the call to make")
    parser.add_argument("--file", type=Path, help="decode this file instead of making one")
    parser.add_argument("--decoder", action="append", choices=list(DECODERS), help="default: both")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            path = Path(tmp) / "call.mp3"
            started = time.monotonic()
            headerless_vbr_mp3(path, round(args.hours * 3600))
            print(f"made {path.stat().st_size / 1e6:.1f} MB in {time.monotonic() - started:.0f} s", flush=True)
        import av

        with av.open(str(path)) as container:
            print(f"the header says {container.duration / av.time_base:.0f} s", flush=True)
        for label in args.decoder or DECODERS:
            print(json.dumps(measure(label, path)), flush=True)
    print(f"this process: peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


if __name__ == "__main__":
    main()
