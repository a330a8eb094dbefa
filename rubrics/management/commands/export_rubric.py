from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.scope import EVERYTHING
from rubrics.rubric_file import rubric_spec_dump, rubric_spec_of
from rubrics.selectors import rubric_version_of


class Command(BaseCommand):
    help = "Print a rubric as YAML (the latest published version, or --rubric-version N)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--rubric-version", type=int, help="Export this version instead.")

    def handle(self, *args, slug: str, rubric_version: int | None, **options) -> None:
        rubric = rubric_version_of(slug=slug, version=rubric_version, scope=EVERYTHING)
        if rubric is None:
            raise CommandError(f"No rubric {slug!r}" + (f" version {rubric_version}" if rubric_version else "") + ".")
        self.stdout.write(rubric_spec_dump(rubric_spec_of(rubric)), ending="")
