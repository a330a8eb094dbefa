"""Run an experiment in the foreground: a progress bar, then the comparison,
and on the last line the experiment's API path."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import InvalidInputError
from qa.models import Judge
from experiments.models import Item
from experiments.selectors import EXPERIMENT_GROUPS, Comparison, experiment_comparison
from experiments.services import ArmSpec, experiment_create, item_execute_until_done
from reviews.filters import Group

BAR_WIDTH = 30


def _number(value: float | None, places: int = 2) -> str:
    return "-" if value is None else f"{value:.{places}f}"


def _interval(interval: tuple[float, float] | None) -> str:
    return "-" if interval is None else f"[{interval[0]:+.2f}, {interval[1]:+.2f}]"


class Command(BaseCommand):
    help = "Re-judge the calls supervisors reviewed with a candidate rubric version or judge, and compare."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rubric", required=True, help="The rubric's slug.")
        parser.add_argument("--candidate-version", type=int, required=True, help="The candidate's rubric version.")
        parser.add_argument("--judge", help="The candidate's judge (default: production's).")
        parser.add_argument("--samples", type=int, help="Calls per recording (default: the judge's).")
        parser.add_argument(
            "--group", choices=EXPERIMENT_GROUPS, default=Group.ALL.value, help="disputed: calls with an upheld dispute."
        )
        parser.add_argument("--since", type=date.fromisoformat, help="First call date (YYYY-MM-DD).")
        parser.add_argument("--limit", type=int, help="At most this many recordings, drawn by --seed.")
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **options: Any) -> None:
        judge = None
        if options["judge"]:
            judge = Judge.objects.filter(name=options["judge"]).first()
            if judge is None:
                raise CommandError(f"No judge named {options['judge']!r}.")
        try:
            experiment = experiment_create(
                rubric_slug=options["rubric"],
                candidates=[
                    ArmSpec(rubric_version=options["candidate_version"], judge=judge, samples=options["samples"])
                ],
                group=options["group"],
                date_from=options["since"],
                limit=options["limit"],
                seed=options["seed"],
                publish=False,
            )
        except InvalidInputError as error:
            raise CommandError(" ".join(str(message) for message in error.errors.values())) from error
        item_ids = list(Item.objects.filter(arm__experiment=experiment).values_list("pk", flat=True))
        for index, item_id in enumerate(item_ids):
            self._progress(index, len(item_ids))
            item_execute_until_done(item_id=item_id)
        self._progress(len(item_ids), len(item_ids))
        self.stderr.write("")
        experiment.refresh_from_db()
        self._print(experiment_comparison(experiment))
        self.stdout.write(f"/api/experiments/{experiment.pk}/")

    def _progress(self, done: int, total: int) -> None:
        filled = BAR_WIDTH * done // total if total else BAR_WIDTH
        self.stderr.write(f"\r[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}", ending="")

    def _print(self, comparison: Comparison) -> None:
        write = self.stdout.write
        experiment, progress = comparison.experiment, comparison.progress
        write(
            f"Experiment {experiment.pk}: {experiment.status}, {len(experiment.recording_ids)} recordings, "
            f"{progress.done} judged, {progress.failed} failed"
        )
        for arm in comparison.arms:
            write(f"\n{arm.label} (model {arm.model or '-'}, {arm.prompt_tokens} + {arm.completion_tokens} tokens)")
            write(f"  {'criterion':<24}{'n':>5}{'MAE':>7}{'QWK':>7}{'bias':>7}{'unverified':>12}")
            for row in arm.criteria:
                write(
                    f"  {row.criterion_key:<24}{row.n:>5}{_number(row.mae):>7}{_number(row.qwk):>7}"
                    f"{_number(row.bias):>7}{_number(row.unverified_rate):>12}"
                )
            if arm.removed:
                write(f"  removed: {', '.join(arm.removed)}")
        write("\nCandidate minus baseline (95% paired bootstrap intervals)")
        for delta in comparison.deltas:
            figures = delta.delta
            write(
                f"  {delta.criterion_key:<24}MAE {_number(figures.mae_delta):>6} {_interval(figures.mae_delta_ci):<18}"
                f"QWK {_number(figures.qwk_delta):>6} {_interval(figures.qwk_delta_ci):<18}{delta.verdict}"
            )
