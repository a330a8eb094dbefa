"""ApiKey lives in access now (access/migrations/0004_apikey): Django's state only, the table stays."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('experiments', '0006_alter_experiment_created_by_key'),
        ('qa', '0019_judge_evidence_mode'),
        ('reviews', '0016_alter_review_api_key'),
        ('webhooks', '0004_alter_subscription_api_key'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name='ApiKey',
                ),
            ],
        ),
    ]
