"""ApiKey moves from qa to access (below every app, so `access` tells a key from a person by
its class). Its table stays qa_apikey: only Django's state and the content type change."""

import django.db.models.deletion
from django.db import migrations, models


def content_type_move(apps, schema_editor, old="qa", new="access"):
    """The key's content type follows it, so its permissions (and any group holding them) keep their rows.
    A migration that creates permissions (reviews' role groups) may have run while both apps had the model
    in Django's state and made a second, unused content type under `new`: that one goes, the old one moves."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    if ContentType.objects.filter(app_label=old, model="apikey").exists():
        ContentType.objects.filter(app_label=new, model="apikey").delete()
        ContentType.objects.filter(app_label=old, model="apikey").update(app_label=new)


def content_type_move_back(apps, schema_editor):
    content_type_move(apps, schema_editor, old="access", new="qa")


class Migration(migrations.Migration):

    dependencies = [
        ('access', '0003_sso_identity'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('qa', '0017_workspaces'),  # the table as qa left it
        # After the migrations that create permissions for every model in Django's state: run between this one
        # and qa's 0018 they would make a second content type for the key under qa.
        ('experiments', '0005_experiment_workspace'),
        ('reviews', '0015_criterion_weeks'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='ApiKey',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(help_text='The external system.', max_length=100, unique=True, verbose_name='name')),
                        ('source', models.CharField(blank=True, help_text="The system whose recordings this key posts, reads and rejudges; blank: the key's name.", max_length=100, verbose_name='source')),
                        ('all_sources', models.BooleanField(default=False, help_text="Reads and rejudges every system's recordings and posts under any source (an integration hub).", verbose_name='all sources')),
                        ('prefix', models.CharField(editable=False, max_length=8, unique=True)),
                        ('key_hash', models.CharField(editable=False, max_length=64)),
                        ('can_review', models.BooleanField(default=False, verbose_name='can post reviews')),
                        ('can_run_experiments', models.BooleanField(default=False, help_text="A rubric owner's key: create, cancel and read experiments.", verbose_name='can run experiments')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('expires_at', models.DateTimeField(blank=True, null=True, verbose_name='expires at')),
                        ('revoked_at', models.DateTimeField(blank=True, null=True, verbose_name='revoked at')),
                        ('last_used_at', models.DateTimeField(blank=True, editable=False, null=True)),
                        ('workspace', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='api_keys', to='access.workspace', verbose_name='workspace')),
                    ],
                    options={
                        'verbose_name': 'API key',
                        'verbose_name_plural': 'API keys',
                        'db_table': 'qa_apikey',
                        'ordering': ['name'],
                    },
                ),
            ],
        ),
        migrations.RunPython(content_type_move, content_type_move_back),
    ]
