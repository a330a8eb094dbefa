"""Everything that exists goes into one default workspace, and every person in a role group becomes
its member with the role their groups give, so each keeps seeing what they saw (the README says how
to split a workspace afterwards). The role groups themselves are not touched here."""

from django.conf import settings
from django.db import migrations

DEFAULT_WORKSPACE = "default"


def role_for(groups: set[str]) -> str | None:
    lead, owner, supervisor = "QA leads" in groups, "Rubric owners" in groups, "Supervisors" in groups
    if owner and (lead or supervisor):
        return "admin"
    if lead:
        return "qa_lead"
    if owner:
        return "rubric_owner"
    if supervisor:
        return "supervisor"
    return None


def forward(apps, schema_editor):
    Workspace = apps.get_model("access", "Workspace")
    Membership = apps.get_model("access", "Membership")
    Group = apps.get_model("auth", "Group")
    User = apps.get_model(settings.AUTH_USER_MODEL)
    workspace, _ = Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE, defaults={"name": "Default"})
    Group.objects.get_or_create(name="Agents")
    for user in User.objects.filter(is_superuser=False).prefetch_related("groups"):
        role = role_for({group.name for group in user.groups.all()})
        if role:
            Membership.objects.get_or_create(user=user, workspace=workspace, defaults={"role": role})


class Migration(migrations.Migration):
    dependencies = [("access", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop)]
