"""Experiments benchmark: the judging CPU of an experiment's item against a
production run's, on the same recordings (12 criteria, fake LLM answering at
once), and the time to compute the comparison of a large experiment.
See README.md beside this file.

    .venv/bin/python bench/experiments/run.py --recordings 1000 --comparison 10000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CRITERIA = 12
SLUG = "bench-experiments"
TRANSCRIPT = (
    "AGENT: Good morning, this is Harbor Bank, my name is Ana.\n"
    "CUSTOMER: I lost my debit card yesterday.\n"
    "AGENT: I am sorry. I will block it now and send a new one within five days.\n"
    "CUSTOMER: Thank you.\n"
)


def rubric_prepare():
    """A published rubric of 12 criteria on 1–5 and a draft v2 of it (the candidate)."""
    from rubrics.models import Criterion, Rubric
    from rubrics.services import rubric_new_version, rubric_publish

    rubric = Rubric.objects.filter(slug=SLUG, version=1).first()
    if rubric is None:
        rubric = Rubric.objects.create(slug=SLUG, name="Bench", language="en", audit_rate=0.0)
        Criterion.objects.bulk_create(
            Criterion(rubric=rubric, key=f"c{index:02}", title=f"Criterion {index}", order=index,
                      description=f"The agent does observable thing number {index}.")
            for index in range(1, CRITERIA + 1)
        )
        rubric = rubric_publish(rubric=rubric)
    draft = Rubric.objects.filter(slug=SLUG, status=Rubric.Status.DRAFT).first() or rubric_new_version(rubric=rubric)
    return rubric, draft


def recordings_clear() -> None:
    """Remove the benchmark's recordings (reviews first: they protect the runs they judged)."""
    from qa.models import Recording
    from reviews.models import Review

    Review.objects.filter(recording__rubric__slug=SLUG).delete()
    Recording.objects.filter(rubric__slug=SLUG).delete()


def recordings_reviewed(rubric, count: int, prefix: str, *, judged: bool) -> list[int]:
    """`count` recordings with a succeeded production run (values 1–5) and an approving review;
    with judged=False, pending runs instead, to be judged by the benchmark."""
    from django.utils import timezone

    from qa.models import JudgeRun, Recording, Score
    from reviews.models import Review

    recordings = Recording.objects.bulk_create(
        Recording(source=prefix, external_id=f"{prefix}-{index}", transcript=TRANSCRIPT, content_hash=f"{index:064x}",
                  rubric=rubric, occurred_at=timezone.now(), status=Recording.Status.REVIEWED if judged else "queued")
        for index in range(count)
    )
    status = JudgeRun.Status.SUCCEEDED if judged else JudgeRun.Status.PENDING
    runs = JudgeRun.objects.bulk_create(JudgeRun(recording=r, rubric=rubric, status=status) for r in recordings)
    if judged:
        criteria = list(rubric.criteria.all())
        Score.objects.bulk_create(
            Score(run=run, criterion=criterion, value=1 + (run.pk + criterion.order) % 5, confidence=0.9,
                  model_confidence=0.9, evidence="AGENT: I am sorry.", evidence_verified=True,
                  verification_status="verified", verifier_version="bench")
            for run in runs for criterion in criteria
        )
        Review.objects.bulk_create(Review(recording_id=run.recording_id, run=run, reviewer="bench", decision="approve")
                                   for run in runs)
    return [run.pk for run in runs]


def cpu_per_recording(count: int) -> dict[str, float]:
    """CPU (ms) per recording: production judging `count` runs, then experiments
    re-judging the same recordings, with the published version and with the draft, in this process."""
    from qa import execution
    from qa.models import JudgeRun, Recording
    from reviews.models import Review

    rubric, draft = rubric_prepare()
    recordings_clear()
    warmup = recordings_reviewed(rubric, 20, "bench-warmup", judged=False)
    run_ids = recordings_reviewed(rubric, count, "bench-cpu", judged=False)
    for run_id in warmup:  # imports, the connection, the question's cache
        execution.judge_run_execute(run_id=run_id)
    started = time.process_time()
    for run_id in run_ids:
        execution.judge_run_execute(run_id=run_id)
    production = (time.process_time() - started) * 1000 / count
    runs = JudgeRun.objects.filter(pk__in=run_ids)
    Review.objects.bulk_create(Review(recording_id=run.recording_id, run=run, reviewer="bench", decision="approve")
                               for run in runs)
    Review.objects.filter(recording__source="bench-warmup").delete()
    Recording.objects.filter(source="bench-warmup").delete()
    return {
        "production": production,
        "experiment, published version": _experiment_cpu(rubric.version),
        "experiment, draft version": _experiment_cpu(draft.version),
    }


def _experiment_cpu(version: int) -> float:
    from reviews.experiments.models import Item
    from reviews.experiments.services import ArmSpec, experiment_create, item_execute

    experiment = experiment_create(rubric_slug=SLUG, candidates=[ArmSpec(rubric_version=version)], publish=False)
    item_ids = list(Item.objects.filter(arm__experiment=experiment).values_list("pk", flat=True))
    item_execute(item_id=item_ids[0])  # warm, as production was
    started = time.process_time()
    for item_id in item_ids[1:]:
        item_execute(item_id=item_id)
    return (time.process_time() - started) * 1000 / (len(item_ids) - 1)


def comparison_seconds(count: int) -> dict[str, float]:
    """Wall-clock seconds of experiment_comparison for `count` recordings × 12 criteria,
    a stored baseline and one finished candidate arm."""
    from reviews.experiments.models import Arm, Experiment, Item, ItemScore
    from reviews.experiments.selectors import experiment_comparison

    from qa.models import JudgeRun

    rubric, draft = rubric_prepare()
    recordings_clear()
    run_ids = recordings_reviewed(rubric, count, "bench-comparison", judged=True)

    recording_ids = list(JudgeRun.objects.filter(pk__in=run_ids).values_list("recording_id", flat=True))
    experiment = Experiment.objects.create(rubric_slug=SLUG, recording_ids=recording_ids, status="finished")
    Arm.objects.create(experiment=experiment, order=0, label="production", rubric=rubric, stored=True)
    arm = Arm.objects.create(experiment=experiment, order=1, label="v2", rubric=draft)
    items = Item.objects.bulk_create(Item(arm=arm, recording_id=rid, status="succeeded", llm_duration_ms=300,
                                          prompt_tokens=900, completion_tokens=300) for rid in recording_ids)
    criteria = list(draft.criteria.all())
    ItemScore.objects.bulk_create(
        (ItemScore(item=item, criterion=criterion, value=1 + (item.pk * 7 + criterion.order) % 5, confidence=0.9,
                   model_confidence=0.9, evidence="AGENT: I am sorry.", evidence_verified=True,
                   verification_status="verified", verifier_version="bench")
         for item in items for criterion in criteria),
        batch_size=5000,
    )
    from reviews.selectors import human_references

    experiment_comparison(experiment)  # warm: imports, the connection
    started = time.perf_counter()
    comparison = experiment_comparison(experiment)
    seconds = time.perf_counter() - started
    assert comparison.deltas and comparison.arms[1].criteria[0].n == count
    started = time.perf_counter()
    human_references(recording_ids=recording_ids)
    return {"comparison": seconds, "of which the human reference": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=1000)
    parser.add_argument("--comparison", type=int, default=10000)
    parser.add_argument("--port", type=int, default=8093)
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/veredicto_bench_experiments")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    os.environ.setdefault("DEBUG", "0")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use-0123456789")
    os.environ.update(
        OPENAI_BASE_URL=f"http://127.0.0.1:{args.port}/v1", OPENAI_API_KEY="bench", QA_JUDGE_MODEL="fake-judge"
    )
    os.environ.pop("CELERY_BROKER_URL", None)  # in-process: no broker, no shared quota
    from bench.database import database_create

    database_create()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    fake = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_openai", "--port", str(args.port), "--latency", "0"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    try:
        time.sleep(1)  # the fake server's start
        cpu = cpu_per_recording(args.recordings) if args.recordings else {}
        report(cpu, comparison_seconds(args.comparison), args)
    finally:
        fake.terminate()


def report(cpu: dict[str, float], comparison: dict[str, float], args: argparse.Namespace) -> None:
    print(f"CPU per recording ({args.recordings} recordings x {CRITERIA} criteria, in-process):")
    for name, milliseconds in cpu.items():
        print(f"  {name:<32} {milliseconds:6.2f} ms")
    print(f"Comparison of {args.comparison} recordings x {CRITERIA} criteria, 2 arms: {comparison['comparison']:.3f} s")
    print(f"  of which the shared human reference (reviews.selectors): {comparison['of which the human reference']:.3f} s")


if __name__ == "__main__":
    main()
