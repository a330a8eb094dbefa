"""Calls stored without their own time take the time they were received, marked as such, so the dated
views (which all filter on occurred_at) count them; the rollups' rows for calls with no time go, and the
calls are read again into their weeks."""

from django.db import migrations, models
from django.db.models import F


def received_time(apps, schema_editor):
    Recording = apps.get_model("qa", "Recording")
    Recording.objects.filter(occurred_at__isnull=True).update(
        occurred_at=F("created_at"), occurred_at_received=True, rollup_stale=True
    )
    # No call is without a time now: the weekly rollups' rows for such calls would count them twice.
    for name in ("ScorecardWeek", "CriterionWeek", "CriterionPairWeek"):
        apps.get_model("reviews", name).objects.filter(week__isnull=True).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('qa', '0017_workspaces'),
        ('reviews', '0015_criterion_weeks'),
    ]

    operations = [
        migrations.AddField(
            model_name='recording',
            name='occurred_at_received',
            field=models.BooleanField(db_default=False, default=False, help_text="The call's own time was not sent: its time is when it was received.", verbose_name='time received'),
        ),
        migrations.RunPython(received_time, migrations.RunPython.noop),
    ]
