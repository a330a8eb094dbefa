"""Acknowledgements and disputes live in the disputes app now (disputes/migrations/0001_initial):
Django's state only, the tables stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('disputes', '0001_initial'),
        ('reviews', '0017_rollups_to_insights'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='DisputedCriterion'),
                migrations.DeleteModel(name='Acknowledgement'),
                migrations.DeleteModel(name='Dispute'),
            ],
        ),
    ]
