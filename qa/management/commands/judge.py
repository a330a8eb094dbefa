"""Judge recordings in this process, with a progress bar and a summary.

    python manage.py judge                      # every recording waiting for a judgment (--pending)
    python manage.py judge --recording 12 14    # (re-)judge these
    python manage.py judge --rubric soporte --limit 3
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q, QuerySet

from qa.execution import judge_run_until_done
from qa.judging import judge_run_create
from qa.models import JudgeRun, Recording, Score

BAR_WIDTH = 30


class Command(BaseCommand):
    help = "Judge recordings with the configured LLM (the bundled local model by default) and summarise."

    def add_arguments(self, parser: CommandParser) -> None:
        chosen = parser.add_mutually_exclusive_group()
        chosen.add_argument("--recording", type=int, nargs="+", default=[], help="ids to judge (again)")
        chosen.add_argument(
            "--pending",
            action="store_true",
            help="recordings waiting for a judgment: never judged (as load_samples leaves them) or with a run "
            "left pending (the default)",
        )
        parser.add_argument("--rubric", help="only recordings judged with this rubric slug")
        parser.add_argument("--limit", type=int, help="judge at most this many")

    def handle(self, *args: Any, **options: Any) -> None:
        runs = self._runs(options)
        if not runs:
            self.stdout.write("Nothing to judge.")
            return
        started = time.monotonic()
        for index, run in enumerate(runs, start=1):
            self._progress(index - 1, len(runs), run.recording)
            judge_run_until_done(run_id=run.pk, sleep=self._wait)
        self._progress(len(runs), len(runs), None)
        self.stderr.write("")
        self._summary(JudgeRun.objects.filter(pk__in=[run.pk for run in runs]), time.monotonic() - started)

    def _recordings(self, options: dict[str, Any]) -> QuerySet[Recording]:
        if options["recording"]:
            recordings = Recording.objects.filter(pk__in=options["recording"])
            if missing := set(options["recording"]) - set(recordings.values_list("pk", flat=True)):
                raise CommandError(f"No recording with id {', '.join(map(str, sorted(missing)))}.")
            if untranscribed := sorted(recordings.filter(transcript="").values_list("pk", flat=True)):
                ids = ", ".join(map(str, untranscribed))
                raise CommandError(f"Recording {ids} has no transcript yet: its audio is being transcribed.")
        else:  # --pending, the default
            # Never judged (as load_samples leaves them) or with a run left pending; an audio call
            # still waiting for its transcript is the transcription's, not the judge's.
            recordings = Recording.objects.filter(
                (Q(status=Recording.Status.RECEIVED) & ~Q(transcript="")) | Q(runs__status=JudgeRun.Status.PENDING)
            )
        if options["rubric"]:
            recordings = recordings.filter(rubric__slug=options["rubric"])
        return recordings.order_by("created_at", "pk").distinct()

    def _runs(self, options: dict[str, Any]) -> list[JudgeRun]:
        recordings = self._recordings(options)[: options["limit"]]
        # Creating the runs here (not through the queue) keeps the judgment in
        # this process; a worker that sees the same run finds it claimed.
        return [judge_run_create(recording=recording)[0] for recording in recordings]

    def _wait(self, seconds: float) -> None:
        self.stderr.write(f"\n  transient failure: retrying in {seconds:.1f} s")
        time.sleep(seconds)

    def _progress(self, done: int, total: int, recording: Recording | None) -> None:
        filled = BAR_WIDTH * done // total
        label = f"judging {recording}" if recording else "done"
        self.stderr.write(f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} {label:<40}", ending="")
        self.stderr.flush()

    def _summary(self, runs: QuerySet[JudgeRun], seconds: float) -> None:
        succeeded = runs.filter(status=JudgeRun.Status.SUCCEEDED).select_related("recording")
        failed = runs.filter(status=JudgeRun.Status.FAILED)
        reasons = Counter(reason for run in succeeded for reason in run.recording.review_reasons)
        in_review = sum(1 for run in succeeded if run.recording.needs_review)
        scores = Score.objects.filter(run__in=succeeded)
        unverified = scores.filter(evidence_verified=False).count()
        total_scores = scores.count()
        prompt = sum(run.prompt_tokens or 0 for run in runs)
        completion = sum(run.completion_tokens or 0 for run in runs)
        backends = sorted({f"{run.backend} {run.model}" for run in runs if run.backend})
        write = self.stdout.write
        write(f"Judged: {succeeded.count()}   failed: {failed.count()}   time: {seconds:.1f} s")
        write(f"Model: {', '.join(backends) or '-'}")
        write(f"Routed to review: {in_review}" + "".join(f"   {reason}: {count}" for reason, count in sorted(reasons.items())))
        rate = f"{unverified / total_scores:.0%}" if total_scores else "-"
        write(f"Unverified quotes: {unverified} of {total_scores} ({rate})")
        cached = sum(run.cached_tokens or 0 for run in runs)
        write(f"Tokens: {prompt} prompt ({cached} cached) + {completion} completion")
        # Issue 45: the cost per call where the judge has prices (the environment's judge has none).
        costs = [cost for run in runs.select_related("judge") if (cost := run.cost) is not None]
        if costs and not any(costs):
            write(f"Cost: 0 for {len(costs)} calls: the judge's prices are 0 (a model run locally has no price per token)")
        elif costs:
            write(f"Cost: {sum(costs)} for {len(costs)} calls, {sum(costs) / len(costs):.6f} a call")
        for run in failed:
            write(self.style.ERROR(f"  failed {run.recording_id}: {run.error[:200]}"))
