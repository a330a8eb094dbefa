"""The scorecards' rollup by stratum (flagged or plain), with the sums of the stratified estimator.

The rollup is a cache of the calls: its rows are deleted and every judged call is marked, so the next
refresh (Celery beat, or the first scorecard read, which reads the calls meanwhile) builds it again."""

from django.db import migrations, models


def clear(apps, schema_editor):
    apps.get_model("reviews", "ScorecardWeek").objects.all().delete()


def mark_calls(apps, schema_editor):
    apps.get_model("qa", "Recording").objects.filter(current_run__isnull=False).update(rollup_stale=True)


NEW_COUNTS = ["unverified_n", "known_n", "estimated_n", "waiting_n", "audit_n"]
NEW_SUMS = [
    "known_total", "known_squares", "estimated_total", "estimated_squares",
    "audit_human", "audit_judge", "audit_human_squares", "audit_judge_squares", "audit_products",
]  # fmt: skip
OLD = [f"{part}_{moment}" for part in ("difference", "paired_human") for moment in ("n", "total", "squares")]


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0009_human_values_verified_only"),
        ("qa", "0011_recording_rollup_stale"),
    ]

    operations = [
        migrations.RunPython(clear, migrations.RunPython.noop),
        migrations.RemoveConstraint(model_name="scorecardweek", name="scorecard_week_once"),
        *(migrations.RemoveField(model_name="scorecardweek", name=name) for name in OLD),
        migrations.AddField(model_name="scorecardweek", name="flagged", field=models.BooleanField(default=False)),
        *(
            migrations.AddField(
                model_name="scorecardweek", name=name, field=models.IntegerField(default=0), preserve_default=False
            )
            for name in NEW_COUNTS
        ),
        *(
            migrations.AddField(
                model_name="scorecardweek", name=name, field=models.FloatField(default=0.0), preserve_default=False
            )
            for name in NEW_SUMS
        ),
        migrations.AddConstraint(
            model_name="scorecardweek",
            constraint=models.UniqueConstraint(
                fields=("rubric", "week", "agent_id", "team", "column_key", "flagged"), name="scorecard_week_once"
            ),
        ),
        migrations.RunPython(mark_calls, migrations.RunPython.noop),
    ]
