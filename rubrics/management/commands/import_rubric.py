from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.models import Workspace
from rubrics.lint import RubricLintError, rubric_lint
from rubrics.management.commands.lint_rubric import write_findings
from rubrics.rubric_file import RubricFileError, rubric_spec_parse
from rubrics.services import rubric_import


class Command(BaseCommand):
    help = "Import a rubric from a YAML file as its next version (a draft, unless --publish)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--publish", action="store_true", help="Publish the imported version at once.")
        parser.add_argument(
            "--workspace", default="", help="The workspace of a new rubric (its slug); default: the default workspace."
        )
        parser.add_argument(
            "--slug", default=None, help="The rubric's slug instead of the file's: one file starts several workspaces' rubrics."
        )

    def handle(self, *args, file: Path, publish: bool, workspace: str, slug: str | None, **options) -> None:
        found = None
        if workspace:
            found = Workspace.objects.filter(slug=workspace).first()
            if found is None:
                raise CommandError(f"No workspace {workspace!r} (python manage.py create_workspace {workspace}).")
        try:
            spec = rubric_spec_parse(file.read_text(encoding="utf-8"))
            rubric = rubric_import(spec=spec, publish=publish, workspace=found, slug=slug)
        except OSError as error:
            raise CommandError(f"{file}: {error.strerror}") from error
        except RubricFileError as error:
            raise CommandError(f"{file}: {error}") from error
        except RubricLintError as error:
            write_findings(self, error.findings)
            raise CommandError(f"{file}: not imported: lint errors block publishing (see above).") from error
        except ValidationError as error:  # RubricFrozenError, a slug of another workspace, or no slug at all
            raise CommandError(f"{file}: {' '.join(error.messages)}") from error
        findings = rubric_lint(rubric)
        write_findings(self, findings)
        self.stdout.write(
            self.style.SUCCESS(f"Imported {rubric.label} ({rubric.status}) into {rubric.workspace.slug} with {len(spec.criteria)} criteria")
            + (f", {len(findings)} lint finding(s)." if findings else ".")
        )
