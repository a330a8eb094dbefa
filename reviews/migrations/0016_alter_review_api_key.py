"""The key this row names now lives in access (same table, same column): Django's state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('access', '0004_apikey'),
        ('reviews', '0015_criterion_weeks'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='review',
                    name='api_key',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, to='access.apikey'),
                ),
            ],
        ),
    ]
