"""python manage.py export --to DIR: the export's pages as files, resuming from a cursor file per kind.

Each page is written as DIR/KIND/KIND-CURSOR.FORMAT (CURSOR: where the page starts), to a temporary
name renamed once complete, and only then is DIR/KIND.cursor moved on. A run killed between the two
writes the same page again under the same name on the next run (the rows it holds then are those of
the same cursor), so no row is lost or kept twice.
"""

from __future__ import annotations

import os
from argparse import ArgumentParser
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from access.models import Workspace
from access.scope import EVERYTHING, scope_for_workspace
from core.errors import InvalidInputError
from exports.columns import KINDS
from exports.formats import FORMATS, NDJSON, stream
from exports.selectors import DEFAULT_LIMIT, MAX_LIMIT, ExportUnavailable, cursor_parse, export_page, page_records


class Command(BaseCommand):
    help = "Write the BI export (scores, reviews, disputes, calibration) to files, from where the last run stopped."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--to", required=True, help="The folder: one subfolder and one cursor file per kind.")
        parser.add_argument("--kind", action="append", choices=list(KINDS), help="Only this kind (repeatable; default all).")
        parser.add_argument("--format", choices=FORMATS, default=NDJSON)
        parser.add_argument("--workspace", default="", help="Only this workspace's rows (its slug; default every workspace).")
        parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help=f"Rows a file at most (1 to {MAX_LIMIT}).")

    def handle(self, *args, to: str, kind: list[str] | None, format: str, workspace: str, limit: int, **options) -> None:
        if not 1 <= limit <= MAX_LIMIT:
            raise CommandError(f"--limit must be from 1 to {MAX_LIMIT}.")
        scope = EVERYTHING
        if workspace:
            found = Workspace.objects.filter(slug=workspace).first()
            if found is None:
                raise CommandError(f"No workspace {workspace!r}.")
            scope = scope_for_workspace(found.pk)
        folder = Path(to)
        folder.mkdir(parents=True, exist_ok=True)
        for name in kind or list(KINDS):
            files, rows = self._kind(folder, name, format, scope, limit)
            self.stdout.write(f"{name}: {rows} rows in {files} files")

    def _kind(self, folder: Path, kind: str, format: str, scope, limit: int) -> tuple[int, int]:
        cursor_file = folder / f"{kind}.cursor"
        raw = cursor_file.read_text().strip() if cursor_file.exists() else ""
        try:
            since = cursor_parse(raw)
        except InvalidInputError:
            raise CommandError(f"{cursor_file} does not hold a cursor ({raw[:40]!r}): remove it to start again.") from None
        (folder / kind).mkdir(exist_ok=True)
        files = total = 0
        while True:
            try:
                page = export_page(kind=kind, scope=scope, since=since, limit=limit)
            except (ExportUnavailable, InvalidInputError) as error:
                raise CommandError(str(getattr(error, "errors", error))) from None
            target = folder / kind / f"{kind}-{since}.{format}"
            part = target.with_name(target.name + ".part")
            count = 0

            def counted():
                nonlocal count
                for record in page_records(page):
                    count += 1
                    yield record

            with part.open("wb") as out:
                for data in stream(counted(), KINDS[kind], format):
                    out.write(data)
                out.flush()
                os.fsync(out.fileno())
            if count:
                part.replace(target)
                files += 1
                total += count
            else:
                part.unlink()
            _write_atomically(cursor_file, f"{page.cursor}\n")
            since = page.cursor
            if not page.more:
                return files, total


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(path)
