"""Every rubric goes into the default workspace (access 0002 made it); new ones name theirs."""

import django.db.models.deletion
from django.db import migrations, models


DEFAULT_WORKSPACE = "default"


def forward(apps, schema_editor):
    Workspace = apps.get_model("access", "Workspace")
    Rubric = apps.get_model("rubrics", "Rubric")
    workspace, _ = Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE, defaults={"name": "Default"})
    # An update, not save(): published versions refuse save() (Rubric.ensure_editable).
    Rubric.objects.filter(workspace__isnull=True).update(workspace=workspace)


class Migration(migrations.Migration):
    dependencies = [("access", "0002_default_workspace"), ("rubrics", "0004_sections_and_critical_criteria")]

    operations = [
        migrations.AddField(
            model_name="rubric",
            name="workspace",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="rubrics", to="access.workspace"
            ),
        ),
        migrations.RunPython(forward, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="rubric",
            name="workspace",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="rubrics",
                to="access.workspace",
                verbose_name="workspace",
            ),
        ),
    ]
