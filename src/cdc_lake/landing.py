"""Land Kafka records (the JSON lines `kcat -C -J` prints) into the raw Iceberg table of a format.

Landing is append-only and idempotent on (topic, partition, offset): a record already in the table is
never written again, so an at-least-once re-delivery of a whole topic changes nothing. Lines that are
not a Kafka record (not JSON, no offset, ...) are reported with their line numbers and not landed.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cdc_lake.sqltext import qualified_name, quote_identifier, sql_string

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["FORMATS", "LandingReport", "land", "land_over_thrift", "raw_table", "sql_string"]

FORMATS = ("kafka_river_canal", "debezium", "canal_flat", "tencent_dts", "lindorm")
PROGRESS_EVERY = 100_000

# The raw table of every format. `landing_seq` numbers landing runs in increasing order: the
# staging models read only records with a landing_seq above the one they last processed.
RAW_COLUMNS = """
    kafka_topic string not null,
    kafka_partition int not null,
    kafka_offset bigint not null,
    kafka_timestamp timestamp,
    kafka_key string,
    kafka_value string,
    landed_at timestamp not null,
    landing_seq bigint not null
"""
_BATCH_SCHEMA = (
    "kafka_topic string, kafka_partition int, kafka_offset bigint, kafka_timestamp_ms bigint, "
    "kafka_key string, kafka_value string"
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
        raise ValueError("missing topic")
    if not _is_int(obj.get("partition")) or obj["partition"] < 0:
        raise ValueError("missing or invalid partition")
    if not _is_int(obj.get("offset")) or obj["offset"] < 0:
        raise ValueError("missing or invalid offset")
    ts = obj.get("ts")
    return {
        "kafka_topic": _as_text(obj["topic"]),
        "kafka_partition": obj["partition"],
        "kafka_offset": obj["offset"],
        "kafka_timestamp_ms": ts if _is_int(ts) else None,
        "kafka_key": _as_text(obj.get("key")),
        "kafka_value": _as_text(obj.get("payload")),
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
                }
            else:
                try:
                    record = parse_kcat_line(text)
                except ValueError as exc:
                    report.bad_lines.append(BadLine(source, line_no, str(exc)))
                    continue
            report.records_valid += 1
            yield record


def ensure_raw_table(spark: SparkSession, fmt: str) -> None:
    spark.sql(f"create database if not exists {quote_identifier(raw_schema())}")
    spark.sql(
        f"create table if not exists {raw_table(fmt)} ({RAW_COLUMNS}) using iceberg "
        "tblproperties ('format-version' = '2')"
    )


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
    table = raw_table(fmt)
    ensure_raw_table(spark, fmt)
    with tempfile.TemporaryDirectory(prefix="cdc_lake_land_") as tmp:
        batch_file = Path(tmp) / "batch.jsonl"
        with batch_file.open("w", encoding="utf-8", errors="surrogateescape") as out:
            for record in read_records(paths, report, raw_values, topic, partition, progress):
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
        if report.records_valid:
            # Later landing runs get larger numbers; staging reads above its watermark.
            landing_seq = time.time_ns() // 1000
            batch = (
                spark.read.schema(_BATCH_SCHEMA)
                .option("mode", "FAILFAST")
                .json(str(batch_file))
                .dropDuplicates(["kafka_topic", "kafka_partition", "kafka_offset"])
                .select(
                    "kafka_topic",
                    "kafka_partition",
                    "kafka_offset",
                    F.timestamp_millis("kafka_timestamp_ms").alias("kafka_timestamp"),
                    "kafka_key",
                    "kafka_value",
                    F.current_timestamp().alias("landed_at"),
                    F.lit(landing_seq).cast("bigint").alias("landing_seq"),
                )
            )
            batch.createOrReplaceTempView("cdc_lake_landing_batch")
            bounds = spark.sql(
                "select min(kafka_offset) as lo, max(kafka_offset) as hi from cdc_lake_landing_batch"
            ).first()
            before = spark.table(table).count()
            # The offset range in ON lets Iceberg skip data files that cannot hold these offsets.
            spark.sql(
                f"""
                merge into {table} as t
                using cdc_lake_landing_batch as s
                on t.kafka_topic = s.kafka_topic
                    and t.kafka_partition = s.kafka_partition
                    and t.kafka_offset = s.kafka_offset
                    and t.kafka_offset between {bounds.lo} and {bounds.hi}
                when not matched then insert *
                """
            )
            report.records_landed = spark.table(table).count() - before
            spark.catalog.dropTempView("cdc_lake_landing_batch")
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
    "kafka_timestamp_ms bigint, kafka_key string, kafka_value string"
)
THRIFT_BATCH_ROWS = 2000
THRIFT_BATCH_BYTES = 4 * 1024 * 1024

def _sql_int(value: int | None) -> str:
    return "null" if value is None else str(int(value))


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
    cursor.execute(f"create database if not exists {quote_identifier(raw_schema())}")
    cursor.execute(
        f"create table if not exists {table} ({RAW_COLUMNS}) using iceberg "
        "tblproperties ('format-version' = '2')"
    )
    # Later landing runs get larger numbers; staging reads above its watermark.
    landing_seq = time.time_ns() // 1000
    staging = qualified_name(raw_schema(), f"landing_{fmt}_{landing_seq}")
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
                f"{sql_string(record['kafka_key'])}, {sql_string(record['kafka_value'])})"
            )
            rows.append(row)
            size += len(row)
            if len(rows) >= batch_rows or size >= batch_bytes:
                flush()
        flush()
        if report.records_valid:
            cursor.execute(f"select min(kafka_offset), max(kafka_offset) from {staging}")
            lo, hi = cursor.fetchall()[0]
            cursor.execute(f"select count(*) from {table}")
            before = int(cursor.fetchall()[0][0])
            # First occurrence of a (topic, partition, offset) in the files wins, as in `land`.
            cursor.execute(
                f"""
                merge into {table} as t
                using (
                    select
                        kafka_topic,
                        kafka_partition,
                        kafka_offset,
                        timestamp_millis(kafka_timestamp_ms) as kafka_timestamp,
                        kafka_key,
                        kafka_value,
                        current_timestamp() as landed_at,
                        cast({landing_seq} as bigint) as landing_seq
                    from (
                        select
                            *,
                            row_number() over (
                                partition by kafka_topic, kafka_partition, kafka_offset order by line_no
                            ) as occurrence
                        from {staging}
                    )
                    where occurrence = 1
                ) as s
                on t.kafka_topic = s.kafka_topic
                    and t.kafka_partition = s.kafka_partition
                    and t.kafka_offset = s.kafka_offset
                    and t.kafka_offset between {lo} and {hi}
                when not matched then insert *
                """
            )
            cursor.execute(f"select count(*) from {table}")
            report.records_landed = int(cursor.fetchall()[0][0]) - before
    finally:
        cursor.execute(f"drop table if exists {staging}")
    report.seconds = time.monotonic() - started
    return report
