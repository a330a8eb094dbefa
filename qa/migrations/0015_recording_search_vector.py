"""The transcripts' full-text column and its GIN index (qa.search), on PostgreSQL only: a generated
column, so every insert and update (the ORM's, or SQL's) keeps it, and a fresh SQLite installation
migrates as before and searches by substring."""

from django.db import migrations

FORWARD = [
    # The language's configuration as qa.search.SEARCH_CONFIG_SQL chooses it (written out: a migration
    # keeps what it did, whatever the code says later).
    "ALTER TABLE qa_recording ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (to_tsvector("
    "CASE WHEN lower(language) LIKE 'es%' THEN 'spanish'::regconfig "
    "WHEN lower(language) LIKE 'en%' THEN 'english'::regconfig ELSE 'simple'::regconfig END, transcript)) STORED",
    "CREATE INDEX qa_recording_search_vector ON qa_recording USING gin (search_vector)",
]
BACKWARD = ["DROP INDEX IF EXISTS qa_recording_search_vector", "ALTER TABLE qa_recording DROP COLUMN IF EXISTS search_vector"]


def run(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return apply


class Migration(migrations.Migration):
    dependencies = [("qa", "0014_redaction")]

    operations = [migrations.RunPython(run(FORWARD), run(BACKWARD))]
