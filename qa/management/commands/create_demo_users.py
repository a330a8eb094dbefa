from __future__ import annotations

import secrets

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand

from access.models import Membership, Role, Workspace, default_workspace_id
from access.services import member_add

# Two supervisors, so that a calibration session (two people scoring the same calls) can be tried.
DEMO_USERS = {
    "supervisor": ["Supervisors"],
    "supervisor2": ["Supervisors"],
    "owner": ["Rubric owners"],
}
# Their memberships of the default workspace, which gives them their groups (access.services.member_add).
DEMO_ROLES = {"supervisor": Role.SUPERVISOR, "supervisor2": Role.SUPERVISOR, "owner": Role.RUBRIC_OWNER}


class Command(BaseCommand):
    help = (
        "Create (or reset) the demo users 'supervisor', 'supervisor2' and 'owner' with fresh passwords, and print them."
    )

    def handle(self, *args, **options) -> None:
        for username, group_names in DEMO_USERS.items():
            password = secrets.token_urlsafe(9)
            user, _ = User.objects.get_or_create(username=username)
            user.is_staff = True  # both roles use the admin: owners to edit rubrics, supervisors to browse
            user.set_password(password)
            user.save()
            user.groups.set(Group.objects.filter(name__in=group_names))
            Membership.objects.filter(user=user).delete()
            member_add(user=user, workspace=Workspace.objects.get(pk=default_workspace_id()), role=DEMO_ROLES[username])
            self.stdout.write(f"  {username:<11} password: {password}   ({', '.join(group_names)})")
