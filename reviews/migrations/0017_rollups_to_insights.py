"""The weekly rollups (CriterionWeek, CriterionPairWeek, ScorecardWeek) live in insights now
(insights/migrations/0001_initial): Django's state only, the tables stay."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('insights', '0001_initial'),
        ('reviews', '0016_alter_review_api_key'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='CriterionPairWeek'),
                migrations.DeleteModel(name='CriterionWeek'),
                migrations.DeleteModel(name='ScorecardWeek'),
            ],
        ),
    ]
