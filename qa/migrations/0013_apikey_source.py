"""API keys are bound to a source. Keys made before acted for every system: they stay all-sources
keys (so nothing that uses them breaks), with their name as the source they post under by default."""

from django.db import migrations, models
from django.db.models import F


def existing_keys_keep_working(apps, schema_editor):
    apps.get_model("qa", "ApiKey").objects.update(source=F("name"))


class Migration(migrations.Migration):
    dependencies = [("qa", "0012_job_lease")]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="source",
            field=models.CharField(
                blank=True,
                help_text="The system whose recordings this key posts, reads and rejudges; blank: the key's name.",
                max_length=100,
                verbose_name="source",
            ),
        ),
        # True for the rows there now, False for keys made from here on.
        migrations.AddField(
            model_name="apikey",
            name="all_sources",
            field=models.BooleanField(default=True, verbose_name="all sources"),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="apikey",
            name="all_sources",
            field=models.BooleanField(
                default=False,
                help_text="Reads and rejudges every system's recordings and posts under any source (an integration hub).",
                verbose_name="all sources",
            ),
        ),
        migrations.RunPython(existing_keys_keep_working, migrations.RunPython.noop),
    ]
