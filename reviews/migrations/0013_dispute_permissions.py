"""The Agents group (created by access 0002, empty until now) may dispute, which opens their own calls,
scorecard and reviews to them (access.Capability.DISPUTE); QA leads resolve disputes
(Capability.RESOLVE_DISPUTES)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GRANTS = {
    "Agents": [("dispute", ["add_dispute", "view_dispute"]), ("acknowledgement", ["add_acknowledgement"])],
    "QA leads": [("dispute", ["resolve_dispute", "view_dispute"]), ("acknowledgement", ["view_acknowledgement"])],
}


def grant(apps, schema_editor):
    # As in 0002: permissions are normally created after all migrations ran.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, grants in GRANTS.items():
        group, _ = Group.objects.get_or_create(name=name)
        for model, codenames in grants:
            group.permissions.add(
                *Permission.objects.filter(
                    content_type__app_label="reviews", content_type__model=model, codename__in=codenames
                )
            )


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, grants in GRANTS.items():
        for group in Group.objects.filter(name=name):
            for model, codenames in grants:
                group.permissions.remove(
                    *Permission.objects.filter(
                        content_type__app_label="reviews", content_type__model=model, codename__in=codenames
                    )
                )


class Migration(migrations.Migration):
    dependencies = [("reviews", "0012_disputes"), ("access", "0002_default_workspace")]

    operations = [migrations.RunPython(grant, revoke)]
