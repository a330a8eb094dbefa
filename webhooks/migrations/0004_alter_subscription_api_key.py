"""The key this row names now lives in access (same table, same column): Django's state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('access', '0004_apikey'),
        ('webhooks', '0003_attempt_response_excerpt'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='subscription',
                    name='api_key',
                    field=models.ForeignKey(blank=True, help_text='The key that created it, which alone may manage it.', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='webhook_subscriptions', to='access.apikey', verbose_name='API key'),
                ),
            ],
        ),
    ]
