from argparse import ArgumentParser

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from access.models import DEFAULT_WORKSPACE, Role, Workspace
from access.services import member_add


class Command(BaseCommand):
    help = (
        "Link a user (created if new) to an agent id: they become the workspace's agent with that id, in the "
        "Agents group, and see only the calls that carry it."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("agent_id", help="The agent id their calls carry.")
        parser.add_argument("username")
        parser.add_argument("--password", default=None, help="Set this password (a new user without one cannot log in).")
        parser.add_argument("--email", default=None, help="Where dispute outcomes are sent (with EMAIL_URL set).")
        parser.add_argument("--workspace", default=DEFAULT_WORKSPACE, help="The workspace's slug.")

    @transaction.atomic
    def handle(self, *args, agent_id: str, username: str, password: str | None, email: str | None, workspace: str, **options):
        found = Workspace.objects.filter(slug=workspace).first()
        if found is None:
            raise CommandError(f"No workspace {workspace!r} (python manage.py create_workspace {workspace}).")
        user, created = get_user_model().objects.get_or_create(username=username)
        if password is not None:
            user.set_password(password)
        elif created:
            user.set_unusable_password()
        if email is not None:
            user.email = email
        user.save()
        try:
            member_add(user=user, workspace=found, role=Role.AGENT, agent_id=agent_id)
        except ValidationError as error:
            raise CommandError("; ".join(" ".join(msgs) for msgs in error.message_dict.values())) from None
        self.stdout.write(f"{username} is agent {agent_id} in {found.slug}{' (new user)' if created else ''}.")
