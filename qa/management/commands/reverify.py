"""Verify stored evidence again, without calling the LLM.

    python manage.py reverify [--rubric SLUG] [--since 2026-11-01]

Use it after the verifier changes: each score's verification and confidence
(0 when unverified, else the model's) are recomputed, and recordings whose
confidence changed are routed again.
"""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from qa.evidence import VERIFIER_VERSION
from qa.judging import judge_run_reverify
from qa.models import JudgeRun


def _since(value: str) -> datetime:
    parsed = parse_datetime(value) or (datetime.combine(day, time.min) if (day := parse_date(value)) else None)
    if parsed is None:
        raise CommandError(f"--since {value!r} is not a date (YYYY-MM-DD) or a datetime.")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed)


class Command(BaseCommand):
    help = "Re-run evidence verification on stored scores and re-route recordings whose confidence changed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rubric", help="only runs judged with this rubric slug")
        parser.add_argument("--since", help="only runs created on or after this date")

    def handle(self, *args: Any, **options: Any) -> None:
        runs = JudgeRun.objects.filter(status=JudgeRun.Status.SUCCEEDED).select_related("recording", "rubric")
        if options["rubric"]:
            runs = runs.filter(rubric__slug=options["rubric"])
        if options["since"]:
            runs = runs.filter(created_at__gte=_since(options["since"]))
        checked = changed_runs = changed_scores = 0
        for run in runs.order_by("pk").iterator(chunk_size=200):
            changed = judge_run_reverify(run=run)
            checked += 1
            changed_runs += bool(changed)
            changed_scores += changed
        self.stdout.write(
            f"Verifier {VERIFIER_VERSION}: {checked} runs checked, {changed_scores} scores changed in {changed_runs} runs."
        )
