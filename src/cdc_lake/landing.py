"""Land Kafka records into the raw Iceberg table of a format: from `kcat -C -J` dumps (here) or
straight from a broker (`cdc_lake.consume`), through one write path (`merge_batch`). The same SQL
runs in the embedded Spark session or over a Spark Thrift Server (`Executor`).

Landing is append-only and idempotent on (topic, partition, offset) within one incarnation of the
topic: a record already in the table is never written again, so an at-least-once re-delivery of a
whole topic changes nothing; of one offset sent twice in one batch, the first wins. A record at a
landed offset whose key or value differs is not landed either, but counted and reported
(`LandingReport.conflicts`): a topic deleted and created again restarts its offsets, and lands with
the next `kafka_topic_incarnation`. Lines that are not a Kafka record (not JSON, no offset, ...) are
reported with their line numbers and not landed. `unland` deletes records landed by mistake.

The landing cursor: every landing commit gets a `landing_seq` larger than that of every commit
before it, taken under the lake's landing lock (`landing_sequence`) and held until the commit is
done. A build reads `landing_seq` above the highest one it has seen, so a landing that commits
while a build runs is read by the next build, however many landers run at once.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cdc_lake.env import lake_dir
from cdc_lake.formats import FORMATS
from cdc_lake.kcat import BadLine, read_records, spark_records, unparsed_line
from cdc_lake.sqltext import qualified_name, quote_identifier, sql_string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "Batch", "Executor", "LandingReport", "Selection", "SparkExecutor", "land", "landing_sequence",
    "merge_batch_sql", "raw_table", "sql_string", "unland",
]

# The raw table of every format (the dbt macro create_raw_tables creates the same table;
# test_project_rules checks that the two agree).
# `landing_seq` numbers landing commits in commit order: the staging models read only records
# with a landing_seq above the one they last processed. `kafka_topic_incarnation` tells a topic
# deleted and created again (offsets restart at 0) from its earlier life: null means 0, the
# first, so tables landed before the column existed keep their identity.
RAW_COLUMNS = """
    kafka_topic string not null,
    kafka_partition int not null,
    kafka_offset bigint not null,
    kafka_timestamp timestamp,
    kafka_key string,
    kafka_value string,
    landed_at timestamp not null,
    landing_seq bigint not null,
    kafka_headers array<struct<key: string, value: string>>,
    kafka_topic_incarnation int
"""

# Snappy, not Iceberg's default zstd: landing writes every record once and staging reads it once;
# at 1M records, side by side in one session, snappy cut consume's MERGE from 9.1-10.3 s to
# 7.4-9.2 s, for larger files of JSON text.
# `write.wap.enabled` lets `merge_batch` stage a commit (write-audit-publish) that it publishes only
# after a check (`consume`'s topic ids); a write without a staging id commits as usual.
# 4 MB row groups read as 4 MB splits (Iceberg's defaults: 128 MB each): a split is at least a row
# group, and a landing of 200k records writes one file of one row group, so a base model's full
# build read each format in 3-7 tasks whatever the cores (issue 69, docs/benchmarks.md).
RAW_TABLE_SETTINGS = {
    "format-version": "2",
    "write.parquet.compression-codec": "snappy",
    "write.wap.enabled": "true",
    "write.parquet.row-group-size-bytes": "4194304",
    "read.split.target-size": "4194304",
}


def properties_clause(settings: dict[str, str]) -> str:
    """The inside of a `tblproperties (...)` clause: `'name' = 'value', ...`."""
    return ", ".join(f"'{name}' = '{value}'" for name, value in settings.items())


RAW_TABLE_PROPERTIES = properties_clause(RAW_TABLE_SETTINGS)

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
class LandingReport:
    fmt: str
    lines_read: int = 0
    records_valid: int = 0
    records_landed: int = 0
    bad_lines: list[BadLine] = field(default_factory=list)
    seconds: float = 0.0
    # records whose (topic, partition, offset) was landed before with another key or value: not
    # landed (the first landing wins), reported, since only a recreated topic or a mixed-up dump
    # makes them
    conflicts: int = 0
    conflict_samples: list[Conflict] = field(default_factory=list)
    incarnation: int = 0

    @property
    def records_already_present(self) -> int:
        return self.records_valid - self.records_landed - self.conflicts

    def summary(self) -> str:
        conflicts = f"{self.conflicts} conflicting, " if self.conflicts else ""
        return (
            f"{self.fmt}: {self.lines_read} lines read, {self.records_valid} valid records, "
            f"{self.records_landed} landed, {self.records_already_present} already present, {conflicts}"
            f"{len(self.bad_lines)} bad lines ({self.seconds:.1f}s)"
        )


@dataclass
class Conflict:
    """A record whose Kafka coordinates were landed before with other content."""

    topic: str
    partition: int
    offset: int
    landed_at: Any
    # the highest incarnation of the topic landed so far: a recreated topic lands with one more
    topic_incarnation: int

    def describe(self) -> str:
        return (
            f"{self.topic} partition {self.partition} offset {self.offset}: landed at {self.landed_at} "
            "with another key or value"
        )


# Columns added after the first lakes were landed: a raw table without them gets them, null for
# the records already there.
_ADDED_COLUMNS = {
    "kafka_headers": "array<struct<key: string, value: string>>",
    "kafka_topic_incarnation": "int",
}


class Executor(ABC):
    """Where a landing's SQL runs: the embedded Spark session (`SparkExecutor`) or a Spark Thrift
    Server's DB-API cursor (`cdc_lake.thrift.ThriftExecutor`). Everything a landing does is SQL
    through `execute` and `query`, the same statements in the same order on both; only how a batch
    of records becomes a relation that SQL can read (`stage_records`, `stage`) is the executor's own.
    Two methods, not one: a Thrift Server answers a command with a result set of no rows that
    PyHive cannot fetch, so only a query's rows are fetched."""

    @abstractmethod
    def execute(self, statement: str) -> None:
        """Run one command."""

    @abstractmethod
    def query(self, statement: str) -> list[tuple[Any, ...]]:
        """Run one query; its rows."""

    @abstractmethod
    def stage_records(self, records: Iterable[dict[str, Any]]) -> AbstractContextManager[str]:
        """Records as `kcat.read_records` yields them, as a relation with the batch columns of
        `merge_batch_sql` and `batch_order` in their order, for the block."""

    @contextmanager
    def stage(self, files: Files, report: LandingReport) -> Iterator[Batch | None]:
        """The valid records of `files` (bad lines go to `report`), None when there is none."""
        records = read_records(files.paths, report, files.raw_values, files.topic, files.partition, files.progress)
        with self.stage_records(records) as relation:
            yield Batch(relation) if report.records_valid else None


@dataclass
class Files:
    """What `land` reads: kcat dumps, or with `raw_values` bare values (see `kcat.read_records`)."""

    paths: list[str]
    raw_values: bool = False
    topic: str | None = None
    partition: int = 0
    progress: IO[str] | None = None


@dataclass
class Batch:
    """Staged records: `relation` for `merge_batch`; `bounds`, their lowest and highest offset when
    known; `fallback`, the same records read another way, for when reading `relation` fails on a
    line it cannot parse whole (`kcat.SparkRecords`)."""

    relation: str
    bounds: tuple[int, int] | None = None
    unique_coordinates: bool = False
    fallback: str | None = None


class SparkExecutor(Executor):
    """A landing in this process's Spark session. kcat dumps are read by Spark
    (`kcat.spark_records`) unless `read_with_spark` is off; records parsed in Python go through a
    file Spark reads. A batch is a global temp view: a session's local temp views show in every
    schema's table list, which a dbt build running at the same time reads."""

    def __init__(self, spark: SparkSession, read_with_spark: bool = True) -> None:
        self.spark = spark
        self.read_with_spark = read_with_spark

    def execute(self, statement: str) -> None:
        self.spark.sql(statement)  # a command runs when its DataFrame is made

    def query(self, statement: str) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in self.spark.sql(statement).collect()]

    @contextmanager
    def view(self, frame: DataFrame) -> Iterator[str]:
        name = f"cdc_lake_landing_{uuid.uuid4().hex}"  # landers may run side by side
        frame.createOrReplaceGlobalTempView(name)
        try:
            yield f"global_temp.{name}"
        finally:
            self.spark.catalog.dropGlobalTempView(name)

    @contextmanager
    def stage_records(self, records: Iterable[dict[str, Any]]) -> Iterator[str]:
        from pyspark.sql import functions as F

        with tempfile.TemporaryDirectory(prefix="cdc_lake_land_") as tmp:
            batch_file = Path(tmp) / "batch.jsonl"
            with batch_file.open("w", encoding="utf-8", errors="surrogateescape") as out:
                for record in records:
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            batch = (
                self.spark.read.schema(_BATCH_SCHEMA)
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
            with self.view(batch) as relation:
                yield relation

    @contextmanager
    def stage(self, files: Files, report: LandingReport) -> Iterator[Batch | None]:
        if files.raw_values or not self.read_with_spark:
            with super().stage(files, report) as batch:
                yield batch
            return
        with spark_records(self.spark, files.paths, report) as records, ExitStack() as views:
            if records is None:
                yield None
                return
            relation = views.enter_context(self.view(records.frame))
            fallback = views.enter_context(self.view(records.fallback)) if records.fallback is not None else None
            yield Batch(relation, (records.lo, records.hi), records.unique_coordinates, fallback)


def as_executor(target: SparkSession | Executor) -> Executor:
    """An executor as it is; a Spark session as its `SparkExecutor`."""
    return target if isinstance(target, Executor) else SparkExecutor(target)


def table_exists(executor: Executor, table: str) -> bool:
    """Whether `table` (a qualified name) can be read, through any executor (local or Thrift)."""
    try:
        executor.query(f"select 1 from {table} limit 0")
    except Exception:  # noqa: BLE001 - a table that is not there
        return False
    return True


def ensure_raw_table(target: SparkSession | Executor, fmt: str) -> None:
    """Create the raw table of `fmt` if missing; bring one landed by an older version up to date
    (the columns added since, and the settings of RAW_TABLE_SETTINGS it lacks: `write.wap.enabled`
    for staged landings, the row group and split sizes)."""
    executor, table = as_executor(target), raw_table(fmt)
    executor.execute(f"create database if not exists {quote_identifier(raw_schema())}")
    executor.execute(
        f"create table if not exists {table} ({RAW_COLUMNS}) using iceberg tblproperties ({RAW_TABLE_PROPERTIES})"
    )
    present = {str(row[0]) for row in executor.query(f"describe {table}")}
    for name, kind in _ADDED_COLUMNS.items():
        if name not in present:
            executor.execute(f"alter table {table} add column {name} {kind}")
    present_settings = {str(row[0]): str(row[1]) for row in executor.query(f"show tblproperties {table}")}
    # the settings the table lacks (a value already set, even another, may be a user's tuning: kept),
    # and `write.wap.enabled` whatever it was set to: a staged landing needs it
    missing = {
        name: value for name, value in RAW_TABLE_SETTINGS.items()
        if name != "format-version" and name not in present_settings
    }
    if present_settings.get("write.wap.enabled") != "true":
        missing["write.wap.enabled"] = "true"
    if missing:
        executor.execute(f"alter table {table} set tblproperties ({properties_clause(missing)})")


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


def _first_occurrences(batch: str, unique_coordinates: bool = False) -> str:
    """Of one (topic, partition, offset) in a batch, the row with the lowest batch_order. A batch
    whose source cannot repeat coordinates (a micro-batch of Spark's Kafka source reads each offset
    of a partition once) is its own answer: the window would sort the whole batch for nothing."""
    if unique_coordinates:
        return batch
    return f"""(
            select *
            from (
                select
                    *,
                    row_number() over (
                        partition by kafka_topic, kafka_partition, kafka_offset order by batch_order
                    ) as occurrence
                from {batch}
            )
            where occurrence = 1
        )"""


def _same_record(lo: int, hi: int, incarnation: int) -> str:
    """The landing identity: (topic, partition, offset) within one incarnation of the topic."""
    return f"""t.kafka_topic = s.kafka_topic
            and t.kafka_partition = s.kafka_partition
            and t.kafka_offset = s.kafka_offset
            and t.kafka_offset between {int(lo)} and {int(hi)}
            and coalesce(t.kafka_topic_incarnation, 0) = {int(incarnation)}"""


def merge_batch_sql(
    table: str, batch: str, landing_seq: int, lo: int, hi: int, incarnation: int = 0, unique_coordinates: bool = False
) -> str:
    """The one statement that lands a batch: the MERGE every landing path runs.

    `batch` is a relation with kafka_topic, kafka_partition, kafka_offset, kafka_timestamp,
    kafka_key, kafka_value, kafka_headers and batch_order; of one (topic, partition, offset) the
    row with the lowest batch_order wins (`unique_coordinates`: the batch holds each once), and a
    record already in `table` (same coordinates, same topic incarnation) is not written again.
    `lo`/`hi` bound the batch's offsets so Iceberg skips data files that cannot hold them. One MERGE
    is one Iceberg commit: a build sees all of a batch or none of it.
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
                kafka_headers,
                cast({int(incarnation)} as int) as kafka_topic_incarnation
            from {_first_occurrences(batch, unique_coordinates)}
        ) as s
        on {_same_record(lo, hi, incarnation)}
        when not matched then insert *
    """


CONFLICT_SAMPLES = 20


def conflicts_sql(
    table: str, batch: str, lo: int, hi: int, incarnation: int = 0, unique_coordinates: bool = False
) -> str:
    """Records of `batch` whose coordinates `table` already holds with another key or value (the
    MERGE skips them), the first CONFLICT_SAMPLES of them with their total count, and the highest
    incarnation of each topic landed so far."""
    return f"""
        with conflicts as (
            select s.kafka_topic, s.kafka_partition, s.kafka_offset, t.landed_at
            from {_first_occurrences(batch, unique_coordinates)} as s
            inner join {table} as t
                on {_same_record(lo, hi, incarnation)}
            where not (s.kafka_value <=> t.kafka_value and s.kafka_key <=> t.kafka_key)
        ),

        incarnations as (
            select kafka_topic, max(coalesce(kafka_topic_incarnation, 0)) as topic_incarnation
            from {table}
            where kafka_topic in (select kafka_topic from conflicts)
            group by kafka_topic
        )

        select
            conflicts.kafka_topic,
            conflicts.kafka_partition,
            conflicts.kafka_offset,
            cast(conflicts.landed_at as string) as landed_at,
            incarnations.topic_incarnation,
            count(*) over () as conflicts
        from conflicts
        inner join incarnations on conflicts.kafka_topic = incarnations.kafka_topic
        order by conflicts.kafka_topic, conflicts.kafka_partition, conflicts.kafka_offset
        limit {CONFLICT_SAMPLES}
    """


def _read_conflicts(rows: Iterable[Sequence[Any]], report: LandingReport) -> None:
    for topic, partition, offset, landed_at, topic_incarnation, total in rows:
        report.conflicts = int(total)
        report.conflict_samples.append(Conflict(topic, int(partition), int(offset), landed_at, int(topic_incarnation)))


def merge_batch(
    target: SparkSession | Executor,
    fmt: str,
    batch_view: str,
    report: LandingReport | None = None,
    unique_coordinates: bool = False,
    incarnation: int = 0,
    bounds: tuple[int, int] | None = None,
    before_publish: Callable[[], object] | None = None,
) -> int:
    """Land the relation `batch_view` into the raw table of `fmt` under the landing lock; returns
    how many records were new. With a `report`, records that conflict with landed ones are
    counted in it first, and the batch lands as `report.incarnation` of its topics (else as
    `incarnation`). `unique_coordinates`: the view holds each (topic, partition, offset) at most once.
    `bounds`: the view's lowest and highest offset, when the caller knows them.
    `before_publish`: a check run after the batch was read and written, before any reader can see
    it (`_staged_merge`); raising there lands nothing."""
    executor, table = as_executor(target), raw_table(fmt)
    incarnation = report.incarnation if report is not None else incarnation
    if bounds is None:
        lo, hi = executor.query(f"select min(kafka_offset), max(kafka_offset) from {batch_view}")[0]
        if lo is None:
            return 0
        bounds = (int(lo), int(hi))
    lo, hi = bounds
    if report is not None:
        conflicts = executor.query(conflicts_sql(table, batch_view, lo, hi, incarnation, unique_coordinates))
        _read_conflicts(conflicts, report)
    with landing_sequence() as landing_seq:
        statement = merge_batch_sql(table, batch_view, landing_seq, lo, hi, incarnation, unique_coordinates)
        if before_publish is not None:
            return _staged_merge(executor, table, statement, landing_seq, before_publish)
        executor.execute(statement)
    return _rows_of_landing(executor, table, landing_seq)


def _rows_of_landing(executor: Executor, table: str, landing_seq: int) -> int:
    """Rows of `table` one landing committed: the landing sequence is the commit's own."""
    return int(executor.query(f"select count(*) from {table} where landing_seq = {landing_seq}")[0][0])


def _staged_merge(
    executor: Executor, table: str, statement: str, landing_seq: int, before_publish: Callable[[], object]
) -> int:
    """Run a landing's MERGE as a staged Iceberg snapshot (write-audit-publish: the session's
    `spark.wap.id`, read by Iceberg on tables with `write.wap.enabled`), call `before_publish`,
    then publish the snapshot (`cherrypick_snapshot`, which applies an append on top of commits
    made since, such as a compaction); returns the records it added. A staged snapshot is no
    reader's: if `before_publish` raises, or the process dies first, nothing was landed (the
    snapshot goes with the table's expired ones). The caller holds the landing lock, so no other
    landing of this session sets the staging id meanwhile. The id is set with SQL (`set`), not
    the session's conf API, so that a Thrift Server's session is set the same way."""
    wap_id = f"cdc_lake_{landing_seq}_{uuid.uuid4().hex}"
    executor.execute(f"set spark.wap.id = {wap_id}")
    try:
        executor.execute(statement)
    finally:
        executor.execute("reset spark.wap.id")
    staged = executor.query(
        f"select snapshot_id, summary['added-records'] from {table}.snapshots "
        f"where summary['wap.id'] = {sql_string(wap_id)}"
    )
    if not staged and _rows_of_landing(executor, table, landing_seq):  # else Spark skipped the write
        raise RuntimeError(f"{table}: a landing was committed unchecked (is write.wap.enabled set?)")
    # the check runs whatever the batch added: a batch that added nothing (its records' offsets
    # were landed) may have been read from a topic recreated meanwhile, whose records must not be
    # passed over as landed
    before_publish()
    snapshot_id, added = staged[0] if staged else (None, 0)
    if int(added or 0):
        executor.execute(
            f"call spark_catalog.system.cherrypick_snapshot({sql_string(table.replace('`', ''))}, {int(snapshot_id)})"
        )
    return int(added or 0)


def land(
    target: SparkSession | Executor,
    fmt: str,
    paths: list[str],
    raw_values: bool = False,
    topic: str | None = None,
    partition: int = 0,
    progress: IO[str] | None = None,
    incarnation: int = 0,
) -> LandingReport:
    """Append the records of `paths` to the raw table of `fmt`, skipping those already landed;
    `incarnation` > 0 lands a topic deleted and created again (see `kafka_topic_incarnation`).
    `target`: the embedded Spark session, or an executor (`cdc_lake.thrift.ThriftExecutor`)."""
    executor = as_executor(target)
    report = LandingReport(fmt, incarnation=incarnation)
    started = time.monotonic()
    ensure_raw_table(executor, fmt)
    with executor.stage(Files(paths, raw_values, topic, partition, progress), report) as batch:
        if batch is not None:
            report.records_landed = _land_batch(executor, fmt, batch, report)
    report.seconds = time.monotonic() - started
    return report


def _land_batch(executor: Executor, fmt: str, batch: Batch, report: LandingReport) -> int:
    """`merge_batch` of a staged batch; when reading it fails on a line it cannot parse whole,
    nothing was committed, and the batch's `fallback` is landed instead."""
    try:
        return merge_batch(executor, fmt, batch.relation, report, batch.unique_coordinates, bounds=batch.bounds)
    except Exception as exc:
        if batch.fallback is None or not unparsed_line(exc):
            raise
    report.conflicts, report.conflict_samples = 0, []
    return merge_batch(executor, fmt, batch.fallback, report, batch.unique_coordinates, bounds=batch.bounds)


@dataclass
class Selection:
    """Landed records to remove (`cdc-lake unland`): one topic, optionally one partition, an
    inclusive offset range and one incarnation of the topic."""

    fmt: str
    topic: str
    partition: int | None = None
    from_offset: int | None = None
    to_offset: int | None = None
    incarnation: int | None = None

    def where(self) -> str:
        parts = [f"kafka_topic = {sql_string(self.topic)}"]
        if self.partition is not None:
            parts.append(f"kafka_partition = {int(self.partition)}")
        if self.from_offset is not None:
            parts.append(f"kafka_offset >= {int(self.from_offset)}")
        if self.to_offset is not None:
            parts.append(f"kafka_offset <= {int(self.to_offset)}")
        if self.incarnation is not None:
            parts.append(f"coalesce(kafka_topic_incarnation, 0) = {int(self.incarnation)}")
        return " and ".join(parts)

    def count_sql(self) -> str:
        return f"select count(*) from {raw_table(self.fmt)} where {self.where()}"

    def delete_sql(self) -> str:
        return f"delete from {raw_table(self.fmt)} where {self.where()}"


def unland(target: SparkSession | Executor, selection: Selection) -> int:
    """Delete the selected records from the raw table (one Iceberg commit); returns how many. The
    models built from them keep them until they are rebuilt (`cdc-lake unland` says how)."""
    executor = as_executor(target)
    ensure_raw_table(executor, selection.fmt)
    removed = int(executor.query(selection.count_sql())[0][0])
    if removed:
        executor.execute(selection.delete_sql())
    return removed
