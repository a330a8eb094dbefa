from argparse import ArgumentParser

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from access.models import Role, Workspace
from access.services import member_add


class Command(BaseCommand):
    help = "Make a user a member of a workspace with a role (and, for a supervisor, teams)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--workspace", required=True, help="The workspace's slug.")
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument(
            "--team", action="append", default=[], help="A team they supervise (repeat for more; none: every team)."
        )
        parser.add_argument("--agent-id", default="", help="For an agent: the agent id their calls carry.")

    def handle(self, *args, username: str, workspace: str, role: str, team: list[str], agent_id: str, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}.")
        found = Workspace.objects.filter(slug=workspace).first()
        if found is None:
            raise CommandError(f"No workspace {workspace!r} (python manage.py create_workspace {workspace}).")
        try:
            membership = member_add(user=user, workspace=found, role=role, teams=team, agent_id=agent_id)
        except ValidationError as error:
            raise CommandError("; ".join(" ".join(msgs) for msgs in error.message_dict.values()))
        teams = ", ".join(sorted(membership.teams.values_list("name", flat=True))) or "every team"
        self.stdout.write(f"{username} is {membership.get_role_display()} in {found.slug} ({teams}).")
