"""The weekly rollups move from reviews to insights. Their tables keep their names (reviews_criterionweek,
reviews_criterionpairweek, reviews_scorecardweek): only Django's state and the content types change."""

import django.db.models.deletion
from django.db import migrations, models

MODELS = ["criterionweek", "criterionpairweek", "scorecardweek"]


def content_types_move(apps, schema_editor, old="reviews", new="insights"):
    """The content types follow their models, so any permission on them keeps its row."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    moving = list(ContentType.objects.filter(app_label=old, model__in=MODELS).values_list("model", flat=True))
    # A content type made under `new` while both apps had the model in Django's state is unused: it goes.
    ContentType.objects.filter(app_label=new, model__in=moving).delete()
    ContentType.objects.filter(app_label=old, model__in=moving).update(app_label=new)


def content_types_move_back(apps, schema_editor):
    content_types_move(apps, schema_editor, old="insights", new="reviews")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('reviews', '0016_alter_review_api_key'),  # the tables as reviews left them
        ('qa', '0018_recording_occurred_at_received'),  # it clears the rollups' rows without a week while they are reviews'
        ('rubrics', '0005_rubric_workspace'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='CriterionPairWeek',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('week', models.DateField(null=True)),
                        ('team', models.CharField(max_length=100)),
                        ('agent_id', models.CharField(max_length=100)),
                        ('criterion_key', models.CharField(max_length=64)),
                        ('source', models.CharField(max_length=16)),
                        ('first', models.IntegerField()),
                        ('second', models.IntegerField()),
                        ('n', models.IntegerField()),
                        ('rubric', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rubrics.rubric')),
                    ],
                    options={
                        'db_table': 'reviews_criterionpairweek',
                        'indexes': [models.Index(fields=['rubric', 'week'], name='criterion_pair_week')],
                    },
                ),
                migrations.CreateModel(
                    name='CriterionWeek',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('week', models.DateField(null=True)),
                        ('team', models.CharField(max_length=100)),
                        ('agent_id', models.CharField(max_length=100)),
                        ('criterion_key', models.CharField(max_length=64)),
                        ('calls', models.IntegerField(default=0)),
                        ('scores', models.IntegerField(default=0)),
                        ('unverified', models.IntegerField(default=0)),
                        ('failed', models.IntegerField(default=0)),
                        ('human_units', models.IntegerField(default=0)),
                        ('rubric', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rubrics.rubric')),
                    ],
                    options={
                        'db_table': 'reviews_criterionweek',
                        'constraints': [models.UniqueConstraint(fields=('rubric', 'week', 'agent_id', 'team', 'criterion_key'), name='criterion_week_once')],
                    },
                ),
                migrations.CreateModel(
                    name='ScorecardWeek',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('week', models.DateField(null=True)),
                        ('team', models.CharField(max_length=100)),
                        ('agent_id', models.CharField(max_length=100)),
                        ('agent_name', models.CharField(max_length=200)),
                        ('column_key', models.CharField(max_length=64)),
                        ('flagged', models.BooleanField(default=False)),
                        ('judged_n', models.IntegerField()),
                        ('judged_total', models.FloatField()),
                        ('judged_squares', models.FloatField()),
                        ('unverified_n', models.IntegerField()),
                        ('known_n', models.IntegerField()),
                        ('known_total', models.FloatField()),
                        ('known_squares', models.FloatField()),
                        ('estimated_n', models.IntegerField()),
                        ('estimated_total', models.FloatField()),
                        ('estimated_squares', models.FloatField()),
                        ('waiting_n', models.IntegerField()),
                        ('human_n', models.IntegerField()),
                        ('human_total', models.FloatField()),
                        ('human_squares', models.FloatField()),
                        ('audit_n', models.IntegerField()),
                        ('audit_human', models.FloatField()),
                        ('audit_judge', models.FloatField()),
                        ('audit_human_squares', models.FloatField()),
                        ('audit_judge_squares', models.FloatField()),
                        ('audit_products', models.FloatField()),
                        ('rubric', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='rubrics.rubric')),
                    ],
                    options={
                        'db_table': 'reviews_scorecardweek',
                        'constraints': [models.UniqueConstraint(fields=('rubric', 'week', 'agent_id', 'team', 'column_key', 'flagged'), name='scorecard_week_once')],
                    },
                ),
            ],
        ),
        migrations.RunPython(content_types_move, content_types_move_back),
    ]
