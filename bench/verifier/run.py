"""Benchmark: qa.evidence.verify_evidence against the plain substring baseline, side by side.

Run from the repository root:  python -m bench.verifier.run [--recordings 40] [--seed 2026] [--previous REV]

Prints, for both verifiers on the same labelled corpus, what each kind of quote got, the
false-accept and false-reject rates, and the time per recording: a 60-minute transcript
(~9,000 words) never seen before, its preparation included, then its 12 quotes.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from bench.verifier import baseline, corpus
from qa import evidence
from qa.evidence import VERIFIER_VERSION, verify_evidence

Verifier = Callable[[str, str], bool]

VERIFIERS: dict[str, Verifier] = {
    "baseline": baseline.baseline_verify,
    "verifier": lambda evidence, transcript: verify_evidence(evidence, transcript).verified,
}


def accuracy(cases: list[corpus.Case]) -> None:
    verdicts = {name: [verify(case.evidence, case.transcript) for case in cases] for name, verify in VERIFIERS.items()}
    by_kind: dict[str, list[int]] = defaultdict(list)
    for n, case in enumerate(cases):
        by_kind[case.kind].append(n)
    print(f"{'kind':<16}{'cases':>6}  {'should':<7}" + "".join(f"{name + ' accepts':>18}" for name in VERIFIERS))
    for kind, numbers in by_kind.items():
        should = "accept" if cases[numbers[0]].accept else "refuse"
        row = "".join(f"{sum(verdicts[name][n] for n in numbers):>18}" for name in VERIFIERS)
        print(f"{kind:<16}{len(numbers):>6}  {should:<7}{row}")

    accepted = [n for n, case in enumerate(cases) if case.accept]
    refused = [n for n, case in enumerate(cases) if not case.accept]
    print(f"\n{'':<30}" + "".join(f"{name:>18}" for name in VERIFIERS))
    for label, numbers, wrong in (("false accepts (of refused)", refused, True), ("false rejects (of accepted)", accepted, False)):
        cells = []
        for name in VERIFIERS:
            errors = sum(verdicts[name][n] is wrong for n in numbers)
            cells.append(f"{errors}/{len(numbers)} = {100 * errors / len(numbers):.2f}%")
        print(f"{label:<30}" + "".join(f"{cell:>18}" for cell in cells))

    mistakes = [cases[n] for n in range(len(cases)) if verdicts["verifier"][n] != cases[n].accept]
    for case in mistakes[:10]:
        print(f"  verifier wrong on {case.kind} ({case.source}): {case.evidence!r}")


def measure(recordings: list[corpus.Recording], previous: tuple[str, ModuleType] | None) -> dict[str, list[float]]:
    """CPU seconds per recording for each verifier; the order alternates so neither always runs first.

    Run before anything else has seen these transcripts, so each is prepared from scratch. CPU time
    of this process, not wall time, so that other work on a shared machine does not count.
    """
    times: dict[str, list[float]] = defaultdict(list)
    for number, recording in enumerate(recordings):
        order = list(VERIFIERS) if number % 2 == 0 else list(reversed(VERIFIERS))
        for name in order:
            times[name].append(_time_recording(VERIFIERS[name], recording))
        times["baseline, normalising once"].append(_time_baseline_normalized_once(recording))
        times["verifier, preparation alone"].append(_time_preparation(evidence, recording))
        for verified, seconds in _time_quotes(recording):
            times["verifier, a quote that verifies" if verified else "verifier, a quote that does not"].append(seconds)
        if previous:
            revision, module = previous
            verify = lambda quote, transcript: module.verify_evidence(quote, transcript).verified  # noqa: E731
            times[f"verifier at {revision}"].append(_time_recording(verify, recording))
            times[f"verifier at {revision}, preparation"].append(_time_preparation(module, recording))
    return times


def report_timing(recordings: list[corpus.Recording], times: dict[str, list[float]]) -> None:
    words = statistics.mean(recording.words for recording in recordings)
    quotes = statistics.mean(len(recording.cases) for recording in recordings)
    print(f"\ntime per recording: {len(recordings)} recordings of {words:,.0f} words and {quotes:.0f} quotes on average,")
    print("each transcript seen for the first time (its preparation included); CPU time of this process")
    print(f"{'':<30}{'median ms':>12}{'mean ms':>12}")
    for name, values in times.items():
        print(f"{name:<30}{1000 * statistics.median(values):>12.2f}{1000 * statistics.mean(values):>12.2f}")
    ratio = statistics.median(times["verifier"]) / statistics.median(times["baseline"])
    print(f"verifier / baseline (medians): {ratio:.3f}  (target <= 0.5)")
    normalising_once = statistics.median(times["baseline, normalising once"])
    print(f"verifier / baseline normalising once (medians): {statistics.median(times['verifier']) / normalising_once:.3f}")
    # A call whose quotes all verify (what a good judge writes): the preparation and 12 such quotes.
    all_verified = statistics.median(times["verifier, preparation alone"]) + 12 * statistics.median(
        times["verifier, a quote that verifies"]
    )
    print(f"a call whose 12 quotes verify, estimated from the medians: {1000 * all_verified:.2f} ms", end="")
    print(f" = {all_verified / normalising_once:.3f} x baseline normalising once")
    print("(baseline, normalising once: the same substring test with the transcript normalised once per")
    print(" recording instead of once per quote; not a drop-in verify(evidence, transcript), shown for reference)")


# How many of a call's quotes do not verify: none, one, two, or all its refused ones (6 of 12, this
# corpus' extreme mix). The first unverified quote that needs the closest passage (paraphrase or
# not found) pays for the transcript's word index once; the others only for their own search.
UNVERIFIED_MIXES = (0, 1, 2, None)


def measure_mixes(recordings: list[corpus.Recording]) -> dict[str, list[float]]:
    """CPU seconds per recording of the verifier and the baseline normalising once, on each recording's
    quotes to accept plus the first ``k`` of its quotes to refuse; each transcript prepared from scratch."""
    times: dict[str, list[float]] = defaultdict(list)
    verify = VERIFIERS["verifier"]
    for number, recording in enumerate(recordings):
        accepted = [case for case in recording.cases if case.accept]
        refused = [case for case in recording.cases if not case.accept]
        for mix in UNVERIFIED_MIXES:
            chosen = corpus.Recording(recording.transcript, recording.words, accepted + refused[:mix])
            label = f"its quotes to accept + {'all' if mix is None else mix} to refuse"
            for name in ("verifier", "baseline once") if number % 2 == 0 else ("baseline once", "verifier"):
                if name == "verifier":
                    evidence._prepare.cache_clear()
                    times[f"{label}: verifier"].append(_time_recording(verify, chosen))
                else:
                    times[f"{label}: baseline once"].append(_time_baseline_normalized_once(chosen))
    return times


def report_mixes(times: dict[str, list[float]]) -> None:
    print("\nby how many quotes of a call do not verify (medians per recording, CPU ms):")
    print(f"{'':<40}{'verifier':>12}{'baseline once':>15}{'ratio':>8}")
    labels = dict.fromkeys(name.rsplit(": ", 1)[0] for name in times)
    for label in labels:
        ours, theirs = (statistics.median(times[f"{label}: {name}"]) for name in ("verifier", "baseline once"))
        print(f"{label:<40}{1000 * ours:>12.2f}{1000 * theirs:>15.2f}{ours / theirs:>8.3f}")


def _time_recording(verify: Verifier, recording: corpus.Recording) -> float:
    gc.collect()
    start = time.process_time()
    for case in recording.cases:
        verify(case.evidence, recording.transcript)
    return time.process_time() - start


def _time_preparation(module: ModuleType, recording: corpus.Recording) -> float:
    """A verifier's per-transcript work alone (turns, normalised words), uncached."""
    gc.collect()
    start = time.process_time()
    module._prepare.__wrapped__(recording.transcript)
    return time.process_time() - start


def _time_quotes(recording: corpus.Recording) -> list[tuple[bool, float]]:
    """Each quote alone on the already prepared transcript: (verified, CPU seconds)."""
    timed = []
    for case in recording.cases:
        start = time.process_time()
        verified = verify_evidence(case.evidence, recording.transcript).verified
        timed.append((verified, time.process_time() - start))
    return timed


def previous_module(revision: str) -> ModuleType:
    """qa/evidence.py as it was at a git revision, to time before and after in one run."""
    source = subprocess.run(["git", "show", f"{revision}:qa/evidence.py"], capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "previous_evidence.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("previous_evidence", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return module


def _time_baseline_normalized_once(recording: corpus.Recording) -> float:
    gc.collect()
    start = time.process_time()
    normalized = baseline.normalize(recording.transcript)
    for case in recording.cases:
        baseline.verify_normalized(case.evidence, normalized)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=40, help="60-minute recordings to time (default 40)")
    parser.add_argument("--seed", type=int, default=2026, help="corpus seed (default 2026)")
    parser.add_argument("--previous", metavar="REV", help="also time qa/evidence.py as it was at this git revision")
    args = parser.parse_args()
    previous = (args.previous, previous_module(args.previous)) if args.previous else None

    calls = corpus.call_corpus(seed=args.seed)
    recordings = corpus.recordings(args.recordings, seed=args.seed + 1)
    long_cases = [case for recording in recordings for case in recording.cases]
    print(f"verifier {VERIFIER_VERSION}, Python {platform.python_version()}")
    print(f"corpus: {len(calls)} quotes on {len(corpus.CALLS)} hand-written calls (clean and ASR-style), ", end="")
    print(f"{len(long_cases)} quotes on {len(recordings)} 60-minute recordings\n")
    times = measure(recordings, previous)
    mixes = measure_mixes(recordings)
    accuracy(calls + long_cases)
    report_timing(recordings, times)
    report_mixes(mixes)


if __name__ == "__main__":
    main()
