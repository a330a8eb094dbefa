"""Prompt cache benchmark: the share of prompt tokens the bundled llama.cpp server does not process
again, with the static part (rules, rubric) first and the transcript last, against the transcript first.
See README.md beside this file.

    nice -n 10 .venv/bin/python bench/prompt_cache/run.py [--calls 4] [--criteria 11] [--port 18748]

Both layouts send the same words; each call asks for one token of answer, so its time is the prompt's.
- `before`: one user message, the transcript first and the rules and rubric after it (the call's own
  text ahead of what every call shares).
- `after`: Veredicto's request (qa.prompt): the system message (rules, rubric) first, byte-identical
  for every call of a rubric version, the transcript last.
For each call the server's timings say how many prompt tokens it processed (`prompt_n`) and how many it
took from its cache (`cache_n`); its usage's `prompt_tokens_details.cached_tokens` is printed where
it reports one. Then one call through `qa.llm.llm_complete` shows the cached tokens Veredicto records.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "local_judge"))


def post(base_url: str, body: dict) -> dict:
    request = urllib.request.Request(
        f"{base_url}chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=3600) as response:
        answer = json.load(response)
    answer["seconds"] = time.monotonic() - started
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=4, help="Spanish sample calls per layout (at most 8)")
    parser.add_argument("--criteria", type=int, default=11, help="the sample rubric's first N criteria")
    parser.add_argument("--port", type=int, default=18748, help="the llama.cpp server's loopback port")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_bench_local_judge")
    os.environ["QA_LOCAL_MODEL_PORT"] = str(args.port)
    os.environ.setdefault("QA_LLM_TIMEOUT", "3600")
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "QA_LOCAL_MODEL_PATH"):
        os.environ.pop(name, None)  # the bundled model, whatever the shell says
    from bench.database import database_create

    database_create()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from run import load_average, sample_calls, sample_rubric  # bench/local_judge/run.py

    from qa.judging import asking_prepare
    from qa.llm import llm_complete, request_constraint
    from qa.prompt import transcript_message

    print(f"load before: {load_average()}")
    asking = asking_prepare(rubric=sample_rubric(args.criteria), judge=None)
    backend, question = asking.backend, asking.question
    base_url = str(backend.client.base_url)
    calls = sample_calls(args.calls)
    constraint = request_constraint(backend, question.schema).get("extra_body", {})

    def layout(name: str, transcript: str) -> list[dict[str, str]]:
        if name == "after":
            return question.prompt.messages(transcript=transcript)
        return [{"role": "user", "content": transcript_message(transcript=transcript) + "\n\n" + question.prompt.system}]

    totals = {}
    print(f"{'layout':<8}{'call':<8}{'prompt':>8}{'processed':>11}{'cache_n':>9}{'cached_tokens':>15}{'s':>7}")
    for name in ("before", "after"):
        prompt = processed = 0
        for external_id, transcript in calls:
            answer = post(base_url, {"model": backend.model, "messages": layout(name, transcript), "temperature": 0.0,
                                     "max_tokens": 1, **constraint})
            timings, usage = answer.get("timings", {}), answer["usage"]
            cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
            prompt += usage["prompt_tokens"]
            processed += timings["prompt_n"]
            print(f"{name:<8}{external_id:<8}{usage['prompt_tokens']:>8}{timings['prompt_n']:>11}"
                  f"{timings.get('cache_n', ''):>9}{cached if cached is not None else '-':>15}{answer['seconds']:>7.1f}",
                  flush=True)
        totals[name] = (prompt, processed)
    for name, (prompt, processed) in totals.items():
        print(f"{name}: {prompt} prompt tokens, {processed} processed, "
              f"{1 - processed / prompt:.1%} not processed again")
    # The production path: the client's usage, as qa.judging stores it on the run (JudgeRun.cached_tokens).
    external_id, transcript = calls[-1]
    completion = llm_complete(backend=backend, messages=question.prompt.messages(transcript=transcript),
                              schema=question.schema, max_tokens=1)
    print(f"llm_complete on {external_id} again: prompt_tokens {completion.prompt_tokens}, "
          f"cached_tokens {completion.cached_tokens}")
    print(f"load after: {load_average()}")


if __name__ == "__main__":
    main()
