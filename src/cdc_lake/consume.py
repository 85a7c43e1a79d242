"""`cdc-lake consume`: land Kafka topics straight from a broker into the raw tables.

One Spark Structured Streaming query per format reads that format's topics with Spark's Kafka
source and lands every micro-batch through the same write path as `cdc-lake land`
(`landing.merge_batch`: idempotent on topic/partition/offset, under the landing lock). Exactly
once: the query's checkpoint (under `$CDC_LAKE_DIR/checkpoints/<format>`) remembers the offsets of
every batch before it runs, and a batch run again after a crash finds its records already landed.

Which topic is which format comes from a small YAML file (default `kafka_topics.yml` in the
project) or from `--topic`/`--pattern` + `--format`. By default the query lands what the broker
holds when it starts and stops (`availableNow`), for a scheduler; `--follow` keeps running.
The broker's latest offsets are written to `<raw schema>.kafka_end_offsets` at the end of a run and,
with `--follow`, at most every END_OFFSETS_SECONDS after new batches; `cdc_consumer_lag` compares
them with what was landed.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import yaml

from cdc_lake.env import PROJECT_DIR, lake_dir
from cdc_lake.formats import FORMATS
from cdc_lake.incarnations import (
    TopicIncarnations,
    TopicRecreated,
    checkpoint_dir,
    offset_log,
    resume_offsets,
    starting_offsets,
)
from cdc_lake.landing import ensure_raw_table, merge_batch, raw_schema
from cdc_lake.sqltext import qualified_name, quote_identifier, sql_string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

DEFAULT_CONFIG = PROJECT_DIR / "kafka_topics.yml"
# A record of Spark's Kafka source as the raw table keeps it: key, value and headers as text.
KAFKA_RECORD_COLUMNS = (
    "topic as kafka_topic",
    "partition as kafka_partition",
    "offset as kafka_offset",
    "timestamp as kafka_timestamp",
    "cast(key as string) as kafka_key",
    "cast(value as string) as kafka_value",
    "transform(headers, h -> named_struct('key', h.key, 'value', cast(h.value as string))) as kafka_headers",
)
# A micro-batch lands as one data file per this many records (a large catch-up batch keeps a few
# tasks for the MERGE; a following consumer's small batch becomes a single file).
RECORDS_PER_FILE = 200_000
# A batch of fewer records is read and written by one task (one file); a larger one keeps a task
# per core for its read, as far as it has Kafka partitions (one task read the 4 partitions of a
# 91k-record batch and wrote its file in 3.7 s, where a plain append in parallel took 1.7 s).
RECORDS_PER_TASK = 20_000
# How often a --follow run writes the broker's latest offsets (cdc_consumer_lag's input), at most.
END_OFFSETS_SECONDS = 30.0
# Beside a checkpoint: the incarnation of each topic when it was started (`_starting_offsets`).
INCARNATIONS_FILE = "cdc_lake_incarnations.json"
END_OFFSETS_COLUMNS = (
    "kafka_topic string not null, kafka_partition int not null, latest_offset bigint not null, "
    "observed_at timestamp not null"
)


class ConsumeError(Exception):
    """A consume run that cannot start (bad config, no topics) or whose query failed."""


@dataclass
class TopicRule:
    """Topics of one format: exact names and regular expressions (Java regex, whole name)."""

    fmt: str
    topics: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)

    def subscribe_pattern(self) -> str:
        """One pattern for Spark's `subscribePattern`: new topics that match are picked up. The
        Kafka consumer finds the pattern anywhere in a topic's name, so it is anchored: a pattern
        for the topics `a.*` must not read `_schema_history.a.x` (Debezium's history topic, met
        end to end)."""
        parts = [re.escape(t) for t in self.topics] + [f"(?:{p})" for p in self.patterns]
        return "^(?:" + "|".join(parts) + ")$"


def load_rules(path: Path) -> list[TopicRule]:
    """Read the topic → format file: `topics: [{topic: NAME | pattern: REGEX, format: FORMAT}]`."""
    if not path.exists():
        raise ConsumeError(f"topic file {path} not found; give --topic/--pattern with --format, or create it")
    document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = document.get("topics") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise ConsumeError(f"{path}: expected a list under `topics:`")
    rules: dict[str, TopicRule] = {}
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or entry.get("format") not in FORMATS:
            raise ConsumeError(f"{path}: entry {number} needs `format:` one of {', '.join(FORMATS)}")
        rule = rules.setdefault(entry["format"], TopicRule(entry["format"]))
        if isinstance(entry.get("topic"), str):
            rule.topics.append(entry["topic"])
        elif isinstance(entry.get("pattern"), str):
            try:
                re.compile(entry["pattern"])
            except re.error as exc:
                raise ConsumeError(f"{path}: entry {number}: bad pattern: {exc}") from None
            rule.patterns.append(entry["pattern"])
        else:
            raise ConsumeError(f"{path}: entry {number} needs `topic:` or `pattern:`")
    if not rules:
        raise ConsumeError(f"{path}: no topics listed")
    return list(rules.values())


@dataclass
class ConsumeSettings:
    bootstrap_servers: str
    rules: list[TopicRule]
    follow: bool = False
    trigger_seconds: float = 10.0
    starting_offsets: str = "earliest"
    max_offsets_per_trigger: int | None = None
    # passed through to the Kafka consumer, e.g. {"security.protocol": "SASL_SSL", "sasl.mechanism": ...}
    kafka_options: Mapping[str, str] = field(default_factory=dict)
    checkpoint_root: Path = field(default_factory=lambda: lake_dir() / "checkpoints")
    # set by another thread to end a --follow run (the CLI runs until interrupted)
    stop: threading.Event = field(default_factory=threading.Event)


def end_offsets_table() -> str:
    return qualified_name(raw_schema(), "kafka_end_offsets")


def _stream(spark: SparkSession, settings: ConsumeSettings, rule: TopicRule, starting: str) -> DataFrame:
    reader = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", settings.bootstrap_servers)
        .option("subscribePattern", rule.subscribe_pattern())
        .option("startingOffsets", starting)
        .option("includeHeaders", "true")
        # offsets deleted by retention before they were landed are skipped, not fatal: they show
        # as an offset gap in cdc_reconciliation
        .option("failOnDataLoss", "false")
    )
    if settings.max_offsets_per_trigger:
        reader = reader.option("maxOffsetsPerTrigger", str(settings.max_offsets_per_trigger))
    for key, value in settings.kafka_options.items():
        reader = reader.option(key if key.startswith("kafka.") else f"kafka.{key}", value)
    return reader.load().selectExpr(*KAFKA_RECORD_COLUMNS, "cast(0 as bigint) as batch_order")


@dataclass
class BatchRange:
    """What a micro-batch holds by its offsets, known before it is read: each topic's lowest and
    highest offset, and at most how many records it has (retention, compaction and transaction
    markers leave fewer)."""

    ranges: dict[str, tuple[int, int]]
    records_at_most: int


def planned_range(checkpoint: Path, batch_id: int) -> BatchRange | None:
    """The range of batch `batch_id` from the offset log: from where the batch before it ended
    (offset 0 where unknown: the first batch, or a partition new since) to its own end; topics
    without a new offset left out. None if the log cannot be read."""
    ends = offset_log(checkpoint, batch_id)
    if ends is None:
        return None
    starts = (offset_log(checkpoint, batch_id - 1) if batch_id > 0 else None) or {}
    ranges: dict[str, tuple[int, int]] = {}
    records = 0
    for topic, partitions in ends.items():
        spans = [(starts.get(topic, {}).get(p, 0), end) for p, end in partitions.items()]
        spans = [(start, end) for start, end in spans if end > start]
        if spans:
            ranges[topic] = (min(start for start, _ in spans), max(end for _, end in spans) - 1)
            records += sum(end - start for start, end in spans)
    return BatchRange(ranges, records)


def _read_range(batch: DataFrame) -> BatchRange:
    """The range of a batch by reading it (when its offset log could not be read)."""
    from pyspark.sql import functions as F

    stats = batch.groupBy("kafka_topic").agg(F.min("kafka_offset"), F.max("kafka_offset"), F.count(F.lit(1))).collect()
    return BatchRange({row[0]: (int(row[1]), int(row[2])) for row in stats}, sum(int(row[3]) for row in stats))


def _files_for(records: int, cores: int) -> int:
    """How many files (and write tasks) a batch of at most `records` records lands as."""
    return max(-(-records // RECORDS_PER_FILE), min(cores, -(-records // RECORDS_PER_TASK)), 1)


def _land_batch(
    spark: SparkSession,
    fmt: str,
    checkpoint: Path,
    landed: dict[str, int],
    incarnations: TopicIncarnations,
    lock: threading.Lock,
    recreated_formats: set[str],
) -> Callable[[DataFrame, int], None]:
    """The foreachBatch callback of a format's query. The MERGE runs in `spark`, the session that
    started the query, not in the query's own clone: a session caches the Iceberg tables it has
    read, so a write through another session would stay unseen by the caller's next read.

    The batch's topics and offsets come from the query's offset log, so the batch is read once,
    by the MERGE. Its topics' ids are checked (`TopicIncarnations`) before, which gives each
    topic its incarnation, and again after the MERGE read and wrote the batch but before its
    commit is published (a staged commit, `landing.merge_batch`'s `before_publish`): a topic
    deleted and created again while the batch was read stops it with nothing landed
    (`TopicRecreated`)."""

    def check_topics(topics: list[str]) -> dict[str, int]:
        with lock:
            recreated = incarnations.observe(fmt, topics)
            lives = {topic: incarnations.incarnation(topic) for topic in topics}
        if recreated:
            recreated_formats.add(fmt)  # the query fails with this; `consume` starts it again
            raise TopicRecreated(recreated)
        return lives

    def land(batch: DataFrame, batch_id: int) -> None:
        planned = planned_range(checkpoint, batch_id) or _read_range(batch)
        if not planned.ranges:
            return
        topics = sorted(planned.ranges)
        lives = check_topics(topics)
        name = f"cdc_lake_consume_{fmt}"
        views: list[str] = []
        try:
            # Spark reads each topic-partition in a task of its own, and each task would write a
            # file: a following consumer's batches of a few hundred records left the raw tables
            # hundreds of files of a few records each, which every reader of the history opens
            # (the soak's reconciliation: 4.4 s on 12k records, 0.7 s once compacted)
            files = _files_for(planned.records_at_most, spark.sparkContext.defaultParallelism)
            # a global temp view, as in `landing.land`: local ones show in the table lists dbt reads
            batch.coalesce(files).createOrReplaceGlobalTempView(name)
            views.append(name)
            mixed = len(set(lives.values())) > 1  # the usual batch has every topic in one life
            for life in sorted(set(lives.values())):
                if mixed:
                    names = ", ".join(sql_string(t) for t, n in lives.items() if n == life)
                    views.append(f"{name}_{life}")
                    spark.sql(f"select * from global_temp.{name} where kafka_topic in ({names})") \
                        .createOrReplaceGlobalTempView(views[-1])
                in_life = [planned.ranges[topic] for topic, n in lives.items() if n == life]
                bounds = (min(lo for lo, _ in in_life), max(hi for _, hi in in_life))
                landed[fmt] = landed.get(fmt, 0) + merge_batch(
                    spark, fmt, f"global_temp.{views[-1]}", unique_coordinates=True, incarnation=life,
                    bounds=bounds, before_publish=lambda: check_topics(topics),
                )
        finally:
            for view in views:
                spark.catalog.dropGlobalTempView(view)

    return land


def _record_end_offsets(spark: SparkSession, queries: Sequence[StreamingQuery]) -> None:
    """Write the latest offsets the queries saw on the broker (their last progress)."""
    rows = []
    for query in queries:
        progress = query.lastProgress
        for source in (progress or {}).get("sources", []):
            latest = source.get("latestOffset")
            if isinstance(latest, str):
                latest = json.loads(latest)
            for topic, partitions in (latest or {}).items():
                for partition, offset in partitions.items():
                    rows.append((topic, int(partition), int(offset)))
    if not rows:
        return
    # the rows inline in the statement: a DataFrame made from Python rows cost a job of its own
    values = ", ".join(f"({sql_string(topic)}, {partition}, {offset})" for topic, partition, offset in rows)
    spark.sql(
        f"""
        merge into {end_offsets_table()} as t
        using (
            select kafka_topic, cast(kafka_partition as int) as kafka_partition,
                   cast(latest_offset as bigint) as latest_offset, current_timestamp() as observed_at
            from values {values} as v (kafka_topic, kafka_partition, latest_offset)
        ) as s
        on t.kafka_topic = s.kafka_topic and t.kafka_partition = s.kafka_partition
        when matched then update set *
        when not matched then insert *
        """
    )


def _progress_line(fmt: str, query: StreamingQuery) -> str | None:
    progress = query.lastProgress
    if not progress:
        return None
    rate = progress.get("processedRowsPerSecond") or 0.0
    lag = []
    for source in progress.get("sources", []):
        metrics = source.get("metrics") or {}
        if "maxOffsetsBehindLatest" in metrics:
            lag.append(f"max lag {metrics['maxOffsetsBehindLatest']} offsets")
    return f"{fmt}: batch {progress.get('batchId')}, {progress.get('numInputRows', 0)} records, {rate:,.0f}/s" + (
        f", {', '.join(lag)}" if lag else ""
    )


def _wait_for_any(queries: Iterable[StreamingQuery], seconds: float) -> None:
    """Wait up to `seconds`, returning as soon as one active query ends (a run of availableNow ends
    when its last batch does, not at the next poll). A query that failed is reported by the caller."""
    from pyspark.errors import StreamingQueryException

    active = [query for query in queries if query.isActive]
    if not active:
        return
    try:
        active[0].awaitTermination(seconds)
    except StreamingQueryException:
        pass


def _start_query(
    spark: SparkSession,
    settings: ConsumeSettings,
    rule: TopicRule,
    incarnations: TopicIncarnations,
    landed: dict[str, int],
    lock: threading.Lock,
    recreated_formats: set[str],
    progress: IO[str] | None,
) -> StreamingQuery:
    """Start the streaming query of one format, from the checkpoint of its topics' current
    incarnations; a new checkpoint goes on where the previous one left each partition."""
    pattern = rule.subscribe_pattern()
    with lock:
        topics = incarnations.matching_topics(pattern)
        recreated_now = incarnations.observe(rule.fmt, topics)
        generation = incarnations.generation(pattern)
        lives = {topic: incarnations.incarnation(topic) for topic in incarnations.known}
    checkpoint = checkpoint_dir(settings.checkpoint_root, rule.fmt, generation)
    starting = _starting_offsets(settings, rule.fmt, incarnations, topics, checkpoint, generation)
    reader = _stream(spark, settings, rule, starting)
    if recreated_now and progress is not None:
        print(f"{rule.fmt}: {', '.join(sorted(recreated_now))} deleted and created again since the last run: "
              f"read from their start as their next incarnation", file=progress, flush=True)
    checkpoint.mkdir(parents=True, exist_ok=True)
    (checkpoint / INCARNATIONS_FILE).write_text(json.dumps(lives, sort_keys=True))
    writer = (
        reader.writeStream.queryName(f"cdc_lake_consume_{rule.fmt}")
        .option("checkpointLocation", str(checkpoint))
        .foreachBatch(_land_batch(spark, rule.fmt, checkpoint, landed, incarnations, lock, recreated_formats))
    )
    if settings.follow:
        writer = writer.trigger(processingTime=f"{settings.trigger_seconds} seconds")
    else:
        writer = writer.trigger(availableNow=True)
    return writer.start()


def _starting_offsets(
    settings: ConsumeSettings,
    fmt: str,
    incarnations: TopicIncarnations,
    topics: list[str],
    checkpoint: Path,
    generation: int,
) -> str:
    """`settings.starting_offsets` for the format's first checkpoint (Spark ignores it once the
    checkpoint has offsets); for a later one, per partition, where the last earlier checkpoint
    finished (`resume_offsets`), a topic recreated since then from its earliest offset."""
    if generation == 0 or (checkpoint / "offsets").exists():
        return settings.starting_offsets
    earlier = [
        candidate for n in range(generation - 1, -1, -1)
        if ((candidate := checkpoint_dir(settings.checkpoint_root, fmt, n)) / "offsets").exists()
    ]
    if not earlier:
        return settings.starting_offsets
    previous = earlier[0]
    lives_file = previous / INCARNATIONS_FILE
    lives_then = json.loads(lives_file.read_text()) if lives_file.exists() else {}  # `<fmt>`: all 0
    described = incarnations.describe(topics)
    recreated = {t for t in described if incarnations.incarnation(t) > int(lives_then.get(t, 0))}
    return starting_offsets(resume_offsets(previous), {t: parts for t, (_, parts) in described.items()}, recreated)


def create_tables(spark: SparkSession, formats: Iterable[str]) -> None:
    """The tables a consumer writes, if missing: the raw tables of `formats` and the end offsets."""
    spark.sql(f"create database if not exists {quote_identifier(raw_schema())}")
    spark.sql(f"create table if not exists {end_offsets_table()} ({END_OFFSETS_COLUMNS}) using iceberg")
    for fmt in formats:
        ensure_raw_table(spark, fmt)


def consume(spark: SparkSession, settings: ConsumeSettings, progress: IO[str] | None = sys.stderr) -> dict[str, int]:
    """Run one streaming query per format until the broker's current end (or until
    `settings.stop` with `follow`); returns how many new records each format landed."""
    create_tables(spark, [rule.fmt for rule in settings.rules])
    queries: dict[str, StreamingQuery] = {}
    landed: dict[str, int] = {}
    lock = threading.Lock()
    recreated_formats: set[str] = set()  # formats whose query stopped on a recreated topic
    incarnations = TopicIncarnations(spark, settings.bootstrap_servers, settings.kafka_options)
    rules = {rule.fmt: rule for rule in settings.rules}
    try:
        for rule in settings.rules:
            queries[rule.fmt] = _start_query(
                spark, settings, rule, incarnations, landed, lock, recreated_formats, progress
            )
        last_ids: dict[str, Any] = {}
        offsets_written, offsets_due = time.monotonic(), False
        while any(q.isActive for q in queries.values()) and not settings.stop.is_set():
            _wait_for_any(queries.values(), 1.0 if not settings.follow else min(settings.trigger_seconds, 5.0))
            for fmt, query in list(queries.items()):
                error = query.exception()
                if error is not None and fmt in recreated_formats:
                    recreated_formats.discard(fmt)
                    if progress is not None:
                        print(f"{fmt}: a topic was deleted and created again; its next incarnation is read "
                              "from its start", file=progress, flush=True)
                    queries[fmt] = _start_query(
                        spark, settings, rules[fmt], incarnations, landed, lock, recreated_formats, progress
                    )
                    last_ids.pop(fmt, None)
                    continue
                if error is not None:
                    raise ConsumeError(f"{fmt}: {error}")
                batch = (query.lastProgress or {}).get("batchId")
                if batch is not None and last_ids.get(fmt) != batch:
                    last_ids[fmt] = batch
                    offsets_due = True
                    line = _progress_line(fmt, query)
                    if line and progress is not None:
                        print(line, file=progress, flush=True)
            # each write is an Iceberg commit: after new batches only, and not more often than
            # END_OFFSETS_SECONDS (writing every few seconds cost the soak's consumer a commit per loop)
            if settings.follow and offsets_due and time.monotonic() - offsets_written >= END_OFFSETS_SECONDS:
                _record_end_offsets(spark, list(queries.values()))
                offsets_written, offsets_due = time.monotonic(), False
        for fmt, query in queries.items():
            if query.exception() is not None:
                raise ConsumeError(f"{fmt}: {query.exception()}")
        _record_end_offsets(spark, list(queries.values()))
        return {rule.fmt: landed.get(rule.fmt, 0) for rule in settings.rules}
    finally:
        for query in queries.values():
            if query.isActive:
                query.stop()
        incarnations.close()
