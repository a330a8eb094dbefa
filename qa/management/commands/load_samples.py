from __future__ import annotations

from pathlib import Path

import yaml
from django.conf import settings
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils.dateparse import parse_datetime

from access.scope import EVERYTHING
from core.errors import InvalidInputError
from qa.services import recording_ingest
from rubrics.rubric_file import rubric_spec_of, rubric_spec_parse
from rubrics.selectors import rubric_latest_published
from rubrics.services import rubric_import

SAMPLES = Path(settings.BASE_DIR) / "samples"
SOURCE = "samples"


class Command(BaseCommand):
    help = "Load the sample rubrics (published) and sample recordings. Safe to run again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--judge", action="store_true", help="Enqueue every loaded recording for judging (default: leave them received)."
        )

    @transaction.atomic
    def handle(self, *args, judge: bool, **options) -> None:
        for path in sorted((SAMPLES / "rubrics").glob("*.yaml")):
            spec = rubric_spec_parse(path.read_text(encoding="utf-8"))
            current = rubric_latest_published(slug=spec.slug, scope=EVERYTHING)
            if current is not None and rubric_spec_of(current) == spec:
                self.stdout.write(f"Rubric {current.label} is up to date.")
                continue
            self.stdout.write(f"Published {rubric_import(spec=spec, publish=True).label}.")

        created = 0
        for path in sorted((SAMPLES / "recordings").glob("*.yaml")):
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            rubric = rubric_latest_published(slug=data["rubric"], scope=EVERYTHING)
            if rubric is None:
                raise CommandError(f"{path.name}: no published rubric {data['rubric']!r}.")
            # A call that comes as audio is transcribed (a task, like any upload) before it can be judged.
            if "audio" in data:
                audio = File((SAMPLES / data["audio"]).open("rb"), name=data["audio"])
                content = {"audio": audio, "agent_channel": data["agent_channel"]}
            else:
                content = {"transcript": data["transcript"], "transcript_source": data["transcript_source"]}
            try:
                _, is_new = recording_ingest(
                    external_id=data["external_id"],
                    source=SOURCE,
                    rubric=rubric,
                    agent_id=data["agent"]["id"],
                    agent_name=data["agent"]["name"],
                    team=data["team"],
                    channel=data["channel"],
                    language=data["language"],
                    occurred_at=parse_datetime(data["occurred_at"]),
                    duration_seconds=data.get("duration_seconds"),
                    judge=judge,
                    **content,
                )
            except InvalidInputError as error:
                raise CommandError(f"{path.name}: {error.errors}") from error
            finally:
                if "audio" in content:
                    content["audio"].close()
            created += is_new
        self.stdout.write(self.style.SUCCESS(f"Sample recordings: {created} new, {len(list((SAMPLES / 'recordings').glob('*.yaml')))} in all."))
