"""Create the two roles with the permissions that fit them.

Supervisors review and read; rubric owners edit rubrics and read results.
Someone who does both is put in both groups.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLE_PERMISSIONS = {
    "Rubric owners": [
        ("rubrics", "rubric", ["add", "change", "delete", "view"]),
        ("rubrics", "criterion", ["add", "change", "delete", "view"]),
        ("rubrics", "criterionexception", ["add", "change", "delete", "view"]),
        ("qa", "recording", ["view"]),
        ("qa", "judgerun", ["view"]),
        ("qa", "score", ["view"]),
        ("reviews", "review", ["view"]),
        ("reviews", "criterionreview", ["view"]),
    ],
    "Supervisors": [
        ("rubrics", "rubric", ["view"]),
        ("rubrics", "criterion", ["view"]),
        ("rubrics", "criterionexception", ["view"]),
        ("qa", "recording", ["view"]),
        ("qa", "judgerun", ["view"]),
        ("qa", "score", ["view"]),
        ("reviews", "review", ["add", "view"]),
        ("reviews", "criterionreview", ["add", "view"]),
        ("reviews", "reviewclaim", ["add", "change", "delete", "view"]),
    ],
}


def create_groups(apps, schema_editor):
    # Permissions are normally created after all migrations ran; make sure
    # they exist now so the groups can point at them.
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
            group.permissions.add(
                *Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
            )


def delete_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLE_PERMISSIONS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("rubrics", "0001_initial"),
        ("qa", "0001_initial"),
        ("reviews", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_groups, delete_groups)]
