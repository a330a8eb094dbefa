"""Open a calibration session from a script.

    python manage.py calibration_create --rubric customer-care --name "March, greeting" \
        --sample 10 --seed 7 --participants marta luis --lead ana

The last line printed is the session's API path, for the next step of a script.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q
from django.urls import reverse

from access import Capability
from access.scope import EVERYTHING
from core.errors import InvalidInputError
from calibration.selectors import CallSelection
from calibration.services import calibration_create
from rubrics.selectors import rubric_latest_published


class Command(BaseCommand):
    help = "Create a calibration session: participants score the same calls blind; print its API path last."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rubric", required=True, help="rubric slug (its published version)")
        parser.add_argument("--name", required=True)
        calls = parser.add_mutually_exclusive_group(required=True)
        calls.add_argument("--recordings", type=int, nargs="+", help="recording ids")
        calls.add_argument("--sample", type=int, help="draw this many judged calls at random")
        parser.add_argument("--seed", type=int, default=0, help="seed of the random sample (default 0)")
        parser.add_argument("--team", default="", help="only calls of this team")
        parser.add_argument("--agent", default="", help="only calls of this agent id")
        parser.add_argument("--date-from", type=date.fromisoformat, help="calls from this day (YYYY-MM-DD)")
        parser.add_argument("--date-to", type=date.fromisoformat, help="calls up to this day (YYYY-MM-DD)")
        parser.add_argument("--participants", nargs="+", required=True, help="usernames of the supervisors")
        parser.add_argument("--lead", help="username of the QA lead (default: the only one there is)")
        parser.add_argument("--due", type=date.fromisoformat, help="due date (YYYY-MM-DD)")

    def handle(self, *args: Any, **options: Any) -> None:
        rubric = rubric_latest_published(slug=options["rubric"], scope=EVERYTHING)
        if rubric is None:
            raise CommandError(f"No published rubric '{options['rubric']}'.")
        selection = CallSelection(
            recording_ids=tuple(options["recordings"] or ()),
            sample=options["sample"],
            seed=options["seed"] if options["sample"] is not None else None,
            team=options["team"],
            agent=options["agent"],
            date_from=options["date_from"],
            date_to=options["date_to"],
        )
        try:
            session = calibration_create(
                name=options["name"],
                rubric=rubric,
                lead=self._lead(options["lead"]),
                participants=self._users(options["participants"]),
                selection=selection,
                due_date=options["due"],
            )
        except InvalidInputError as error:
            raise CommandError(" ".join(f"{field}: {message}" for field, message in error.errors.items())) from None
        self.stdout.write(
            f"Calibration session {session.pk} '{session.name}' on {rubric.slug} v{rubric.version}: "
            f"{session.calls.count()} calls, participants {', '.join(options['participants'])}."
        )
        self.stdout.write(reverse("calibrations-api:detail", args=[session.pk]))

    @staticmethod
    def _users(usernames: list[str]) -> list:
        users = {user.get_username(): user for user in get_user_model().objects.filter(username__in=usernames)}
        if missing := [name for name in usernames if name not in users]:
            raise CommandError(f"No such user: {', '.join(missing)}.")
        return [users[name] for name in usernames]

    def _lead(self, username: str | None):
        if username:
            return self._users([username])[0]
        app_label, codename = Capability.RUN_CALIBRATION.split(".")
        granted = Q(groups__permissions__codename=codename, groups__permissions__content_type__app_label=app_label)
        leads = list(get_user_model().objects.filter(granted, is_active=True).distinct()[:2])
        if len(leads) != 1:
            raise CommandError("Name the QA lead with --lead USERNAME.")
        return leads[0]
