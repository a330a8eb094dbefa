"""The first run's judging (scripts/demo): the demo's sample calls judged by a recorded real model.

    python manage.py demo_judge --recorded samples/recorded/qwen2.5-coder-1.5b.jsonl --base-url http://127.0.0.1:8738/v1
    python manage.py demo_judge --bundled      # the bundled local model judges them, live

With --recorded, the replay server (python -m qa.replay) must be listening on --base-url: the recorded
judge becomes the default and judges every demo call whose request was recorded, through the real
pipeline. An audio call transcribed a little differently on this machine gets the answer recorded for the
nearest transcript (qa.replay), and the summary says so; a call the recording lacks altogether is judged by
the bundled local model, and the summary says which.
"""

from __future__ import annotations

import json
import urllib.request
from io import StringIO
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Max

from qa.models import JudgeRun, Recording
from qa.recorded import judge_default_clear, recorded_judge_make_default, runs_not_recorded
from qa.replay import RecordingFileError, recorded_load

DEMO_CALLS = ["es-001", "es-007", "en-001", "es-101"]
# One line, printed under every demo summary: why a tiny model's quotes fail, and the way out.
WHY_QUOTES_FAIL = (
    "Why quotes fail: a small model paraphrases, invents or cites the wrong turn, and the verifier refuses every "
    "quote not found word for word where it points; for real use point Veredicto at a real model "
    "(OPENAI_BASE_URL and QA_JUDGE_MODEL, or a judge in the admin): docs/operations/judge-model.md"
)


class Command(BaseCommand):
    help = "Judge the demo's sample calls with a recorded real model (or the bundled one) and summarise."

    def add_arguments(self, parser: CommandParser) -> None:
        chosen = parser.add_mutually_exclusive_group(required=True)
        chosen.add_argument("--recorded", type=Path, help="a recorded-answers file (samples/recorded/*.jsonl)")
        chosen.add_argument("--bundled", action="store_true", help="judge with the bundled local model")
        parser.add_argument("--base-url", default="", help="the replay server's base URL (…/v1), with --recorded")
        parser.add_argument("--calls", nargs="+", default=DEMO_CALLS, help="the sample calls' external ids")

    def handle(self, *args: Any, **options: Any) -> None:
        calls = options["calls"]
        recordings = list(Recording.objects.filter(source="samples", external_id__in=calls)
                          .exclude(transcript="").order_by("pk"))  # fmt: skip
        if not recordings:
            raise CommandError(f"None of the sample calls {', '.join(calls)} is loaded: run `manage.py load_samples`.")
        write = self.stdout.write
        if options["bundled"]:
            judge_default_clear()
            self._judge(recordings, "the bundled local model")
        else:
            if not options["base_url"]:
                raise CommandError("--recorded needs --base-url, the replay server's (python -m qa.replay).")
            try:
                recorded = recorded_load(options["recorded"])
            except RecordingFileError as error:
                raise CommandError(str(error)) from error
            recorded_judge_make_default(recorded=recorded, base_url=options["base_url"])
            answered_before = len(self._replay_stats(options["base_url"]).get("nearest", []))
            run_ids = self._judge(recordings, f"{recorded.display_name} (replayed by {options['base_url']})")
            for near in self._replay_stats(options["base_url"]).get("nearest", [])[answered_before:]:
                write(
                    f"One call's transcript came out differently on this machine (an audio call: the transcriber's "
                    f"output varies by CPU); it got the answer recorded for the nearest transcript (similarity "
                    f"{near['similarity']:.2f}), whose quotes were verified against this machine's transcript."
                )
            # A request the recording lacks (a transcript that came out differently on this machine,
            # a changed prompt) is refused by the replay server: that call is judged live instead.
            if refused := runs_not_recorded(run_ids=run_ids):
                names = ", ".join(run.recording.external_id for run in refused)
                write(f"No recorded answer for {names}: judged live by the bundled local model instead.")
                judge_default_clear()
                try:
                    self._judge([run.recording for run in refused], "the bundled local model (no recording for these)")
                finally:
                    recorded_judge_make_default(recorded=recorded, base_url=options["base_url"])
        write(WHY_QUOTES_FAIL)
        agents = sorted(set(Recording.objects.filter(source="samples").values_list("agent_id", flat=True)) - {""})
        write(f"Sample agents (ids for the agents' pages and scorecards): {', '.join(agents)}")

    @staticmethod
    def _replay_stats(base_url: str) -> dict[str, Any]:
        """What the replay server answered, and how (qa.replay): {} from a server that does not say."""
        try:
            with urllib.request.urlopen(f"{base_url.rstrip('/')}/replay/stats", timeout=10) as response:  # noqa: S310 - the operator's replay URL
                return json.load(response)
        except (OSError, ValueError):
            return {}

    def _judge(self, recordings: list[Recording], who: str) -> list[int]:
        """Judge `recordings` (the judge command, its summary passed on); the ids of their new runs."""
        self.stdout.write(f"\nJudging {', '.join(r.external_id for r in recordings)} with {who}...")
        before = JudgeRun.objects.filter(recording__in=recordings).aggregate(last=Max("pk"))["last"] or 0
        out = StringIO()
        call_command("judge", "--recording", *[str(recording.pk) for recording in recordings], stdout=out, stderr=self.stderr)
        self.stdout.write(out.getvalue().rstrip("\n"))
        return list(JudgeRun.objects.filter(recording__in=recordings, pk__gt=before).values_list("pk", flat=True))
