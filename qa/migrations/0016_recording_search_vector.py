"""The transcripts' full-text column and its GIN indexes (qa.search), and the index the calls list's
order reads: PostgreSQL's only.

The column is no model field: a trigger sets it when a row is inserted and when its transcript or
language change (not on the many updates of a call's status, which a generated column would
recompute), so rows written as SQL get it too. A fresh SQLite installation migrates without it and
searches by substring."""

from django.db import migrations

# Which configuration reads a transcript, as qa.search reads them (written out: a migration keeps what it
# did, whatever the code says later).
SPANISH = "lower(language) LIKE 'es%'"
ENGLISH = "lower(language) LIKE 'en%'"
OTHER = f"NOT ({SPANISH} OR {ENGLISH})"
FUNCTION = r"""
CREATE FUNCTION qa_recording_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_vector := to_tsvector(
        CASE WHEN lower(NEW.language) LIKE 'es%' THEN 'spanish'::regconfig
             WHEN lower(NEW.language) LIKE 'en%' THEN 'english'::regconfig ELSE 'simple'::regconfig END,
        NEW.transcript);
    RETURN NEW;
END
$$
"""
FORWARD = [
    "ALTER TABLE qa_recording ADD COLUMN search_vector tsvector",
    FUNCTION,
    "CREATE TRIGGER qa_recording_search_vector_insert BEFORE INSERT ON qa_recording "
    "FOR EACH ROW EXECUTE FUNCTION qa_recording_search_vector()",
    "CREATE TRIGGER qa_recording_search_vector_update BEFORE UPDATE OF transcript, language ON qa_recording "
    "FOR EACH ROW WHEN (OLD.transcript IS DISTINCT FROM NEW.transcript OR OLD.language IS DISTINCT FROM NEW.language) "
    "EXECUTE FUNCTION qa_recording_search_vector()",
    # The calls already stored: the update trigger's condition is false for them, so set them here.
    "UPDATE qa_recording SET search_vector = to_tsvector(CASE WHEN lower(language) LIKE 'es%' THEN "
    "'spanish'::regconfig WHEN lower(language) LIKE 'en%' THEN 'english'::regconfig ELSE 'simple'::regconfig END, "
    "transcript)",
    # One index per configuration, each over the calls it reads: a search asks each with its own reading.
    f"CREATE INDEX qa_recording_search_spanish ON qa_recording USING gin (search_vector) WHERE {SPANISH}",
    f"CREATE INDEX qa_recording_search_english ON qa_recording USING gin (search_vector) WHERE {ENGLISH}",
    f"CREATE INDEX qa_recording_search_other ON qa_recording USING gin (search_vector) WHERE {OTHER}",
    # Not for reading: so that ANALYZE keeps statistics of lower(language) and the planner knows how many
    # calls each configuration reads (without them it guesses 0.5 %, and reads the whole table).
    "CREATE INDEX qa_recording_language_lower ON qa_recording (lower(language))",
    # The calls list's order (calls.selectors.call_search), latest first: a common word's first
    # page is the first few calls of this index that match, not a sort of every match. PostgreSQL's
    # only too: SQLite has no NULLS LAST in an index, and a first-run database needs none.
    "CREATE INDEX qa_recording_latest ON qa_recording (occurred_at DESC NULLS LAST, id DESC)",
]
BACKWARD = [
    "DROP INDEX IF EXISTS qa_recording_latest",
    "DROP INDEX IF EXISTS qa_recording_language_lower",
    "DROP INDEX IF EXISTS qa_recording_search_other",
    "DROP INDEX IF EXISTS qa_recording_search_english",
    "DROP INDEX IF EXISTS qa_recording_search_spanish",
    "DROP TRIGGER IF EXISTS qa_recording_search_vector_update ON qa_recording",
    "DROP TRIGGER IF EXISTS qa_recording_search_vector_insert ON qa_recording",
    "DROP FUNCTION IF EXISTS qa_recording_search_vector()",
    "ALTER TABLE qa_recording DROP COLUMN IF EXISTS search_vector",
]


def run(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return apply


class Migration(migrations.Migration):
    dependencies = [("qa", "0015_recording_quality_score")]

    operations = [migrations.RunPython(run(FORWARD), run(BACKWARD))]
