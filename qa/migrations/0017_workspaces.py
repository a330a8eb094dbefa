"""Recordings take their rubric's workspace and keys the default one; a recording's external id is
unique per workspace; each team a recording names becomes an access.Team of its workspace."""

import django.db.models.deletion
from django.db import migrations, models


DEFAULT_WORKSPACE = "default"


def forward(apps, schema_editor):
    Workspace = apps.get_model("access", "Workspace")
    ApiKey = apps.get_model("qa", "ApiKey")
    Team = apps.get_model("access", "Team")
    workspace, _ = Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE, defaults={"name": "Default"})
    ApiKey.objects.filter(workspace__isnull=True).update(workspace=workspace)
    with schema_editor.connection.cursor() as cursor:
        # One statement for a hundred thousand rows (the benchmarks' databases): no row through Python.
        cursor.execute(
            "UPDATE qa_recording SET workspace_id = r.workspace_id FROM rubrics_rubric r "
            "WHERE r.id = qa_recording.rubric_id AND qa_recording.workspace_id IS NULL"
        )
        cursor.execute("SELECT DISTINCT workspace_id, team FROM qa_recording WHERE team <> ''")
        pairs = cursor.fetchall()
    Team.objects.bulk_create(
        [Team(workspace_id=workspace_id, name=name) for workspace_id, name in pairs], ignore_conflicts=True
    )


class Migration(migrations.Migration):
    dependencies = [
        ("access", "0002_default_workspace"),
        ("rubrics", "0005_rubric_workspace"),
        ("qa", "0016_recording_search_vector"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="workspace",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="api_keys", to="access.workspace"
            ),
        ),
        migrations.AddField(
            model_name="recording",
            name="workspace",
            field=models.ForeignKey(
                null=True, editable=False, on_delete=django.db.models.deletion.PROTECT, related_name="recordings",
                to="access.workspace",
            ),
        ),
        migrations.RunPython(forward, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="apikey",
            name="workspace",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="api_keys", to="access.workspace", verbose_name="workspace",
            ),
        ),
        migrations.AlterField(
            model_name="recording",
            name="workspace",
            field=models.ForeignKey(
                editable=False, on_delete=django.db.models.deletion.PROTECT, related_name="recordings",
                to="access.workspace",
            ),
        ),
        migrations.RemoveConstraint(model_name="recording", name="recording_external_id_unique"),
        migrations.AddConstraint(
            model_name="recording",
            constraint=models.UniqueConstraint(
                fields=("workspace", "source", "external_id"), name="recording_external_id_unique_in_workspace"
            ),
        ),
        migrations.AddIndex(
            model_name="recording",
            index=models.Index(fields=["workspace", "team"], name="qa_recording_workspace_team"),
        ),
    ]
