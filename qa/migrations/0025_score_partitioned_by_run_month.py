"""Scores partitioned by their run's month (docs/operations/storage.md).

Every score carries its run's created_at (`run_created_at`), the partition key. On PostgreSQL the table
becomes a declarative partitioned table with one partition per month (those the data needs, this month and
the next two) and a DEFAULT partition, so an insert never fails; the primary key is (id, run_created_at),
the one-score-per-criterion constraint includes the key (the same thing: a run has one created_at), and a
composite foreign key to the run's (id, created_at) keeps the key equal to the run's (a run's created_at
is never rewritten, but should one be, ON UPDATE CASCADE moves its scores with it). Other databases
(SQLite, the first run's) keep a plain table. The SQL is written out here, frozen, not imported: the
live partition maintenance is core.partitions.
"""

from datetime import date

from django.db import migrations, models
from django.db.models import OuterRef, Subquery

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


def run_created_at_fill(apps, schema_editor):
    Score = apps.get_model("qa", "Score")
    JudgeRun = apps.get_model("qa", "JudgeRun")
    Score.objects.update(run_created_at=Subquery(JudgeRun.objects.filter(pk=OuterRef("run_id")).values("created_at")[:1]))


def partition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("ALTER TABLE qa_judgerun ADD CONSTRAINT judgerun_id_created_at UNIQUE (id, created_at)")
        cursor.execute("ALTER TABLE qa_score RENAME TO qa_score_unpartitioned")
        cursor.execute(
            "CREATE TABLE qa_score (LIKE qa_score_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
            "INCLUDING IDENTITY) PARTITION BY RANGE (run_created_at)"
        )
        _partitions_create(cursor, "qa_score", "run_created_at", rows_from="qa_score_unpartitioned")
        cursor.execute("INSERT INTO qa_score SELECT * FROM qa_score_unpartitioned")
        cursor.execute("DROP TABLE qa_score_unpartitioned")
        cursor.execute("SELECT setval(pg_get_serial_sequence('qa_score', 'id'), coalesce(max(id), 0) + 1, false) FROM qa_score")
        # Keys and indexes once the rows are in (the old table's names are free now).
        cursor.execute("ALTER TABLE qa_score ADD PRIMARY KEY (id, run_created_at)")
        cursor.execute(
            "ALTER TABLE qa_score ADD CONSTRAINT score_one_per_criterion_per_run "
            "UNIQUE (run_id, criterion_id, run_created_at)"
        )
        cursor.execute("CREATE INDEX qa_score_criterion_id_d0a588d5 ON qa_score (criterion_id)")
        cursor.execute(
            "ALTER TABLE qa_score ADD CONSTRAINT qa_score_criterion_id_fk FOREIGN KEY (criterion_id) "
            "REFERENCES rubrics_criterion (id) DEFERRABLE INITIALLY DEFERRED"
        )
        cursor.execute(
            "ALTER TABLE qa_score ADD CONSTRAINT qa_score_run_fk FOREIGN KEY (run_id, run_created_at) "
            "REFERENCES qa_judgerun (id, created_at) ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED"
        )


def unpartition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("ALTER TABLE qa_score RENAME TO qa_score_partitioned")
        cursor.execute(
            "CREATE TABLE qa_score (LIKE qa_score_partitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS "
            "INCLUDING IDENTITY)"
        )
        cursor.execute("INSERT INTO qa_score SELECT * FROM qa_score_partitioned")
        cursor.execute("DROP TABLE qa_score_partitioned CASCADE")
        cursor.execute("SELECT setval(pg_get_serial_sequence('qa_score', 'id'), coalesce(max(id), 0) + 1, false) FROM qa_score")
        cursor.execute("ALTER TABLE qa_score ADD PRIMARY KEY (id)")
        cursor.execute(
            "ALTER TABLE qa_score ADD CONSTRAINT score_one_per_criterion_per_run "
            "UNIQUE (run_id, criterion_id, run_created_at)"
        )
        cursor.execute("CREATE INDEX qa_score_criterion_id_d0a588d5 ON qa_score (criterion_id)")
        cursor.execute("CREATE INDEX qa_score_run_id_1965114f ON qa_score (run_id)")
        cursor.execute(
            "ALTER TABLE qa_score ADD CONSTRAINT qa_score_criterion_id_fk FOREIGN KEY (criterion_id) "
            "REFERENCES rubrics_criterion (id) DEFERRABLE INITIALLY DEFERRED"
        )
        cursor.execute("ALTER TABLE qa_judgerun DROP CONSTRAINT judgerun_id_created_at")


class Migration(migrations.Migration):
    dependencies = [("qa", "0024_certified_threshold")]

    operations = [
        migrations.AddField(
            model_name="score", name="run_created_at", field=models.DateTimeField(editable=False, null=True)
        ),
        migrations.RunPython(run_created_at_fill, migrations.RunPython.noop),
        migrations.AlterField(model_name="score", name="run_created_at", field=models.DateTimeField(editable=False)),
        migrations.RemoveConstraint(model_name="score", name="score_one_per_criterion_per_run"),
        migrations.AddConstraint(
            model_name="score",
            constraint=models.UniqueConstraint(
                fields=("run", "criterion", "run_created_at"), name="score_one_per_criterion_per_run"
            ),
        ),
        migrations.AlterField(
            model_name="score",
            name="run",
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=models.deletion.CASCADE,
                related_name="scores",
                to="qa.judgerun",
            ),
        ),
        migrations.RunPython(partition, unpartition),
    ]
