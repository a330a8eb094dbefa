from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from access.models import ApiKey, Workspace
from core.errors import InvalidInputError
from qa.api.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key for an external system and print it (only its hash is stored)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name", help="The external system.")
        parser.add_argument(
            "--source",
            help="The source the key posts under and whose recordings alone it reads and rejudges (default: NAME).",
        )
        parser.add_argument(
            "--all-sources",
            action="store_true",
            help="Read and rejudge every source's recordings and post under any source (an integration hub).",
        )
        parser.add_argument("--can-review", action="store_true", help="Allow the key to post supervisors' reviews.")
        parser.add_argument(
            "--can-run-experiments", action="store_true", help="A rubric owner's key: create and cancel experiments."
        )
        parser.add_argument(
            "--can-export", action="store_true", help="A BI system's key: read the bulk export (/api/export/)."
        )
        parser.add_argument("--workspace", default="", help="The workspace it acts in (its slug; default: the default one).")
        parser.add_argument("--expires-at", help="ISO 8601 date and time after which the key is refused.")

    def handle(
        self,
        *args,
        name: str,
        source: str | None,
        all_sources: bool,
        can_review: bool,
        can_run_experiments: bool,
        can_export: bool,
        expires_at: str | None,
        workspace: str,
        **options,
    ) -> None:
        found = None
        if workspace:
            found = Workspace.objects.filter(slug=workspace).first()
            if found is None:
                raise CommandError(f"No workspace {workspace!r} (python manage.py create_workspace {workspace}).")
        if ApiKey.objects.filter(name=name).exists():
            raise CommandError(f"A key named {name!r} already exists; revoke it in the admin or pick another name.")
        expiry = None
        if expires_at:
            try:
                expiry = parse_datetime(expires_at)
            except ValueError:  # well formed but impossible, e.g. month 13
                expiry = None
            if expiry is None:
                raise CommandError(f"--expires-at {expires_at!r} is not an ISO 8601 date and time.")
            if timezone.is_naive(expiry):
                expiry = timezone.make_aware(expiry)
        try:
            api_key, key = api_key_create(
                name=name,
                source=source or name,
                all_sources=all_sources,
                can_review=can_review,
                can_run_experiments=can_run_experiments,
                can_export=can_export,
                expires_at=expiry,
                workspace=found,
            )
        except InvalidInputError as error:
            raise CommandError(f"--source: {error.errors['source']}") from None
        # The key alone on stdout, so that KEY=$(manage.py create_api_key NAME) works.
        self.stdout.write(key)
        scope = "every source" if all_sources else f"source {api_key.source!r}"
        rights = ", ".join(
            [f"post and read recordings of {scope}"]
            + ["post reviews"] * can_review
            + ["run experiments"] * can_run_experiments
            + ["export"] * can_export
        )
        self.stderr.write(f"Key {api_key.prefix} for {name} in {api_key.workspace.slug} ({rights}). Store it now: it cannot be shown again.")
