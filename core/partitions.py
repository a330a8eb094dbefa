"""Tables partitioned by month, and their retention (docs/operations/storage.md).

A model that names a `partition_key` (a DateTimeField: qa.Score's run_created_at, outbox.Event's
created_at) is kept by month. On PostgreSQL its table is declaratively partitioned (the apps' migrations
made it so): `partitions_ensure` creates this month's partition and the next ones ahead, so inserts land
in a partition of their own and not in the DEFAULT one that only catches what nothing else would.
With `QA_RETENTION_MONTHS` set, `retention_run` writes every month older than that to a Parquet file under
`QA_ARCHIVE_DIR`, reads the file back to count its rows, and only then drops the month: on PostgreSQL by
detaching and dropping its partition, elsewhere (SQLite) by deleting its rows. What refers to those rows
without a database constraint (a delivery to its event, a coaching call to its score) is treated as its
foreign key's on_delete says, by Django, before the month goes, and checked gone.

Found by their `partition_key`, not imported: this platform module sits below the apps whose tables it keeps.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, models, transaction
from django.utils import timezone

logger = logging.getLogger(__name__)

# Partitions made ahead of time, beyond this month's: the beat runs hourly, so one would do; two leave a
# month's margin for a beat that was down.
MONTHS_AHEAD = 2
# Rows per Parquet row group, and per read from the database while archiving.
CHUNK = 50_000


class RetentionError(Exception):
    """A month that cannot be archived and dropped as configured; nothing of it was dropped."""


@dataclass(frozen=True)
class Archived:
    table: str
    month: date
    rows: int
    path: Path


def partitioned_models() -> list[type[models.Model]]:
    """The models kept by month: those naming a `partition_key`."""
    return [model for model in apps.get_models() if getattr(model, "partition_key", None)]


def month_start(moment: datetime | date) -> date:
    return date(moment.year, moment.month, 1)


def next_month(month: date) -> date:
    return date(month.year + month.month // 12, month.month % 12 + 1, 1)


def _months_back(month: date, count: int) -> date:
    index = month.year * 12 + month.month - 1 - count
    return date(index // 12, index % 12 + 1, 1)


def _bounds(month: date) -> tuple[datetime, datetime]:
    """A month's bounds in UTC, as the partitions are cut."""
    return datetime(month.year, month.month, 1, tzinfo=UTC), datetime.combine(next_month(month), datetime.min.time(), UTC)


def partition_name(table: str, month: date) -> str:
    return f"{table}_p{month:%Y_%m}"


def _is_partitioned(table: str) -> bool:
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass(%s)", [table])
        return cursor.fetchone() is not None


def partitions(table: str) -> dict[str, str]:
    """The table's partitions on PostgreSQL: name -> bound, as PostgreSQL writes it (`DEFAULT` for the default)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT child.relname, pg_get_expr(child.relpartbound, child.oid) FROM pg_inherits "
            "JOIN pg_class AS child ON child.oid = pg_inherits.inhrelid WHERE pg_inherits.inhparent = to_regclass(%s) "
            "ORDER BY child.relname",
            [table],
        )
        return dict(cursor.fetchall())


def partitions_ensure(*, today: date | None = None) -> list[str]:
    """Creates the partitions of this month and the MONTHS_AHEAD next, where missing, of every partitioned
    table; returns the names created. Nothing to do on other databases."""
    first = month_start(today or timezone.now().astimezone(UTC))
    created = []
    for model in partitioned_models():
        table = model._meta.db_table
        if not _is_partitioned(table):
            continue
        existing, month = partitions(table), first
        for _ in range(MONTHS_AHEAD + 1):
            if partition_name(table, month) not in existing:
                partition_create(table, model.partition_key, month)
                created.append(partition_name(table, month))
            month = next_month(month)
    return created


def partition_create(table: str, key: str, month: date) -> None:
    """One month's partition, unless it is there. Rows of that month already in the DEFAULT partition
    (written while no partition was there for them) move into it: PostgreSQL refuses the partition while
    they are there."""
    quote = connection.ops.quote_name
    name, default = partition_name(table, month), f"{table}_default"
    low, high = _bounds(month)
    bound = f"FOR VALUES FROM ('{low.isoformat()}') TO ('{high.isoformat()}')"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {quote(default)} IN SHARE ROW EXCLUSIVE MODE")
        cursor.execute("SELECT to_regclass(%s)", [name])
        if cursor.fetchone()[0] is not None:
            return
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {quote(default)} WHERE {quote(key)} >= %s AND {quote(key)} < %s)", [low, high])
        (stray,) = cursor.fetchone()
        if not stray:
            cursor.execute(f"CREATE TABLE {quote(name)} PARTITION OF {quote(table)} {bound}")
            return
        cursor.execute(f"CREATE TABLE {quote(name)} (LIKE {quote(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
        moved = f"{quote(key)} >= %s AND {quote(key)} < %s"
        cursor.execute(f"INSERT INTO {quote(name)} SELECT * FROM {quote(default)} WHERE {moved}", [low, high])
        cursor.execute(f"DELETE FROM {quote(default)} WHERE {moved}", [low, high])
        cursor.execute(f"ALTER TABLE {quote(table)} ATTACH PARTITION {quote(name)} {bound}")
    logger.warning("Partition %s made with the rows the default partition held for it.", name)


def archive_dir() -> Path:
    """The operator's archive folder (QA_ARCHIVE_DIR): absolute, existing, writable. Only the setting names
    it; the files in it are named by table and month alone."""
    value = settings.QA_ARCHIVE_DIR
    if not value:
        raise ImproperlyConfigured(
            "QA_RETENTION_MONTHS is set but QA_ARCHIVE_DIR is not: no month is dropped without its archive."
        )
    path = Path(value)
    if not path.is_absolute():
        raise ImproperlyConfigured(f"QA_ARCHIVE_DIR must be an absolute path, not {value!r}.")
    if not path.is_dir() or not os.access(path, os.W_OK):
        raise ImproperlyConfigured(f"QA_ARCHIVE_DIR {value!r} is not a folder this process can write to.")
    return path


def archive_path(folder: Path, table: str, month: date, *, copy: int = 1) -> Path:
    """Where a month's archive goes; a later archive of the same month (rows that reached it after it
    was dropped) is its second copy, and so on: no archive is ever written over."""
    return folder / table / (f"{table}_{month:%Y-%m}.parquet" if copy == 1 else f"{table}_{month:%Y-%m}.{copy}.parquet")


def retention_run(*, today: date | None = None) -> list[Archived]:
    """Archives, then drops, every month of every partitioned table older than QA_RETENTION_MONTHS whole
    months before this one (0: retention off). Oldest first; each month in a transaction of its own."""
    keep = settings.QA_RETENTION_MONTHS
    if not keep:
        return []
    folder = archive_dir()
    first_kept = _months_back(month_start(today or timezone.now().astimezone(UTC)), keep)
    done = []
    for model in partitioned_models():
        for month in _months_before(model, first_kept):
            done.append(month_archive(model, month, folder))
    return done


def _months_before(model: type[models.Model], first_kept: date) -> list[date]:
    """The months before `first_kept` that hold rows or a partition."""
    table, key = model._meta.db_table, model.partition_key
    cut = _bounds(first_kept)[0]
    months = set()
    if _is_partitioned(table):
        months |= {
            date(int(name[-7:-3]), int(name[-2:]), 1)
            for name in partitions(table)
            if name.startswith(f"{table}_p") and name[-7:-3].isdigit()
        }
        # The months without a partition of their own are in the default one: read it alone.
        with connection.cursor() as cursor:
            quote = connection.ops.quote_name
            cursor.execute(f"SELECT min({quote(key)}) FROM {quote(table + '_default')} WHERE {quote(key)} < %s", [cut])
            (oldest,) = cursor.fetchone()
    else:
        oldest = models.QuerySet(model).filter(**{f"{key}__lt": cut}).aggregate(oldest=models.Min(key))["oldest"]
    month = month_start(oldest.astimezone(UTC)) if oldest is not None else first_kept
    while month < first_kept:
        if models.QuerySet(model).filter(**{f"{key}__gte": _bounds(month)[0], f"{key}__lt": _bounds(month)[1]}).exists():
            months.add(month)
        month = next_month(month)
    return sorted(month for month in months if month < first_kept)


def month_archive(model: type[models.Model], month: date, folder: Path) -> Archived:
    """One month of `model`'s table: its rows to Parquet, read back and counted, then its dependants as
    their on_delete says, then the month dropped; all in one transaction, so a failure leaves the month
    whole (and at most a file that the next run writes again)."""
    table, key = model._meta.db_table, model.partition_key
    low, high = _bounds(month)
    quote = connection.ops.quote_name
    copy = 1
    while archive_path(folder, table, month, copy=copy).exists():
        copy += 1
    path = archive_path(folder, table, month, copy=copy)
    partition = partition_name(table, month) if _is_partitioned(table) else None
    if partition and partition not in partitions(table):
        partition = None
    with transaction.atomic():
        if partition:
            with connection.cursor() as cursor:  # no writes to the month while it is archived
                cursor.execute(f"LOCK TABLE {quote(partition)} IN SHARE MODE")
        rows = models.QuerySet(model).filter(**{f"{key}__gte": low, f"{key}__lt": high})
        written = _parquet_write(model, rows, path)
        if pq.ParquetFile(path).metadata.num_rows != written or written != rows.count():
            raise RetentionError(f"The archive of {table} for {month:%Y-%m} does not hold the month's rows; nothing dropped.")
        _dependants_settle(model, rows)
        with connection.cursor() as cursor:
            if partition:
                cursor.execute(f"ALTER TABLE {quote(table)} DETACH PARTITION {quote(partition)}")
                cursor.execute(f"DROP TABLE {quote(partition)}")
            # Elsewhere, and on PostgreSQL what the default partition held of the month.
            cursor.execute(f"DELETE FROM {quote(table)} WHERE {quote(key)} >= %s AND {quote(key)} < %s", [low, high])
    logger.info("Archived %s rows of %s for %s to %s and dropped them.", written, table, f"{month:%Y-%m}", path)
    return Archived(table=table, month=month, rows=written, path=path)


def _dependants_settle(model: type[models.Model], rows: models.QuerySet) -> None:
    """What refers to `rows` (reverse foreign keys, constrained in the database or not), as each key's
    on_delete says: deleted with them (CASCADE, through Django, so their own dependants follow), set to
    null (SET_NULL), or the month refused (PROTECT, RESTRICT). Then checked: none refers to them any more."""
    for relation in model._meta.related_objects:
        if not relation.field.concrete or relation.many_to_many:
            continue
        dependants = models.QuerySet(relation.related_model).filter(**{f"{relation.field.name}__in": rows.values("pk")})
        rule = relation.on_delete
        if rule in (models.PROTECT, models.RESTRICT):
            if dependants.exists():
                raise RetentionError(
                    f"{relation.related_model._meta.label} protects rows of {model._meta.db_table} in this month."
                )
            continue
        if rule is models.CASCADE:
            dependants.delete()
        elif rule is models.SET_NULL:
            dependants.update(**{relation.field.name: None})
        if dependants.exists():
            raise RetentionError(f"{relation.related_model._meta.label} still refers to rows of {model._meta.db_table}.")


def _arrow_type(field: models.Field) -> pa.DataType:
    kind = field.get_internal_type()
    if kind in {"AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField", "SmallIntegerField",
                "PositiveIntegerField", "PositiveBigIntegerField", "PositiveSmallIntegerField", "ForeignKey"}:  # fmt: skip
        return pa.int64()
    if kind == "FloatField":
        return pa.float64()
    if kind == "BooleanField":
        return pa.bool_()
    if kind == "DateTimeField":
        return pa.timestamp("us", tz="UTC")
    if kind == "DateField":
        return pa.date32()
    return pa.string()  # text, UUIDs, JSON (as its text), decimals


def _arrow_value(value: object) -> object:
    return str(value) if isinstance(value, uuid.UUID | Decimal) else value


def archive_schema(model: type[models.Model]) -> pa.Schema:
    """The columns of `model`'s table as the archive keeps them: one per concrete field, by column name."""
    return pa.schema([pa.field(field.column, _arrow_type(field)) for field in model._meta.concrete_fields])


def _parquet_write(model: type[models.Model], rows: models.QuerySet, path: Path) -> int:
    """`rows` to `path` (replaced whole, through a partial file), in row groups of CHUNK; returns how many."""
    fields = model._meta.concrete_fields
    schema = archive_schema(model)
    json_fields = {index for index, field in enumerate(fields) if field.get_internal_type() == "JSONField"}
    path.parent.mkdir(exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    written = 0
    with pq.ParquetWriter(partial, schema, compression="zstd") as writer:
        for chunk in _chunks(rows.order_by("pk").values_list(*(field.attname for field in fields))):
            columns = list(zip(*chunk, strict=True))
            arrays = [
                pa.array(
                    [None if value is None else json.dumps(value, ensure_ascii=False) for value in column]
                    if index in json_fields
                    else [_arrow_value(value) for value in column],
                    type=schema.field(index).type,
                )
                for index, column in enumerate(columns)
            ]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
            written += len(chunk)
        if not written:
            writer.write_table(schema.empty_table())
    os.replace(partial, path)
    return written


def _chunks(rows: models.QuerySet) -> Iterator[list[tuple]]:
    chunk = []
    for row in rows.iterator(chunk_size=CHUNK):
        chunk.append(row)
        if len(chunk) == CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def storage_maintain(*, today: date | None = None) -> tuple[list[str], list[Archived]]:
    """The beat's work: the partitions ahead, then the retention."""
    return partitions_ensure(today=today), retention_run(today=today)
