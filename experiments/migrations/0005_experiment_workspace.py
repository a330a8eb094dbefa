"""Experiments take their rubric's workspace (a slug family lives in one)."""

import django.db.models.deletion
from django.db import migrations, models


DEFAULT_WORKSPACE = "default"


def forward(apps, schema_editor):
    Workspace = apps.get_model("access", "Workspace")
    Experiment = apps.get_model("experiments", "Experiment")
    Rubric = apps.get_model("rubrics", "Rubric")
    default = Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE, defaults={"name": "Default"})[0].pk
    families = dict(Rubric.objects.values_list("slug", "workspace_id"))
    for experiment in Experiment.objects.filter(workspace__isnull=True):
        experiment.workspace_id = families.get(experiment.rubric_slug, default)
        experiment.save(update_fields=["workspace"])


class Migration(migrations.Migration):
    dependencies = [("rubrics", "0005_rubric_workspace"), ("experiments", "0004_job_lease")]

    operations = [
        migrations.AddField(
            model_name="experiment",
            name="workspace",
            field=models.ForeignKey(
                null=True, editable=False, on_delete=django.db.models.deletion.PROTECT, related_name="experiments",
                to="access.workspace",
            ),
        ),
        migrations.RunPython(forward, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="experiment",
            name="workspace",
            field=models.ForeignKey(
                editable=False,
                on_delete=django.db.models.deletion.PROTECT, related_name="experiments", to="access.workspace",
            ),
        ),
    ]
