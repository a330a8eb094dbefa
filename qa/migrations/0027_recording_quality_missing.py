from django.db import migrations, models


def quality_refill(apps, schema_editor):
    # The judge's score is now over the values that exist (issue 41): recompute every call's, with its coverage,
    # through the service the routing's arithmetic shares (as 0015 does).
    from qa.models import Recording
    from qa.services import recordings_quality_store

    recordings_quality_store(recordings=Recording.objects.all())


class Migration(migrations.Migration):

    dependencies = [
        ('qa', '0026_judge_evidence_auto_quotes_locally'),
    ]

    operations = [
        migrations.AddField(
            model_name='recording',
            name='quality_missing',
            field=models.PositiveSmallIntegerField(db_default=0, default=0, verbose_name='criteria without a value'),
        ),
        migrations.RunPython(quality_refill, migrations.RunPython.noop),
    ]
