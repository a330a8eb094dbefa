"""From bench/scale's measured figures to 10 million calls a month: processes, database size and the
judge's cost per call. See README.md beside this file.

    python -m bench.scale.arithmetic SYNC.json [BATCH.json] [--calls-per-month 10000000] [--peak 12]

Everything here is arithmetic on what a run measured (CPU per call per process type, bytes per call,
tokens per call) and on the stated assumptions below (the peak, the headroom, the prices); the cost per
call is qa.costs.call_cost, the one the judge's runs are priced with.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SECONDS_A_MONTH = 30 * 24 * 3600
# A process is planned at this share of one core at the peak (a Celery worker with a thread pool, a
# gunicorn worker and a PostgreSQL backend are each one process, bound to one core by Python's lock or
# by design): the rest is headroom for bursts, the pages, autovacuum and a process restarting.
HEADROOM = 0.6
# Tables whose rows grow with agents, teams and weeks or days, not with calls: the scorecards' weekly
# rollups and the reports' day rollups (insights, for a period's partial weeks).
ROLLUPS = ("reviews_scorecardweek", "reviews_criterionweek", "insights_scorecardday", "insights_criterionday")


@dataclass
class Prices:
    """Per million tokens, US dollars: input, cached input, output; the batch discount in percent."""

    name: str
    prompt_price: Decimal
    cached_prompt_price: Decimal
    completion_price: Decimal
    batch_discount: Decimal = Decimal(50)


# Assumptions, as published for OpenAI's API and read from third-party snapshots of its price page
# (deploybase.ai, March 2026: GPT-4.1 family and batch at half price; tokenmath.io, checked 2026-06-21:
# GPT-4.1 and 4.1 mini; ai.cloudprice.net, 2026-06-15: GPT-5 mini with cache reads at 0.025). The GPT-4.1
# family's cached input is a quarter of its input price, GPT-5 mini's a tenth. Check them before use.
PRICE_TABLES = [
    Prices("gpt-4.1", Decimal("2.00"), Decimal("0.50"), Decimal("8.00")),
    Prices("gpt-4.1-mini", Decimal("0.40"), Decimal("0.10"), Decimal("1.60")),
    Prices("gpt-4.1-nano", Decimal("0.10"), Decimal("0.025"), Decimal("0.40")),
    Prices("gpt-5-mini", Decimal("0.25"), Decimal("0.025"), Decimal("2.00")),
]


def cores(rate: float, ms_per_call: float) -> float:
    return rate * ms_per_call / 1000


def processes(rate: float, ms_per_call: float) -> int:
    return max(1, math.ceil(cores(rate, ms_per_call) / HEADROOM))


def role_ms(figures: dict, *names: str) -> float:
    return sum(ms for role, ms in figures["cpu_ms_per_call"].items() if role.startswith(names))


def sizing(figures: dict, average: float, peak: float, calls_per_month: int) -> list[str]:
    mode = figures["shape"]["mode"]
    web, workers = role_ms(figures, "web"), role_ms(figures, "judge worker")
    database, redis, beat = role_ms(figures, "postgresql"), role_ms(figures, "redis"), role_ms(figures, "beat")
    shape = figures["shape"]
    lines = [f"### {mode}, {shape['rate']:g} calls/s for {shape['minutes']:g} min: CPU per call web {web:.1f} ms, "
             f"judge workers {workers:.1f} ms, PostgreSQL {database:.1f} ms, Redis {redis:.1f} ms, beat {beat:.1f} ms"]
    lines.append("")
    lines.append("| process | CPU ms a call | cores at the average | cores at the peak | processes at the peak |")
    lines.append("| --- | --- | --- | --- | --- |")
    for name, ms in (("web (gunicorn workers)", web), ("judge workers", workers), ("PostgreSQL backends", database),
                     ("Redis", redis), ("beat", beat)):  # fmt: skip
        lines.append(f"| {name} | {ms:.1f} | {cores(average, ms):.2f} | {cores(peak, ms):.2f} | {processes(peak, ms)} |")
    total = web + workers + database + redis + beat
    lines.append(f"| **all** | **{total:.1f}** | **{cores(average, total):.2f}** | **{cores(peak, total):.2f}** | |")
    grown = figures["db_bytes_per_call"]
    whole = grown.get("(whole database)", 0)
    rollups = sum(grown.get(table, 0) for table in ROLLUPS)
    per_call = whole - rollups
    month = per_call * calls_per_month
    lines.append("")
    lines.append(
        f"Database: {whole:,} bytes a call measured, of which {rollups:,} the rollups (they grow with agents, "
        f"weeks and days, not calls): **{per_call:,} bytes a call, {month / 1e9:,.0f} GB a month** at "
        f"{calls_per_month:,} calls; kept 3 months {3 * month / 1e9:,.0f} GB, 13 months {13 * month / 1e12:,.1f} TB "
        "(WAL, backups and the rollups not counted)."
    )
    return lines


def costs(figures: dict, calls_per_month: int) -> list[str]:
    from qa.costs import call_cost

    tokens = figures["judged"]["tokens_per_call"]
    prompt, completion = round(tokens["prompt"]), round(tokens["completion"])
    cached = round(prompt * CACHED_SHARE)
    lines = [
        f"Tokens a call (measured by the scripted judge at 4 characters a token): {prompt:,} prompt, {completion:,} "
        f"completion; cached: none, or the rules and rubric, {cached:,} of the prompt ({CACHED_SHARE:.0%}).",
        "",
        "| judge | sync | sync, cached | batch | batch, cached | 10M a month: sync / batch, cached |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for prices in PRICE_TABLES:
        each = {
            (batch, hit): call_cost(judge=prices, prompt_tokens=prompt, completion_tokens=completion,
                                    cached_tokens=cached if hit else 0, batch=batch)  # fmt: skip
            for batch in (False, True)
            for hit in (False, True)
        }
        cells = " | ".join(f"${each[key]:.5f}" for key in ((False, False), (False, True), (True, False), (True, True)))
        month = f"${each[(False, False)] * calls_per_month:,.0f} / ${each[(True, True)] * calls_per_month:,.0f}"
        lines.append(f"| {prices.name} (${prices.prompt_price} / ${prices.cached_prompt_price} / "
                     f"${prices.completion_price}) | {cells} | {month} |")  # fmt: skip
    return lines


# The share of a call's prompt that is the same for every call of a rubric version (the rules, the rubric
# and the schema, first): 3,990 of the 4,158 tokens of a short sample call in this bench's estimate, the
# transcript's 1,220 tokens of a six-minute call added to that makes 5,212. A provider caches it when the
# same prefix came recently (OpenAI: 1,024 tokens or more), so the cached share is an upper bound.
CACHED_SHARE = 3990 / 5212


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figures", type=Path, nargs="+", help="bench/scale/run.py's JSON, one per mode")
    parser.add_argument("--calls-per-month", type=int, default=10_000_000)
    parser.add_argument("--peak", type=float, default=12.0, help="calls a second at the busiest hour")
    args = parser.parse_args()
    average = args.calls_per_month / SECONDS_A_MONTH
    print(f"{args.calls_per_month:,} calls a month: {average:.2f} a second on average, {args.peak:g} at the peak; "
          f"processes planned at {HEADROOM:.0%} of a core at the peak.")  # fmt: skip
    runs = [json.loads(path.read_text()) for path in args.figures]
    for figures in runs:
        print()
        print("\n".join(sizing(figures, average, args.peak, args.calls_per_month)))
    print()
    print("\n".join(costs(runs[0], args.calls_per_month)))


if __name__ == "__main__":
    main()
