"""A subscription belongs to a workspace and receives that workspace's events alone; those that exist
go to the default workspace, where everything that existed went (access 0002)."""

import django.db.models.deletion
from django.db import migrations, models

import access.models

DEFAULT_WORKSPACE = "default"


def to_the_default_workspace(apps, schema_editor):
    Workspace = apps.get_model("access", "Workspace")
    Subscription = apps.get_model("webhooks", "Subscription")
    if Subscription.objects.exists():
        workspace, _ = Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE, defaults={"name": "Default"})
        Subscription.objects.update(workspace=workspace)


class Migration(migrations.Migration):
    dependencies = [("access", "0002_default_workspace"), ("webhooks", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="subscription",
            name="workspace",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="webhook_subscriptions",
                to="access.workspace", verbose_name="workspace",
            ),
        ),
        migrations.RunPython(to_the_default_workspace, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="subscription",
            name="workspace",
            field=models.ForeignKey(
                default=access.models.default_workspace_id, on_delete=django.db.models.deletion.CASCADE,
                related_name="webhook_subscriptions", to="access.workspace", verbose_name="workspace",
            ),
        ),
    ]
