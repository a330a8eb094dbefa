from argparse import ArgumentParser

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from access.services import workspace_create


class Command(BaseCommand):
    help = "Create a workspace (a client or program): its rubrics, calls and people stay in it."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("slug", help="Short name, letters, digits, - and _.")
        parser.add_argument("--name", default="", help="Display name (default: the slug).")

    def handle(self, *args, slug: str, name: str, **options) -> None:
        try:
            workspace = workspace_create(slug=slug, name=name)
        except ValidationError as error:
            raise CommandError("; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in error.message_dict.items()))
        self.stdout.write(f"Created workspace {workspace.slug} ({workspace.name}).")
