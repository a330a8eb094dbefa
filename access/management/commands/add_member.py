import secrets
from argparse import ArgumentParser

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from access.models import Role, Workspace
from access.services import member_add


class Command(BaseCommand):
    help = (
        "Make a user (created if new, with a password printed once) a member of a workspace with a role "
        "(and, for a supervisor, teams)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--workspace", required=True, help="The workspace's slug.")
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument(
            "--team", action="append", default=[], help="A team they supervise (repeat for more; none: every team)."
        )
        parser.add_argument("--agent-id", default="", help="For an agent: the agent id their calls carry.")
        parser.add_argument("--email", default=None, help="A new user's e-mail address.")

    @transaction.atomic
    def handle(
        self, *args, username: str, workspace: str, role: str, team: list[str], agent_id: str, email: str | None,
        **options,
    ):  # fmt: skip
        found = Workspace.objects.filter(slug=workspace).first()
        if found is None:
            raise CommandError(f"No workspace {workspace!r} (python manage.py create_workspace {workspace}).")
        user = get_user_model().objects.filter(username=username).first()
        password = None
        if user is None:
            # Printed once and stored only as its hash: the person changes it after their first login.
            password = secrets.token_urlsafe(12)
            user = get_user_model().objects.create_user(username=username, email=email or "", password=password)
        try:
            membership = member_add(user=user, workspace=found, role=role, teams=team, agent_id=agent_id)
        except ValidationError as error:
            raise CommandError("; ".join(" ".join(msgs) for msgs in error.message_dict.values())) from None
        teams = ", ".join(sorted(membership.teams.values_list("name", flat=True))) or "every team"
        self.stdout.write(f"{username} is {membership.get_role_display()} in {found.slug} ({teams}).")
        if password is not None:
            self.stdout.write(f"New user {username}, password (shown once): {password}")
