"""Events partitioned by the month they were written (docs/operations/storage.md).

On PostgreSQL the table becomes a declarative partitioned table by `created_at`, one partition per month
(those the data needs, this month and the next two) and a DEFAULT partition, so an insert never fails;
the primary key is (id, created_at), as PostgreSQL requires (the ids are random UUIDs: still unique).
Webhook deliveries keep their event without a database constraint (webhooks 0006, run before this);
core.partitions' retention removes them before it drops their events' month. Other databases keep a
plain table. The SQL is written out here, frozen; the live maintenance is core.partitions.
"""

from datetime import date

from django.db import migrations

MONTHS_AHEAD = 2


def _next_month(day: date) -> date:
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


def _months(cursor, table: str, key: str) -> list[date]:
    cursor.execute(f"SELECT min({key}), max({key}) FROM {table}")  # noqa: S608 (names written here)
    low, high = cursor.fetchone()
    cursor.execute("SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date")
    (month,) = cursor.fetchone()
    first = min(month, low.date().replace(day=1)) if low else month
    last = month
    for _ in range(MONTHS_AHEAD):
        last = _next_month(last)
    if high and high.date().replace(day=1) > last:
        last = high.date().replace(day=1)
    months, at = [], first
    while at <= last:
        months.append(at)
        at = _next_month(at)
    return months


def _partitions_create(cursor, table: str, key: str, rows_from: str) -> None:
    """The months `rows_from` holds rows of, this month and the next ones: each a partition of `table`; and its default."""
    for month in _months(cursor, rows_from, key):
        cursor.execute(
            f"CREATE TABLE {table}_p{month:%Y_%m} PARTITION OF {table} "
            f"FOR VALUES FROM ('{month:%Y-%m-%d} 00:00:00+00') TO ('{_next_month(month):%Y-%m-%d} 00:00:00+00')"
        )
    cursor.execute(f"CREATE TABLE {table}_default PARTITION OF {table} DEFAULT")


def _keys_create(cursor, primary_key: str) -> None:
    cursor.execute(f"ALTER TABLE outbox_event ADD PRIMARY KEY ({primary_key})")
    cursor.execute("CREATE INDEX event_undispatched ON outbox_event (created_at) WHERE dispatched_at IS NULL")
    cursor.execute("CREATE INDEX outbox_event_created_at_4ac4f8a3 ON outbox_event (created_at)")
    cursor.execute("CREATE INDEX outbox_event_workspace_id_935b36bb ON outbox_event (workspace_id)")
    cursor.execute(
        "ALTER TABLE outbox_event ADD CONSTRAINT outbox_event_workspace_id_fk FOREIGN KEY (workspace_id) "
        "REFERENCES access_workspace (id) DEFERRABLE INITIALLY DEFERRED"
    )


def partition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("ALTER TABLE outbox_event RENAME TO outbox_event_unpartitioned")
        cursor.execute(
            "CREATE TABLE outbox_event (LIKE outbox_event_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS) "
            "PARTITION BY RANGE (created_at)"
        )
        _partitions_create(cursor, "outbox_event", "created_at", rows_from="outbox_event_unpartitioned")
        cursor.execute("INSERT INTO outbox_event SELECT * FROM outbox_event_unpartitioned")
        cursor.execute("DROP TABLE outbox_event_unpartitioned")
        _keys_create(cursor, "id, created_at")


def unpartition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("ALTER TABLE outbox_event RENAME TO outbox_event_partitioned")
        cursor.execute("CREATE TABLE outbox_event (LIKE outbox_event_partitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
        cursor.execute("INSERT INTO outbox_event SELECT * FROM outbox_event_partitioned")
        cursor.execute("DROP TABLE outbox_event_partitioned CASCADE")
        _keys_create(cursor, "id")


class Migration(migrations.Migration):
    dependencies = [("outbox", "0003_alter_event_name_alter_event_subject_type")]

    operations = [migrations.RunPython(partition, unpartition)]
