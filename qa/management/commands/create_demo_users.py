from __future__ import annotations

import secrets

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand

DEMO_USERS = {
    "supervisor": ["Supervisors"],
    "owner": ["Rubric owners"],
}


class Command(BaseCommand):
    help = "Create (or reset) the demo users 'supervisor' and 'owner' with fresh passwords, and print them."

    def handle(self, *args, **options) -> None:
        for username, group_names in DEMO_USERS.items():
            password = secrets.token_urlsafe(9)
            user, _ = User.objects.get_or_create(username=username)
            user.is_staff = True  # both roles use the admin: owners to edit rubrics, supervisors to browse
            user.set_password(password)
            user.save()
            user.groups.set(Group.objects.filter(name__in=group_names))
            self.stdout.write(f"  {username:<11} password: {password}   ({', '.join(group_names)})")
