from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand, CommandError

from access.models import DEFAULT_WORKSPACE, Workspace
from outbox.models import EVENT_NAMES
from core.errors import InvalidInputError
from webhooks.services import subscription_create


class Command(BaseCommand):
    help = "Subscribe a URL to events; prints the signing secret on its last line (it is shown only this once)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("url", help="Where to POST; its host must be allowed by QA_WEBHOOK_ALLOWED_HOSTS.")
        parser.add_argument("--events", required=True, help=f"Comma-separated, of: {', '.join(EVENT_NAMES)}.")
        parser.add_argument("--secret", help="The signing secret (at least 24 characters); default: a generated one.")
        parser.add_argument("--description", default="")
        parser.add_argument("--contact-email", default="", help="Told if the subscription is paused.")
        parser.add_argument("--workspace", default=DEFAULT_WORKSPACE, help="The slug of the workspace whose events it receives.")

    def handle(
        self, *args, url: str, events: str, secret: str | None, description: str, contact_email: str, workspace: str,
        **options,
    ) -> None:
        names = [name.strip() for name in events.split(",") if name.strip()]
        try:
            subscription, secret = subscription_create(
                url=url, events=names, secret=secret, description=description, contact_email=contact_email,
                workspace=Workspace.objects.get(slug=workspace) if workspace != DEFAULT_WORKSPACE else None,
            )
        except Workspace.DoesNotExist:
            raise CommandError(f"workspace: no workspace '{workspace}'.") from None
        except InvalidInputError as error:
            raise CommandError(" ".join(f"{field}: {message}" for field, message in error.errors.items())) from None
        self.stdout.write(
            f"Subscription {subscription.pk} of workspace {subscription.workspace.slug}: {url} receives "
            f"{', '.join(subscription.events)}."
        )
        self.stdout.write("Its signing secret (store it now: it cannot be shown again):")
        self.stdout.write(secret)
