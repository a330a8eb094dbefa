from argparse import ArgumentParser

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from access.models import Workspace
from experiments.workspaces import rubric_move


class Command(BaseCommand):
    help = "Move a rubric (every version) with its calls, calibrations and experiments to another workspace."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("slug", help="The rubric's slug.")
        parser.add_argument("--to", required=True, dest="workspace", help="The workspace's slug.")

    def handle(self, *args, slug: str, workspace: str, **options) -> None:
        found = Workspace.objects.filter(slug=workspace).first()
        if found is None:
            raise CommandError(f"No workspace {workspace!r} (python manage.py create_workspace {workspace}).")
        try:
            moved = rubric_move(slug=slug, workspace=found)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error
        self.stdout.write(f"Moved {slug} and its {moved} calls to {found.slug}.")
