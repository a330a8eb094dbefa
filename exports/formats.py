"""The export's two formats, written as a stream of bytes: NDJSON (one JSON object a line) and Parquet
(row groups written as they fill, the footer last), both with the kind's documented columns."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from exports.columns import Column

NDJSON = "ndjson"
PARQUET = "parquet"
FORMATS = (NDJSON, PARQUET)
MEDIA_TYPES = {NDJSON: "application/x-ndjson", PARQUET: "application/vnd.apache.parquet"}
ROW_GROUP = 10_000


def _json_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def ndjson_stream(records: Iterable[dict[str, Any]], columns: list[Column]) -> Iterator[bytes]:
    names = [column.name for column in columns]
    lines: list[str] = []
    for record in records:
        lines.append(json.dumps({name: _json_value(record[name]) for name in names}, ensure_ascii=False))
        if len(lines) == 500:
            yield ("\n".join(lines) + "\n").encode()
            lines = []
    if lines:
        yield ("\n".join(lines) + "\n").encode()


def arrow_schema(columns: list[Column]):
    import pyarrow as pa

    types = {
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "text": pa.string(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    return pa.schema([pa.field(column.name, types[column.type]) for column in columns])


class _Chunks:
    """A write-only file for pyarrow's writer whose bytes are taken out as they come."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.closed = False
        self.position = 0

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data


def parquet_stream(records: Iterable[dict[str, Any]], columns: list[Column]) -> Iterator[bytes]:
    """A Parquet file, a row group at a time; an empty page is a valid file with the columns and no rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(columns)
    sink = _Chunks()
    writer = pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema, compression="zstd")
    batch: list[dict[str, Any]] = []

    def group() -> bytes:
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        return sink.take()

    for record in records:
        batch.append(record)
        if len(batch) == ROW_GROUP:
            yield group()
            batch = []
    if batch:
        yield group()
    writer.close()
    yield sink.take()


def stream(records: Iterable[dict[str, Any]], columns: list[Column], format: str) -> Iterator[bytes]:
    return parquet_stream(records, columns) if format == PARQUET else ndjson_stream(records, columns)
