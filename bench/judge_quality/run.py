"""Judge-quality benchmark: how a judge's scores of the labelled calls agree with a careful supervisor's.
See README.md beside this file.

    python -m bench.judge_quality.run --base-url URL --model NAME [--evidence quote|reference]
        [--api-key-env VAR] [--calls GLOB] [--json OUT] [--set DIR]

Every call of the set is judged through Veredicto's own path, `qa.judging.judgment_make` (the prompt,
the answer schema and its checks, the `openai` client, redaction and the evidence verifier), nothing
stored; its answers are compared with labels/ and the two labellings (labels/, labels-second/) with each
other for the human ceiling.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
SET = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.judge_quality.metrics import NOT_APPLICABLE, Pair, ceiling, figures  # noqa: E402

EVIDENCE_MODES = ("quote", "reference")
TRANSIENT_ATTEMPTS = 3  # a rate limit or a dropped connection should not cost a call its figures


@dataclass(frozen=True)
class Call:
    external_id: str
    rubric: str
    transcript: str


@dataclass(frozen=True)
class Label:
    value: int | None  # None: n/a
    turn: int | None


def label_value(raw: object, where: str) -> int | None:
    if raw == NOT_APPLICABLE:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ValueError(f"{where}: value {raw!r} is neither an integer nor {NOT_APPLICABLE!r}.")
    return raw


def calls_load(folder: Path, pattern: str = "*") -> list[Call]:
    import yaml

    calls = []
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if fnmatch.fnmatchcase(data["external_id"], pattern):
            calls.append(Call(data["external_id"], data["rubric"], data["transcript"]))
    return calls


def labels_load(folder: Path) -> dict[str, dict[str, Label]]:
    """external id -> criterion -> label, from every file of `folder` (none: an empty labelling)."""
    import yaml

    labels = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        labels[data["external_id"]] = {
            key: Label(label_value(entry["value"], f"{folder.name}/{path.name} {key}"), entry.get("turn"))
            for key, entry in data["criteria"].items()
        }
    return labels


def django_ready() -> None:
    """Django set up on the benchmark's own database (made and migrated on first use); nothing to do
    when the caller (the test suite) has set it up already."""
    from django.apps import apps

    if apps.ready:
        return
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_bench_judge_quality")
    from bench.database import database_create

    database_create()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def rubric_published(slug: str):
    """The sample rubric `slug`, published as samples/rubrics/ has it (imported again if it changed)."""
    from access.scope import EVERYTHING
    from rubrics.rubric_file import rubric_spec_of, rubric_spec_parse
    from rubrics.selectors import rubric_latest_published
    from rubrics.services import rubric_import

    path = ROOT / "samples" / "rubrics" / f"{slug}.yaml"
    if not path.is_file():
        raise ValueError(f"A call names the rubric {slug!r}, which samples/rubrics/ does not have.")
    spec = rubric_spec_parse(path.read_text(encoding="utf-8"))
    current = rubric_latest_published(slug=spec.slug, scope=EVERYTHING)
    if current is not None and rubric_spec_of(current) == spec:
        return current
    return rubric_import(spec=spec, publish=True)


def judge_for(*, base_url: str, model: str, api_key_env: str, evidence: str = "quote"):
    """An unsaved judge row: the server and model the command line names, its key read from `api_key_env`.
    OpenAI's own API is named the way a judge row names it, by no base URL: the product then asks it for
    the answer shape its strict mode accepts (no maxLength)."""
    from qa.models import OPENAI_API_HOST, Judge

    own_api = (urlsplit(base_url).hostname or "").lower() == OPENAI_API_HOST
    return Judge(name="judge-quality-bench", backend=Judge.Backend.OPENAI_COMPATIBLE,
                 base_url="" if own_api else base_url, model=model, api_key_variable=api_key_env,
                 evidence_mode=evidence)


def judgment_with_retries(asking, transcript: str):
    from qa.judging import judgment_make

    for attempt in range(1, TRANSIENT_ATTEMPTS + 1):
        judgment = judgment_make(asking=asking, transcript=transcript)
        if judgment.retry is None or attempt == TRANSIENT_ATTEMPTS:
            return judgment
        time.sleep(judgment.retry.retry_after or 2.0 * attempt)
    raise AssertionError("unreachable")


def touches(spans: Sequence[Sequence[int]], turn: int, transcript: str) -> bool:
    """Whether any of the verified evidence's spans (offsets into `transcript`) lies in turn `turn` (1-based)."""
    from qa.evidence import parse_turns

    turns = parse_turns(transcript)
    if not 1 <= turn <= len(turns):
        return False
    label_start = transcript.rfind("\n", 0, turns[turn - 1].start) + 1  # the turn's label belongs to it too
    end = turns[turn - 1].end
    return any(start < end and stop > label_start for start, stop in spans)


def call_pairs(call: Call, labels: dict[str, Label], judgment) -> list[Pair]:
    """The call's (criterion, label, judge's answer) pairs, in the label file's order."""
    answers = {draft.criterion.key: draft.fields for draft in judgment.scores}
    pairs = []
    for key, label in labels.items():
        fields = answers.get(key)
        if fields is None:
            pairs.append(Pair(call.external_id, key, label.value, label.turn))
            continue
        verified = bool(fields["evidence_verified"])
        pairs.append(Pair(
            call.external_id, key, label.value, label.turn,
            answered=True,
            value=fields["value"],
            verified=verified,
            status=fields["verification_status"],
            confidence=fields["model_confidence"],
            in_deciding_turn=(
                touches(fields["verification_spans"], label.turn, call.transcript)
                if verified and label.turn is not None else None
            ),
        ))  # fmt: skip
    return pairs


def per_call(values: list[float | int | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) / len(known) if known else None


def evaluate(
    *, calls: list[Call], first: dict[str, dict[str, Label]], second: dict[str, dict[str, Label]],
    base_url: str, model: str, api_key_env: str = "", evidence: str = "quote", progress=print,
) -> dict[str, object]:
    """Judge every call and compute the report: {"calls": [...], "overall": {...}, "criteria": {...}}."""
    from django.conf import settings
    from django.test import override_settings

    from qa.judging import asking_prepare

    if evidence not in EVIDENCE_MODES:
        raise ValueError(f"--evidence is {evidence!r}: use one of {', '.join(EVIDENCE_MODES)}.")
    unlabelled = [call.external_id for call in calls if call.external_id not in first]
    if unlabelled:
        raise ValueError(f"Calls without a label file in labels/: {', '.join(unlabelled)}.")
    judge = judge_for(base_url=base_url, model=model, api_key_env=api_key_env, evidence=evidence)
    # The command line is the operator here: the server and key it names are the ones allowed.
    allowed = {
        "QA_JUDGE_ALLOWED_HOSTS": [*settings.QA_JUDGE_ALLOWED_HOSTS, urlsplit(base_url).hostname or ""],
        "QA_JUDGE_KEY_VARIABLES": [*settings.QA_JUDGE_KEY_VARIABLES, *filter(None, [api_key_env])],
    }
    rows, pairs = [], []
    with override_settings(**allowed):
        askings = {
            slug: asking_prepare(rubric=rubric_published(slug), judge=judge)
            for slug in dict.fromkeys(call.rubric for call in calls)
        }
        for call in calls:
            started = time.monotonic()
            judgment = judgment_with_retries(askings[call.rubric], call.transcript)
            seconds = time.monotonic() - started
            judged = call_pairs(call, first[call.external_id], judgment)
            pairs += judged
            error = judgment.error or (str(judgment.retry) if judgment.retry else "")
            rows.append({
                "external_id": call.external_id,
                "rubric": call.rubric,
                "seconds": round(seconds, 3),
                "prompt_tokens": judgment.usage.get("prompt_tokens"),
                "completion_tokens": judgment.usage.get("completion_tokens"),
                "error": error,
                "scores": {
                    pair.criterion: {
                        "label": NOT_APPLICABLE if pair.label is None else pair.label,
                        "label_turn": pair.label_turn,
                        "value": (NOT_APPLICABLE if pair.value is None else pair.value) if pair.answered else None,
                        "verified": pair.verified,
                        "status": pair.status,
                        "confidence": pair.confidence,
                        "in_deciding_turn": pair.in_deciding_turn,
                    }
                    for pair in judged
                },
            })  # fmt: skip
            outcome = f"failed: {error}" if error else f"{sum(pair.verified for pair in judged)}/{len(judged)} verified"
            progress(f"{call.external_id}: {seconds:.1f} s, {outcome}")

    # The ceiling on the same calls as the judge: those the run selected.
    chosen = {call.external_id for call in calls}
    first_values = {name: {key: label.value for key, label in first[name].items()} for name in chosen}
    second_values = {
        name: {key: label.value for key, label in labels.items()} for name, labels in second.items() if name in chosen
    }
    ceiling_overall, ceiling_criteria = ceiling(first_values, second_values)
    empty_ceiling = {"n": 0, "exact": None, "within_one": None, "qwk": None}
    criteria = {}
    for key in dict.fromkeys(pair.criterion for pair in pairs):
        criteria[key] = {**figures([pair for pair in pairs if pair.criterion == key]),
                         "human_ceiling": ceiling_criteria.get(key, empty_ceiling)}
    overall = {
        **figures(pairs),
        "calls": len(rows),
        "failed_calls": sum(bool(row["error"]) for row in rows),
        "prompt_tokens_per_call": per_call([row["prompt_tokens"] for row in rows]),
        "completion_tokens_per_call": per_call([row["completion_tokens"] for row in rows]),
        "seconds_per_call": per_call([row["seconds"] for row in rows]),
        "human_ceiling": ceiling_overall,
        "model": model,
        "evidence": evidence,
    }
    return {"calls": rows, "overall": overall, "criteria": criteria}


def table(report: dict[str, object]) -> str:
    """The report as a readable table: one line per criterion, then overall."""

    def cell(value: object, width: int = 7) -> str:
        if value is None:
            return f"{'-':>{width}}"
        return f"{value:>{width}.2f}" if isinstance(value, float) else f"{value:>{width}}"

    keys = ("pairs", "coverage", "exact", "within_one", "qwk", "verified", "wrong_subject", "deciding_turn", "ece")
    heads = ("pairs", "cover", "exact", "within1", "qwk", "verif", "wrongsub", "turn", "ece")
    lines = [f"{'criterion':<24}" + "".join(f"{head:>9}" for head in heads) + f"{'human exact/within1/qwk (n)':>32}"]
    rows = [*report["criteria"].items(), ("OVERALL", report["overall"])]  # type: ignore[union-attr]
    for name, figures_ in rows:
        human = figures_["human_ceiling"]
        lines.append(f"{name:<24}" + "".join(cell(figures_[key], 9) for key in keys)
                     + f"{cell(human['exact'], 9)}{cell(human['within_one'], 8)}{cell(human['qwk'], 8)} ({human['n']})")
    overall = report["overall"]
    lines.append("")
    lines.append("confidence band  n     mean conf  exact")
    for band in overall["confidence_bands"]:  # type: ignore[index]
        lines.append(f"{band['band']:<15}{band['n']:>3}{cell(band['mean_confidence'], 12)}{cell(band['exact'], 8)}")
    def mean(key: str, digits: int) -> str:
        return "-" if overall[key] is None else f"{overall[key]:.{digits}f}"

    lines.append(
        f"\ncalls {overall['calls']} ({overall['failed_calls']} failed); per call: prompt tokens "
        f"{mean('prompt_tokens_per_call', 0)}, completion tokens {mean('completion_tokens_per_call', 0)}, "
        f"seconds {mean('seconds_per_call', 2)}"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", required=True, help="the OpenAI-compatible server's base URL (…/v1)")
    parser.add_argument("--model", required=True, help="the model that server serves")
    parser.add_argument("--evidence", choices=EVIDENCE_MODES, default="quote",
                        help="the evidence mode the judge is asked for (the judge's evidence mode, as a named judge's)")
    parser.add_argument("--api-key-env", default="", help="the environment variable holding the server's key")
    parser.add_argument("--calls", default="*", help="only the calls whose external id matches this glob")
    parser.add_argument("--json", type=Path, help="write the report as JSON to this file")
    parser.add_argument("--set", type=Path, default=SET, help="the set's folder (calls/, labels/, labels-second/)")
    args = parser.parse_args(argv)
    if args.api_key_env and not os.environ.get(args.api_key_env):
        parser.error(f"--api-key-env {args.api_key_env}: that environment variable is not set.")

    django_ready()
    calls = calls_load(args.set / "calls", args.calls)
    if not calls:
        parser.error(f"no call in {args.set / 'calls'} matches --calls {args.calls!r}.")
    try:
        report = evaluate(
            calls=calls, first=labels_load(args.set / "labels"), second=labels_load(args.set / "labels-second"),
            base_url=args.base_url, model=args.model, api_key_env=args.api_key_env, evidence=args.evidence,
        )  # fmt: skip
    except ValueError as error:  # a label or call the set should not hold: say which, judge nothing more
        parser.error(str(error))
    print(table(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
