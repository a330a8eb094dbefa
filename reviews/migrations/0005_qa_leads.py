"""Create the "QA leads" group: they run calibration sessions and read the
results and reports. Supervisors take part in sessions they are invited to,
which needs no permission; a lead who also reviews is put in both groups."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "QA leads"
GRANTS = [
    ("reviews", "calibrationsession", ["run_calibration", "view_calibrationsession"]),
    ("reviews", "agreedvalue", ["add_agreedvalue", "change_agreedvalue", "view_agreedvalue"]),
    ("reviews", "review", ["view_review"]),
    ("reviews", "criterionreview", ["view_criterionreview"]),
    ("rubrics", "rubric", ["view_rubric"]),
    ("rubrics", "criterion", ["view_criterion"]),
    ("qa", "recording", ["view_recording"]),
    ("qa", "judgerun", ["view_judgerun"]),
    ("qa", "score", ["view_score"]),
]


def create_group(apps, schema_editor):
    # As in 0002: permissions are normally created after all migrations ran.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    for app_label, model, codenames in GRANTS:
        group.permissions.add(
            *Permission.objects.filter(
                content_type__app_label=app_label, content_type__model=model, codename__in=codenames
            )
        )


def delete_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [("reviews", "0004_calibration")]

    operations = [migrations.RunPython(create_group, delete_group)]
