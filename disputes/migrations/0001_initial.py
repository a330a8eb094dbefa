"""Acknowledgements and disputes move from reviews to their own app. Their tables keep their names
(reviews_acknowledgement, reviews_dispute, reviews_disputedcriterion): only Django's state and the content
types change, and with the content types the permissions (disputes.add_dispute, disputes.resolve_dispute)
the role groups hold keep their rows."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MODELS = ["acknowledgement", "dispute", "disputedcriterion"]


def content_types_move(apps, schema_editor, old="reviews", new="disputes"):
    ContentType = apps.get_model("contenttypes", "ContentType")
    moving = list(ContentType.objects.filter(app_label=old, model__in=MODELS).values_list("model", flat=True))
    # A content type made under `new` while both apps had the model in Django's state is unused: it goes.
    ContentType.objects.filter(app_label=new, model__in=moving).delete()
    ContentType.objects.filter(app_label=old, model__in=moving).update(app_label=new)


def content_types_move_back(apps, schema_editor):
    content_types_move(apps, schema_editor, old="disputes", new="reviews")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('qa', '0020_delete_apikey'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('reviews', '0017_rollups_to_insights'),  # the tables as reviews left them
        ('rubrics', '0005_rubric_workspace'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Acknowledgement',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('comment', models.TextField(blank=True, verbose_name='comment')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('review', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='acknowledgement', to='reviews.review')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'acknowledgement',
                        'verbose_name_plural': 'acknowledgements',
                        'db_table': 'reviews_acknowledgement',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='Dispute',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('agent_id', models.CharField(max_length=100, verbose_name='agent id')),
                        ('status', models.CharField(choices=[('open', 'Open'), ('resolved', 'Resolved')], default='open', max_length=10, verbose_name='status')),
                        ('due_at', models.DateTimeField(verbose_name='due')),
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('resolved_at', models.DateTimeField(blank=True, null=True)),
                        ('comment', models.TextField(blank=True, verbose_name="lead's comment")),
                        ('outcome_seen_at', models.DateTimeField(blank=True, null=True)),
                        ('assigned_to', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='disputes_assigned', to=settings.AUTH_USER_MODEL)),
                        ('opened_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='disputes_opened', to=settings.AUTH_USER_MODEL)),
                        ('recording', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='disputes', to='qa.recording')),
                        ('resolution', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='resolved_dispute', to='reviews.review')),
                        ('resolved_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='disputes_resolved', to=settings.AUTH_USER_MODEL)),
                        ('review', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='disputes', to='reviews.review')),
                    ],
                    options={
                        'verbose_name': 'dispute',
                        'verbose_name_plural': 'disputes',
                        'db_table': 'reviews_dispute',
                        'ordering': ['-created_at', '-id'],
                        'permissions': [('resolve_dispute', "Can resolve agents' disputes")],
                    },
                ),
                migrations.CreateModel(
                    name='DisputedCriterion',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('proposed_value', models.SmallIntegerField(blank=True, null=True, verbose_name='proposed value')),
                        ('proposed_not_applicable', models.BooleanField(default=False, verbose_name='proposed not applicable')),
                        ('reason', models.TextField(verbose_name='reason')),
                        ('outcome', models.CharField(blank=True, choices=[('', 'Pending'), ('upheld', 'Upheld'), ('rejected', 'Rejected')], default='', max_length=10, verbose_name='outcome')),
                        ('resolved_value', models.SmallIntegerField(blank=True, null=True, verbose_name='resolved value')),
                        ('resolved_not_applicable', models.BooleanField(default=False, verbose_name='resolved not applicable')),
                        ('lead_comment', models.TextField(blank=True, verbose_name="lead's comment")),
                        ('criterion', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='rubrics.criterion')),
                        ('dispute', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='criteria', to='disputes.dispute')),
                    ],
                    options={
                        'verbose_name': 'disputed criterion',
                        'verbose_name_plural': 'disputed criteria',
                        'db_table': 'reviews_disputedcriterion',
                        'ordering': ['criterion__order', 'criterion_id'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='dispute',
                    constraint=models.UniqueConstraint(fields=('review',), name='dispute_once_per_review'),
                ),
                migrations.AddConstraint(
                    model_name='disputedcriterion',
                    constraint=models.UniqueConstraint(fields=('dispute', 'criterion'), name='disputed_criterion_once'),
                ),
                migrations.AddConstraint(
                    model_name='disputedcriterion',
                    constraint=models.CheckConstraint(condition=models.Q(('proposed_value__isnull', True), ('proposed_not_applicable', False), _connector='OR'), name='disputed_criterion_value_or_not_applicable'),
                ),
            ],
        ),
        migrations.RunPython(content_types_move, content_types_move_back),
    ]
