"""Each judged arm records the prompt version it was created with: its items
are asked that question or fail, and a draft edited since is not published on
the experiment's word. Arms created before stay blank (judged as before)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("experiments", "0002_roles"),
    ]

    operations = [
        migrations.AddField(
            model_name="arm",
            name="prompt_version",
            field=models.CharField(blank=True, max_length=64, verbose_name="prompt version"),
        ),
    ]
