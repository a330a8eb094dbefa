"""Supervisors (and so QA leads and admins, whose roles hold the Supervisors group) coach agents."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLE_PERMISSIONS = {
    "Supervisors": [
        ("coaching", "coachingsession", ["add", "change", "view"]),
    ],
}


def grant(apps, schema_editor):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group_name, grants in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=group_name)
        for app_label, model, actions in grants:
            codenames = [f"{action}_{model}" for action in actions]
            permissions = Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
            group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for group in apps.get_model("auth", "Group").objects.filter(name__in=ROLE_PERMISSIONS):
        for app_label, model, actions in ROLE_PERMISSIONS[group.name]:
            codenames = [f"{action}_{model}" for action in actions]
            permissions = Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
            group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("coaching", "0001_initial"),
        ("reviews", "0002_groups"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
