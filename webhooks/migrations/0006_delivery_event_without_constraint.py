"""A delivery's event without a database constraint: the events become partitioned (outbox 0004), and a
foreign key can only reference a partitioned table's whole key (id, created_at)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("webhooks", "0005_delivery_lease"), ("outbox", "0003_alter_event_name_alter_event_subject_type")]
    run_before = [("outbox", "0004_event_partitioned_by_month")]

    operations = [
        migrations.AlterField(
            model_name="delivery",
            name="event",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="webhook_deliveries",
                to="outbox.event",
            ),
        ),
    ]
