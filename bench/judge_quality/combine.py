"""Combine one-call reports of the runner (`run.py --calls ID --json PART`) into one report, with the
figures computed again over all their pairs, and the run's provenance (model, date, machine, command):

    python -m bench.judge_quality.combine OUT PART... --machine TEXT --command TEXT

On a shared machine a long run is made one call at a time, so a cut-off keeps every call already judged;
this gives the same `calls`, `overall` and `criteria` as one run over those calls would.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.judge_quality.metrics import NOT_APPLICABLE, Pair, ceiling, figures  # noqa: E402
from bench.judge_quality.run import SET, labels_load, per_call  # noqa: E402


def _value(raw: object) -> int | None:
    return None if raw == NOT_APPLICABLE else raw  # type: ignore[return-value]


def combine(parts: list[dict], *, provenance: dict[str, object]) -> dict[str, object]:
    rows = [row for part in parts for row in part["calls"]]
    pairs = []
    for row in rows:
        for key, score in row["scores"].items():
            answered = score["value"] is not None or score["status"] not in ("", None)
            pairs.append(Pair(row["external_id"], key, _value(score["label"]), score["label_turn"],
                              answered=answered, value=_value(score["value"]) if answered else None,
                              verified=bool(score["verified"]), status=score["status"] or "",
                              confidence=score["confidence"], in_deciding_turn=score["in_deciding_turn"]))  # fmt: skip
    first, second = labels_load(SET / "labels"), labels_load(SET / "labels-second")
    chosen = {row["external_id"] for row in rows}
    ceiling_overall, ceiling_criteria = ceiling(
        {name: {key: label.value for key, label in first[name].items()} for name in chosen},
        {name: {key: label.value for key, label in labels.items()} for name, labels in second.items() if name in chosen},
    )
    empty = {"n": 0, "exact": None, "within_one": None, "qwk": None}
    criteria = {key: {**figures([pair for pair in pairs if pair.criterion == key]),
                      "human_ceiling": ceiling_criteria.get(key, empty)}
                for key in dict.fromkeys(pair.criterion for pair in pairs)}  # fmt: skip
    overall = {
        **figures(pairs),
        "calls": len(rows),
        "failed_calls": sum(bool(row["error"]) for row in rows),
        "prompt_tokens_per_call": per_call([row["prompt_tokens"] for row in rows]),
        "completion_tokens_per_call": per_call([row["completion_tokens"] for row in rows]),
        "seconds_per_call": per_call([row["seconds"] for row in rows]),
        "human_ceiling": ceiling_overall,
        "model": parts[0]["overall"]["model"],
        "evidence": parts[0]["overall"]["evidence"],
    }
    return {"provenance": provenance, "calls": rows, "overall": overall, "criteria": criteria}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("parts", type=Path, nargs="+")
    parser.add_argument("--machine", required=True)
    parser.add_argument("--command", required=True)
    args = parser.parse_args()
    parts = [json.loads(path.read_text(encoding="utf-8")) for path in args.parts]
    report = combine(parts, provenance={
        "model": parts[0]["overall"]["model"], "evidence": parts[0]["overall"]["evidence"],
        "combined_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": args.machine, "command": args.command, "parts": [path.name for path in args.parts],
    })  # fmt: skip
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    from bench.judge_quality.run import table

    print(table(report))


if __name__ == "__main__":
    main()
