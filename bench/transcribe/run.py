"""Real-time factor and memory of the local transcription. See README.md beside this file.

.venv/bin/python bench/transcribe/run.py --minutes 5 [--language es] [--beam-size 1] [--threads 0]
    [--set OPTION=JSON ...]   # a faster-whisper transcribe() option over qa.transcription.LOCAL_OPTIONS
.venv/bin/python bench/transcribe/run.py --turns 2     # the suite's smoke run: two turns of the script
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
# Settings only (no database): the recognizer reads its configuration from them.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="length of the call (the script repeated)")
    parser.add_argument("--turns", type=int, help="only this many turns of the script, once (a smoke run)")
    parser.add_argument("--language", default="es", choices=["es", "en"])
    parser.add_argument("--beam-size", type=int, help="QA_TRANSCRIBE_BEAM_SIZE (default: the setting's, 1)")
    parser.add_argument("--threads", type=int, help="QA_TRANSCRIBE_THREADS (default: the setting's, 0 = all cores)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="OPTION=JSON",
        help="a transcribe() option of the local recognizer, e.g. vad_filter=false or temperature=[0, 0.2]",
    )
    args = parser.parse_args()

    import django
    import numpy as np

    django.setup()
    from django.conf import settings

    from qa.transcription import recognizer_get, transcribe
    from tests.support.calls import SCRIPTS, stereo_call, word_error_rate

    if args.beam_size is not None:
        settings.QA_TRANSCRIBE_BEAM_SIZE = args.beam_size
    if args.threads is not None:
        settings.QA_TRANSCRIBE_THREADS = args.threads
    script = SCRIPTS[args.language]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "call.wav"
        if args.turns:
            said = stereo_call(script[: args.turns], language=args.language, out=path)
        else:
            once = stereo_call(script, language=args.language, out=path)
            repeat = max(1, round(args.minutes * 60_000 / (once[-1].end_ms + 500)))
            said = stereo_call(script, language=args.language, out=path, repeat=repeat)

        started = time.perf_counter()
        recognizer = recognizer_get()
        overrides = {key: json.loads(value) for key, value in (option.split("=", 1) for option in args.set)}
        recognizer = dataclasses.replace(recognizer, options={**recognizer.options, **overrides})
        # Loading the model happens on first use: a second of silence makes it happen here.
        recognizer.segments(np.zeros(16_000, dtype="float32"), role="agent", language=args.language)
        load_seconds = time.perf_counter() - started

        cpu_before = time.process_time()
        started = time.perf_counter()
        with path.open("rb") as audio:
            transcript = transcribe(
                audio, channels=2, agent_channel="left", language=args.language, recognizer=recognizer
            )
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_before

    audio_seconds = transcript.audio_seconds
    threads = settings.QA_TRANSCRIBE_THREADS or os.cpu_count()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    wer = word_error_rate(" ".join(turn.text for turn in said), " ".join(turn.text for turn in transcript.turns))
    print(
        f"model          {recognizer.name} {recognizer.model} (beam {settings.QA_TRANSCRIBE_BEAM_SIZE}, "
        f"threads {threads}, cores {os.cpu_count()}, options {json.dumps(recognizer.options)})"
    )
    print(
        f"call           {audio_seconds:.1f} s, two channels, {len(said)} turns spoken by espeak-ng ({args.language})"
    )
    print(f"model load     {load_seconds:.1f} s (first use in the process)")
    print(f"transcription  {wall:.1f} s wall, {cpu:.1f} s CPU")
    print(f"real-time      {audio_seconds / wall:.2f}x faster than real time (RTF {wall / audio_seconds:.3f})")
    # Load steals wall time, hardly CPU time: with the cores to itself the work takes its CPU time
    # spread over its threads at best, and all of it on one at worst.
    print(
        f"CPU per audio  {cpu / audio_seconds:.3f} CPU s per audio s: unloaded, {audio_seconds / cpu:.1f}x "
        f"(one core) to {audio_seconds * min(threads, os.cpu_count()) / cpu:.1f}x ({threads} threads) real time"
    )
    print(f"turns          {len(transcript.turns)} found, {len(said)} spoken")
    print(f"WER            {wer:.3f}")
    print(f"peak memory    {peak_mib:.0f} MiB (maximum resident set of this process)")
    print(f"load average   {' '.join(f'{value:.2f}' for value in os.getloadavg())}")


if __name__ == "__main__":
    main()
