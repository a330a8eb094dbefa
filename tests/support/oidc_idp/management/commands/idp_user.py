"""Creates or updates a person at the test provider, with the groups that become their Veredicto claims."""

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", required=True)
        parser.add_argument("--email", default="")
        parser.add_argument("--first-name", default="")
        parser.add_argument("--last-name", default="")
        parser.add_argument("--group", action="append", default=[], help="workspace:<slug>, role:<role>, team:<name>")

    def handle(self, *args, username, password, email, first_name, last_name, group, **options):
        user, _ = User.objects.update_or_create(
            username=username, defaults={"email": email, "first_name": first_name, "last_name": last_name}
        )
        user.set_password(password)
        user.save()
        user.groups.set([Group.objects.get_or_create(name=name)[0] for name in group])
