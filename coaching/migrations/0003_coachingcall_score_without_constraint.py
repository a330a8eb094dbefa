"""A coaching call's score without a database constraint: the scores become partitioned (qa 0025), and a
foreign key can only reference a partitioned table's whole key (id, run_created_at)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("coaching", "0002_roles"), ("qa", "0024_certified_threshold")]
    run_before = [("qa", "0025_score_partitioned_by_run_month")]

    operations = [
        migrations.AlterField(
            model_name="coachingcall",
            name="score",
            field=models.ForeignKey(
                db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name="+", to="qa.score"
            ),
        ),
    ]
