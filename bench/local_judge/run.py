"""Local judge benchmark: the bundled SmolLM2-135M judging the Spanish sample calls.
See README.md beside this file.

    nice -n 10 .venv/bin/python bench/local_judge/run.py [--calls 8] [--direct 2] [--criteria 11] [--show]
        [--threads N] [--flash-attention auto|on|off] [--kv-cache f16|q8_0] [--shape compact|standard]

Each call goes to one llama.cpp server (xllamacpp, started by Veredicto's own `qa.local_model` in
this process) three ways, in this order:
1. `prompt`: Veredicto's request (messages, schema) posted with urllib for one token of answer:
   the server's timings say how many prompt tokens it processed beyond its prompt cache (the rules
   and rubric, shared by every call, stay cached) and how fast. The first call finds nothing
   cached, so its speed is over the whole prompt.
2. `direct` (the first `--direct` calls): the same request with Veredicto's token limit, posted
   with urllib: xllamacpp's own server on the request, its generation speed from its timings.
3. `veredicto`: `qa.judging.judgment_make`, the production path (prompt, schema, budget, the
   `openai` client, validation, quote verification), nothing stored. Its prompt is cached by then,
   so its time is the answer's generation and Veredicto's own work.
A call's time is then `prompt` + `veredicto`; the estimates charge each call its `prompt` tokens
at a prompt speed and its `veredicto` completion tokens at a generation speed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# Idle speeds of this model on this machine (issue 18): prompt processing, generation.
IDLE_PROMPT_SPEED = 140.0
IDLE_GENERATION_SPEED = 19.0
LIMIT_HIT = "The answer was cut off by the token limit."


def sample_calls(count: int) -> list[tuple[str, str]]:
    """(external id, transcript) of the Spanish sample calls that come as text."""
    import yaml

    calls = []
    for path in sorted((ROOT / "samples" / "recordings").glob("es-*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if "transcript" in data:
            calls.append((data["external_id"], data["transcript"]))
    return calls[:count]


def sample_rubric(criteria: int):
    """The Spanish sample rubric, published; with fewer criteria, a copy of it with its first ones."""
    import dataclasses

    from rubrics.rubric_file import rubric_spec_of, rubric_spec_parse
    from access.scope import EVERYTHING
    from rubrics.selectors import rubric_latest_published
    from rubrics.services import rubric_import

    spec = rubric_spec_parse((ROOT / "samples" / "rubrics" / "soporte-cobranzas.yaml").read_text(encoding="utf-8"))
    if criteria < len(spec.criteria):
        spec = dataclasses.replace(spec, slug=f"{spec.slug}-{criteria}", criteria=spec.criteria[:criteria])
    current = rubric_latest_published(slug=spec.slug, scope=EVERYTHING)
    if current is not None and rubric_spec_of(current) == spec:
        return current
    return rubric_import(spec=spec, publish=True)


def cpu_seconds() -> float:
    # The llama.cpp server runs in threads of this process: its CPU time is counted here.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load_average() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def direct(backend, messages, schema, max_tokens: int) -> dict:
    """The same request straight to the llama.cpp server; its answer's timings."""
    from qa.llm import request_constraint

    body = {
        "model": backend.model,
        "messages": messages,
        "temperature": 0.0,
        "max_tokens": max_tokens,
        **request_constraint(backend, schema).get("extra_body", {}),
    }
    request = urllib.request.Request(
        f"{backend.client.base_url}chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    started, cpu = time.monotonic(), cpu_seconds()
    with urllib.request.urlopen(request, timeout=1800) as response:
        answer = json.load(response)
    timings = answer.get("timings", {})
    return {
        "seconds": time.monotonic() - started,
        "cpu": cpu_seconds() - cpu,
        "prompt_tokens": answer["usage"]["prompt_tokens"],
        "processed": timings.get("prompt_n"),
        "completion_tokens": answer["usage"]["completion_tokens"],
        "prompt_speed": timings.get("prompt_per_second"),
        "generation_speed": timings.get("predicted_per_second"),
        "limit": answer["choices"][0]["finish_reason"] == "length",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=8, help="how many Spanish sample calls (at most 8)")
    parser.add_argument("--direct", type=int, default=2, help="how many calls also go straight to the server in full")
    parser.add_argument("--criteria", type=int, default=11, help="judge only the rubric's first N criteria (a smoke run)")
    parser.add_argument("--show", action="store_true", help="print each answer as the model wrote it")
    parser.add_argument("--port", type=int, default=18747, help="the llama.cpp server's loopback port")
    parser.add_argument("--threads", type=int, default=0, help="QA_LOCAL_MODEL_THREADS (0: llama.cpp decides)")
    parser.add_argument("--flash-attention", default="auto", help="QA_LOCAL_MODEL_FLASH_ATTENTION: auto, on, off")
    parser.add_argument("--kv-cache", default="f16", help="QA_LOCAL_MODEL_KV_CACHE: f16, q8_0")
    parser.add_argument("--shape", default="compact", help="QA_LOCAL_ANSWER_SHAPE: compact, standard")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_bench_local_judge")
    os.environ["QA_LOCAL_MODEL_PORT"] = str(args.port)
    os.environ.setdefault("QA_LLM_TIMEOUT", "3600")  # a loaded machine must not cut a call short
    os.environ["QA_LOCAL_MODEL_THREADS"] = str(args.threads)
    os.environ["QA_LOCAL_MODEL_FLASH_ATTENTION"] = args.flash_attention
    os.environ["QA_LOCAL_MODEL_KV_CACHE"] = args.kv_cache
    os.environ["QA_LOCAL_ANSWER_SHAPE"] = args.shape
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "QA_LOCAL_MODEL_PATH"):
        os.environ.pop(name, None)  # the bundled model, whatever the shell says
    from bench.database import database_create

    database_create()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from qa.judging import asking_prepare, judgment_make
    from qa.local_model import local_server_ensure

    print(f"load before: {load_average()}")
    started = time.monotonic()
    server = local_server_ensure()
    print(f"server start: {time.monotonic() - started:.1f} s ({server.model}; threads {args.threads or 'auto'}, "
          f"flash attention {args.flash_attention}, KV cache {args.kv_cache}, answer shape {args.shape})")
    asking = asking_prepare(rubric=sample_rubric(args.criteria), judge=None)
    question = asking.question
    print(f"criteria {len(question.criteria)}, token limit {question.max_tokens}, prompt version {question.prompt.version}")

    header = f"{'call':<8}{'path':<11}{'s':>7}{'cpu s':>7}{'prompt':>8}{'new':>6}{'compl':>7}{'pp t/s':>8}{'gen t/s':>8}  limit"
    print(header)
    rows = []

    def show(external_id: str, path: str, m: dict, extra: str = "") -> None:
        def cell(key: str, width: int, digits: int = 0) -> str:
            value = m.get(key)
            return f"{'':>{width}}" if value is None else f"{value:>{width}.{digits}f}"

        limit = "" if m.get("limit") is None else ("HIT" if m["limit"] else "no")
        print(f"{external_id:<8}{path:<11}{cell('seconds', 7, 1)}{cell('cpu', 7, 1)}{cell('prompt_tokens', 8)}"
              f"{cell('processed', 6)}{cell('completion_tokens', 7)}{cell('prompt_speed', 8, 1)}"
              f"{cell('generation_speed', 8, 1)}  {limit:<5}  {extra}", flush=True)

    for number, (external_id, transcript) in enumerate(sample_calls(args.calls)):
        messages = question.prompt.messages(transcript=transcript)
        # The prompt alone (one token of answer): what the server processes for this call beyond
        # its cache, and how fast. What follows finds the whole prompt cached and only generates.
        row = {"call": external_id, "prompt": direct(asking.backend, messages, question.schema, 1)}
        show(external_id, "prompt", {**row["prompt"], "completion_tokens": None, "generation_speed": None, "limit": None})
        if number < args.direct:
            row["direct"] = direct(asking.backend, messages, question.schema, question.max_tokens)
            show(external_id, "direct", {**row["direct"], "processed": None, "prompt_speed": None})
        call_started, cpu = time.monotonic(), cpu_seconds()
        judgment = judgment_make(asking=asking, transcript=transcript)
        seconds = time.monotonic() - call_started
        completion = judgment.usage.get("completion_tokens") or 0
        if judgment.scores:
            verified = sum(draft.fields["evidence_verified"] for draft in judgment.scores)
            result = f"ok, {verified}/{len(judgment.scores)} quotes verified"
        else:
            result = f"failed: {(judgment.error or str(judgment.retry))[:90]}"
        row["veredicto"] = {
            "seconds": seconds,
            "cpu": cpu_seconds() - cpu,
            "prompt_tokens": judgment.usage.get("prompt_tokens"),
            "completion_tokens": completion,
            "generation_speed": completion / seconds,
            "limit": judgment.error == LIMIT_HIT or completion >= question.max_tokens,
        }
        rows.append(row)
        show(external_id, "veredicto", row["veredicto"], result)
        if args.show:
            print(judgment.usage.get("raw_output"), flush=True)

    print(f"load after: {load_average()}")
    veredicto = [row["veredicto"] for row in rows]
    print(f"\nVeredicto: median completion {statistics.median(v['completion_tokens'] for v in veredicto):.0f} tokens, "
          f"max {max(v['completion_tokens'] for v in veredicto)} of the limit {question.max_tokens}, "
          f"limit hit {sum(v['limit'] for v in veredicto)}/{len(veredicto)}")
    calls = [row["prompt"]["seconds"] + row["veredicto"]["seconds"] for row in rows]
    print(f"measured call time (prompt + answer, at this load): median {statistics.median(calls):.1f} s, "
          f"max {max(calls):.1f} s")
    measured_pp = rows[0]["prompt"]["prompt_speed"]
    measured_gen = statistics.median(v["generation_speed"] for v in veredicto)
    print(f"measured speeds: prompt {measured_pp:.1f} t/s (first call, {rows[0]['prompt']['processed']} tokens, "
          f"nothing cached), generation {measured_gen:.1f} t/s (median of the Veredicto calls)")
    for label, pp, gen in (("the issue's idle speeds", IDLE_PROMPT_SPEED, IDLE_GENERATION_SPEED),
                           ("the measured speeds", measured_pp, measured_gen)):
        # Each call pays for the prompt tokens the server did not have cached, and for its answer.
        estimates = [row["prompt"]["processed"] / pp + row["veredicto"]["completion_tokens"] / gen for row in rows]
        print(f"estimated call time at {label} ({pp:.0f} / {gen:.0f} t/s): median {statistics.median(estimates):.1f} s, "
              f"max {max(estimates):.1f} s; the first call (whole prompt) {estimates[0]:.1f} s")


if __name__ == "__main__":
    main()
