"""Redaction cost per 6 KB transcript: the pattern recognizers alone, and with the spaCy model;
the model's load time and memory. See bench/redaction/README.md.

    python -m bench.redaction.run                   # 40 transcripts per language
    python -m bench.redaction.run --transcripts 5 --language es
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import statistics
import time

from bench.redaction.corpus import card_variants, corpus, measure
from qa.redaction import engine

SIZE = 6 * 1024  # bytes of UTF-8


def transcripts(language: str, count: int) -> list[str]:
    """`count` distinct transcripts of about 6 KB, each made of whole lines of the corpus's calls."""
    lines = [line + "\n" for call in corpus(language) for line in call.text.splitlines()]
    result, current, position = [], "", 0
    while len(result) < count:
        line = lines[position % len(lines)]
        position += 1
        if len((current + line).encode()) > SIZE:
            result.append(current)
            current = ""
        current += line
    return result


def rss_mb() -> float:
    """The process's resident memory now (not its peak), in MB."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def cpu_ms(function, texts: list[str]) -> list[float]:
    times = []
    for text in texts:
        start = time.process_time()
        function(text)
        times.append((time.process_time() - start) * 1000)
    return times


def describe(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(times):6.1f} ms   mean {statistics.fmean(times):6.1f} ms   p95 {p95:6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transcripts", type=int, default=40)
    parser.add_argument("--language", choices=["es", "en"], action="append")
    parser.add_argument("--load-only", choices=["es", "en"], help=argparse.SUPPRESS)
    parser.add_argument("--recall", action="store_true", help="recall and look-alike survival instead of times")
    args = parser.parse_args()
    if args.load_only:
        return _load_only(args.load_only)
    if args.recall:
        return _recall(args.language or ["es", "en"])
    print(f"{args.transcripts} transcripts of about {SIZE // 1024} KB per language; CPU time of this process")
    for language in args.language or ["es", "en"]:
        texts = transcripts(language, args.transcripts)
        patterns = engine.analyzer(language, names=False)
        engine.find(texts[0], language, names=False)  # warm: regex compilation, first-call caches
        pattern_times = cpu_ms(lambda text: engine.find(text, language, names=False), texts)

        load = load_cost(language)
        engine.find(texts[0], language)
        full_times = cpu_ms(lambda text: engine.find(text, language), texts)
        replace_times = cpu_ms(
            lambda text: engine.redact(text, engine.find(text, language), placeholder_language=language), texts
        )
        model = engine.MODELS[language] if engine.model_available(language) else "none (blank tokenizer)"
        print(f"\n{language}: {statistics.fmean(len(text.encode()) for text in texts):.0f} bytes per transcript on average")
        print(f"  pattern recognizers only:            {describe(pattern_times)}   (target <= 20 ms)")
        print(f"  with the spaCy model ({model}): {describe(full_times)}")
        print(f"  the model's share:                   {statistics.median(full_times) - statistics.median(pattern_times):6.1f} ms median")
        print(f"  find + replace (Presidio anonymizer): {describe(replace_times)}")
        print(f"  model load (a fresh process): {load['cpu']:.2f} s CPU, {load['wall']:.2f} s wall, "
              f"+{load['rss']:.0f} MB resident (process then {load['total']:.0f} MB)")
        del patterns


def _recall(languages: list[str]) -> None:
    """Recall per entity type and look-alikes kept, on the whole corpus and on its card variants alone
    (corpus.card_variants: other separators, a card dictated across two turns)."""
    for language in languages:
        def find(text, language, keep_names):
            return engine.find(text, language, keep_names=keep_names)

        for name, calls in (("corpus", corpus(language)), ("card variants", card_variants(language))):
            scores = measure(calls, find)
            recalls = ", ".join(f"{kind} {scores.recall(kind):.3f} ({scores.total[kind]})" for kind in sorted(scores.total))
            print(f"{language} {name}: {recalls}")
            print(f"  look-alikes kept {scores.kept_rate():.3f} of {sum(scores.lookalikes.values())}; "
                  f"found where nothing is labelled: {len(scores.extra)}; labels touched: {scores.labels_touched}")
            print(f"  misses {scores.misses[:5]}; masked look-alikes {scores.masked_lookalikes[:5]}; "
                  f"unlabelled finds {scores.extra[:5]}")


def load_cost(language: str) -> dict:
    """The model's load, measured in a fresh process so that nothing loaded before is counted or shared."""
    output = subprocess.run(
        [sys.executable, "-m", "bench.redaction.run", "--load-only", language],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    return json.loads(output.splitlines()[-1])


def _load_only(language: str) -> None:
    engine.analyzer(language, names=False)  # Presidio and the patterns: not the model's cost
    before_rss, before_cpu, before_wall = rss_mb(), time.process_time(), time.perf_counter()
    engine.analyzer(language, names=True)
    print(json.dumps({"cpu": time.process_time() - before_cpu, "wall": time.perf_counter() - before_wall,
                      "rss": rss_mb() - before_rss, "total": rss_mb()}))


if __name__ == "__main__":
    main()
