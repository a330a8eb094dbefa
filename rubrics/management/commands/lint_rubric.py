from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.scope import EVERYTHING
from rubrics.lint import Finding, rubric_lint
from rubrics.selectors import rubric_version_of


class Command(BaseCommand):
    help = (
        "Check a rubric version's wording (the latest published version, or the draft, or --rubric-version N). "
        "Exits with status 1 when there is an error."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--rubric-version", type=int, help="Check this version instead.")

    def handle(self, *args, slug: str, rubric_version: int | None, **options) -> None:
        rubric = rubric_version_of(slug=slug, version=rubric_version, scope=EVERYTHING)
        if rubric is None:
            raise CommandError(f"No rubric {slug!r}" + (f" version {rubric_version}" if rubric_version else "") + ".")
        findings = rubric_lint(rubric)
        write_findings(self, findings)
        errors = sum(finding.is_error for finding in findings)
        summary = f"{rubric}: {errors} error(s), {len(findings) - errors} warning(s)."
        if errors:
            raise CommandError(summary, returncode=1)
        self.stdout.write(self.style.SUCCESS(summary) if not findings else self.style.WARNING(summary))


def write_findings(command: BaseCommand, findings: list[Finding]) -> None:
    """One line per finding: severity, criterion, rule, message (import_rubric prints them too)."""
    for finding in findings:
        style = command.style.ERROR if finding.is_error else command.style.WARNING
        where = finding.criterion or "-"
        command.stdout.write(f"{style(finding.severity.label.lower())} {where} [{finding.rule}] {finding.message}")
