"""Land Kafka records into the raw Iceberg table of a format: from `kcat -C -J` dumps (here) or
straight from a broker (`cdc_lake.consume`), through one write path (`merge_batch`).

Landing is append-only and idempotent on (topic, partition, offset): a record already in the table is
never written again, so an at-least-once re-delivery of a whole topic changes nothing; of one
offset sent twice in one batch, the first wins. Lines that are not a Kafka record (not JSON, no
offset, ...) are reported with their line numbers and not landed.

The landing cursor: every landing commit gets a `landing_seq` larger than that of every commit
before it, taken under the lake's landing lock (`landing_sequence`) and held until the commit is
done. A build reads `landing_seq` above the highest one it has seen, so a landing that commits
while a build runs is read by the next build, however many landers run at once.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cdc_lake.env import lake_dir
from cdc_lake.sqltext import qualified_name, quote_identifier, sql_string

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "FORMATS", "LandingReport", "land", "land_over_thrift", "landing_sequence", "merge_batch_sql", "raw_table",
    "sql_string",
]

FORMATS = ("kafka_river_canal", "debezium", "canal_flat", "tencent_dts", "lindorm")
PROGRESS_EVERY = 100_000

# The raw table of every format (the dbt macro create_raw_tables reads the same columns from
# macros/landing/raw_columns.sql). `landing_seq` numbers landing commits in commit order: the
# staging models read only records with a landing_seq above the one they last processed.
RAW_COLUMNS = """
    kafka_topic string not null,
    kafka_partition int not null,
    kafka_offset bigint not null,
    kafka_timestamp timestamp,
    kafka_key string,
    kafka_value string,
    landed_at timestamp not null,
    landing_seq bigint not null,
    kafka_headers array<struct<key: string, value: string>>
"""
_BATCH_SCHEMA = (
    "kafka_topic string, kafka_partition int, kafka_offset bigint, kafka_timestamp_ms bigint, "
    "kafka_key string, kafka_value string, kafka_headers array<struct<key: string, value: string>>"
)


def raw_schema() -> str:
    return os.environ.get("CDC_LAKE_RAW_SCHEMA", "cdc_raw")


def raw_table(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return qualified_name(raw_schema(), f"raw_{fmt}")


@dataclass
class BadLine:
    source: str
    line_no: int
    reason: str


@dataclass
class LandingReport:
    fmt: str
    lines_read: int = 0
    records_valid: int = 0
    records_landed: int = 0
    bad_lines: list[BadLine] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def records_already_present(self) -> int:
        return self.records_valid - self.records_landed

    def summary(self) -> str:
        return (
            f"{self.fmt}: {self.lines_read} lines read, {self.records_valid} valid records, "
            f"{self.records_landed} landed, {self.records_already_present} already present, "
            f"{len(self.bad_lines)} bad lines ({self.seconds:.1f}s)"
        )


# Kafka values are bytes; a kcat line is read with errors="surrogateescape", so bytes that are not
# UTF-8 arrive as lone surrogates U+DC80..U+DCFF, and a JSON escape such as \ud800 as a lone
# surrogate too. Neither can be stored as UTF-8 text (Spark's reader rejects the whole batch): each
# becomes U+FFFD, one per byte or escape, as `sql_string` does on the thrift path.
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def _as_text(value: Any) -> str | None:
    """kcat prints key and payload as JSON strings; anything else is kept as its JSON text."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATES.sub("\ufffd", value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_kcat_line(line: str) -> dict[str, Any]:
    """One `kcat -J` line to a raw record; raises ValueError with the reason if it is not one."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    if not isinstance(obj.get("topic"), str) or not obj["topic"]:
        # the usual cause: a dump of bare values (kcat without -J), or a file of messages
        raise ValueError(
            "missing topic: not a kcat -J line (dump with `kcat -C -J`, or land plain message values with --raw-values)"
        )
    if not _is_int(obj.get("partition")) or obj["partition"] < 0:
        raise ValueError("missing or invalid partition")
    if not _is_int(obj.get("offset")) or obj["offset"] < 0:
        raise ValueError("missing or invalid offset")
    ts = obj.get("ts")
    headers = obj.get("headers")
    # kcat -J prints headers as a flat list: key, value, key, value, ...
    if isinstance(headers, list) and len(headers) % 2 == 0:
        header_pairs = [
            {"key": _as_text(k), "value": _as_text(v)} for k, v in zip(headers[::2], headers[1::2], strict=True)
        ]
    else:
        header_pairs = None
    return {
        "kafka_topic": _as_text(obj["topic"]),
        "kafka_partition": obj["partition"],
        "kafka_offset": obj["offset"],
        "kafka_timestamp_ms": ts if _is_int(ts) else None,
        "kafka_key": _as_text(obj.get("key")),
        "kafka_value": _as_text(obj.get("payload")),
        "kafka_headers": header_pairs,
    }


def _open_lines(path: str) -> Iterator[str]:
    if path == "-":
        yield from sys.stdin
        return
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        yield from handle


def read_records(
    paths: Iterable[str],
    report: LandingReport,
    raw_values: bool = False,
    topic: str | None = None,
    partition: int = 0,
    progress: IO[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield valid raw records from the files; bad lines go to `report.bad_lines`.

    With `raw_values`, every non-empty line is a bare Kafka value (as in test corpora): it is
    wrapped as a record of `topic` (default: the file name without extension), `partition`, and
    offset = line number - 1, so landing the same file twice stays idempotent.
    """
    started = time.monotonic()
    for path in paths:
        source = "<stdin>" if path == "-" else path
        wrap_topic = topic or ("stdin" if path == "-" else Path(path).stem)
        for line_no, line in enumerate(_open_lines(path), start=1):
            report.lines_read += 1
            if progress is not None and report.lines_read % PROGRESS_EVERY == 0:
                rate = report.lines_read / max(time.monotonic() - started, 1e-9)
                print(f"  ... {report.lines_read:,} lines ({rate:,.0f}/s)", file=progress, flush=True)
            text = line.rstrip("\r\n")
            if not text.strip():
                continue
            if raw_values:
                record = {
                    "kafka_topic": wrap_topic,
                    "kafka_partition": partition,
                    "kafka_offset": line_no - 1,
                    "kafka_timestamp_ms": None,
                    "kafka_key": None,
                    "kafka_value": _as_text(text),
                    "kafka_headers": None,
                }
            else:
                try:
                    record = parse_kcat_line(text)
                except ValueError as exc:
                    report.bad_lines.append(BadLine(source, line_no, str(exc)))
                    continue
            report.records_valid += 1
            yield record


def raw_table_ddl(fmt: str) -> list[str]:
    """Statements that create the raw table of `fmt` if missing and add columns it lacks (a lake
    landed before `kafka_headers` existed gets the column, null for the records already there)."""
    return [
        f"create database if not exists {quote_identifier(raw_schema())}",
        f"create table if not exists {raw_table(fmt)} ({RAW_COLUMNS}) using iceberg "
        "tblproperties ('format-version' = '2')",
    ]


def _add_missing_columns(spark: SparkSession, fmt: str) -> None:
    present = {f.name for f in spark.table(raw_table(fmt)).schema.fields}
    if "kafka_headers" not in present:
        spark.sql(
            f"alter table {raw_table(fmt)} add column kafka_headers array<struct<key: string, value: string>>"
        )


def ensure_raw_table(spark: SparkSession, fmt: str) -> None:
    for statement in raw_table_ddl(fmt):
        spark.sql(statement)
    _add_missing_columns(spark, fmt)


@contextmanager
def landing_sequence() -> Iterator[int]:
    """Hold the lake's landing lock and give a `landing_seq` larger than every one given before.

    The caller commits its records inside the `with` block: a landing whose commit is still under
    way holds the lock, so no later sequence number can be committed before it. The lock is a
    `flock` on `$CDC_LAKE_DIR/landing.lock` (one per open file, so threads of one process wait
    for each other too); the file remembers the last number given. It serialises the landers of
    one machine: landers on several machines need a lake each, or one consumer job (`consume`).
    """
    path = lake_dir() / "landing.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="ascii") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            handle.seek(0)
            text = handle.read().strip()
            last = int(text) if text.isdigit() else 0
            sequence = max(time.time_ns() // 1000, last + 1)
            handle.seek(0)
            handle.truncate()
            handle.write(str(sequence))
            handle.flush()
            yield sequence
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def merge_batch_sql(table: str, batch: str, landing_seq: int, lo: int, hi: int) -> str:
    """The one statement that lands a batch: the MERGE every landing path runs.

    `batch` is a relation with kafka_topic, kafka_partition, kafka_offset, kafka_timestamp,
    kafka_key, kafka_value, kafka_headers and batch_order; of one (topic, partition, offset) the
    row with the lowest batch_order wins, and a record already in `table` is not written again.
    `lo`/`hi` bound the batch's offsets so Iceberg skips data files that cannot hold them. One
    MERGE is one Iceberg commit: a build sees all of a batch or none of it.
    """
    return f"""
        merge into {table} as t
        using (
            select
                kafka_topic,
                kafka_partition,
                kafka_offset,
                kafka_timestamp,
                kafka_key,
                kafka_value,
                current_timestamp() as landed_at,
                cast({int(landing_seq)} as bigint) as landing_seq,
                kafka_headers
            from (
                select
                    *,
                    row_number() over (
                        partition by kafka_topic, kafka_partition, kafka_offset order by batch_order
                    ) as occurrence
                from {batch}
            )
            where occurrence = 1
        ) as s
        on t.kafka_topic = s.kafka_topic
            and t.kafka_partition = s.kafka_partition
            and t.kafka_offset = s.kafka_offset
            and t.kafka_offset between {int(lo)} and {int(hi)}
        when not matched then insert *
    """


def merge_batch(spark: SparkSession, fmt: str, batch_view: str) -> int:
    """Land the temp view `batch_view` into the raw table of `fmt` under the landing lock; returns
    how many records were new."""
    table = raw_table(fmt)
    bounds = spark.sql(f"select min(kafka_offset) as lo, max(kafka_offset) as hi from {batch_view}").first()
    if bounds is None or bounds.lo is None:
        return 0
    with landing_sequence() as landing_seq:
        spark.sql(merge_batch_sql(table, batch_view, landing_seq, bounds.lo, bounds.hi))
    # rows of this commit: the landing sequence is the commit's own
    row = spark.sql(f"select count(*) as n from {table} where landing_seq = {landing_seq}").first()
    return int(row.n) if row is not None else 0


def land(
    spark: SparkSession,
    fmt: str,
    paths: list[str],
    raw_values: bool = False,
    topic: str | None = None,
    partition: int = 0,
    progress: IO[str] | None = None,
) -> LandingReport:
    """Append the records of `paths` to the raw table of `fmt`, skipping those already landed."""
    from pyspark.sql import functions as F

    report = LandingReport(fmt)
    started = time.monotonic()
    ensure_raw_table(spark, fmt)
    with tempfile.TemporaryDirectory(prefix="cdc_lake_land_") as tmp:
        batch_file = Path(tmp) / "batch.jsonl"
        with batch_file.open("w", encoding="utf-8", errors="surrogateescape") as out:
            for record in read_records(paths, report, raw_values, topic, partition, progress):
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        if report.records_valid:
            batch = (
                spark.read.schema(_BATCH_SCHEMA)
                .option("mode", "FAILFAST")
                .json(str(batch_file))
                .select(
                    "kafka_topic",
                    "kafka_partition",
                    "kafka_offset",
                    F.timestamp_millis("kafka_timestamp_ms").alias("kafka_timestamp"),
                    "kafka_key",
                    "kafka_value",
                    "kafka_headers",
                    # file order: one file read in order keeps its lines' order in these ids
                    F.monotonically_increasing_id().alias("batch_order"),
                )
            )
            name = f"cdc_lake_landing_{fmt}_{uuid.uuid4().hex}"  # landers may run side by side
            # a global temp view: a session's local temp views show in every schema's table list,
            # which a dbt build running at the same time reads
            batch.createOrReplaceGlobalTempView(name)
            try:
                report.records_landed = merge_batch(spark, fmt, f"global_temp.{name}")
            finally:
                spark.catalog.dropGlobalTempView(name)
    report.seconds = time.monotonic() - started
    return report


# ---------------------------------------------------------------------------------------------
# Landing through a Spark Thrift Server (dbt's `thrift` target)
#
# On a cluster the metastore belongs to the Thrift Server (embedded Derby admits one process, and a
# real metastore should not be opened by every client), so landing goes over the same connection
# dbt uses: the records are sent as `insert into <staging table> values (...)` batches, then one
# MERGE moves the new ones into the raw table. One MERGE is one Iceberg commit, so a `dbt build`
# running at the same time sees all of a landing run or none of it.

_STAGING_COLUMNS = (
    "line_no bigint, kafka_topic string, kafka_partition int, kafka_offset bigint, "
    "kafka_timestamp_ms bigint, kafka_key string, kafka_value string, "
    "kafka_headers array<struct<key: string, value: string>>"
)
THRIFT_BATCH_ROWS = 2000
THRIFT_BATCH_BYTES = 4 * 1024 * 1024

def _sql_int(value: int | None) -> str:
    return "null" if value is None else str(int(value))


def _sql_headers(headers: list[dict[str, str | None]] | None) -> str:
    if headers is None:
        return "cast(null as array<struct<key: string, value: string>>)"
    if not headers:
        return "cast(array() as array<struct<key: string, value: string>>)"
    pairs = ", ".join(f"named_struct('key', {sql_string(h['key'])}, 'value', {sql_string(h['value'])})"
                      for h in headers)
    return f"array({pairs})"


def land_over_thrift(
    cursor: Any,
    fmt: str,
    paths: list[str],
    raw_values: bool = False,
    topic: str | None = None,
    partition: int = 0,
    progress: IO[str] | None = None,
    batch_rows: int = THRIFT_BATCH_ROWS,
    batch_bytes: int = THRIFT_BATCH_BYTES,
) -> LandingReport:
    """`land` through a DB-API cursor on a Spark Thrift Server: same table, same semantics."""
    report = LandingReport(fmt)
    started = time.monotonic()
    table = raw_table(fmt)
    for statement in raw_table_ddl(fmt):
        cursor.execute(statement)
    cursor.execute(f"describe {table}")
    if "kafka_headers" not in {str(row[0]) for row in cursor.fetchall()}:
        cursor.execute(f"alter table {table} add column kafka_headers array<struct<key: string, value: string>>")
    staging = qualified_name(raw_schema(), f"landing_{fmt}_{time.time_ns() // 1000}")
    cursor.execute(f"create table {staging} ({_STAGING_COLUMNS}) using parquet")
    try:
        rows: list[str] = []
        size = 0

        def flush() -> None:
            nonlocal rows, size
            if rows:
                cursor.execute(f"insert into {staging} values\n" + ",\n".join(rows))
            rows, size = [], 0

        for line_no, record in enumerate(
            read_records(paths, report, raw_values, topic, partition, progress), start=1
        ):
            row = (
                f"({line_no}, {sql_string(record['kafka_topic'])}, {_sql_int(record['kafka_partition'])}, "
                f"{_sql_int(record['kafka_offset'])}, {_sql_int(record['kafka_timestamp_ms'])}, "
                f"{sql_string(record['kafka_key'])}, {sql_string(record['kafka_value'])}, "
                f"{_sql_headers(record['kafka_headers'])})"
            )
            rows.append(row)
            size += len(row)
            if len(rows) >= batch_rows or size >= batch_bytes:
                flush()
        flush()
        if report.records_valid:
            cursor.execute(f"select min(kafka_offset), max(kafka_offset) from {staging}")
            lo, hi = cursor.fetchall()[0]
            batch = f"""(
                select
                    kafka_topic, kafka_partition, kafka_offset, timestamp_millis(kafka_timestamp_ms) as kafka_timestamp,
                    kafka_key, kafka_value, kafka_headers, line_no as batch_order
                from {staging}
            )"""
            with landing_sequence() as landing_seq:
                cursor.execute(merge_batch_sql(table, batch, landing_seq, lo, hi))
            cursor.execute(f"select count(*) from {table} where landing_seq = {landing_seq}")
            report.records_landed = int(cursor.fetchall()[0][0])
    finally:
        cursor.execute(f"drop table if exists {staging}")
    report.seconds = time.monotonic() - started
    return report
