"""Records that make a build fail, found and set aside, so that one record costs one build at most.

A base model (`base_<format>__messages`) reads its batch of raw records and decodes each. When a
record makes that fail (a value no decoder foresaw, a Spark bug, a defect in our SQL), every later
build would fail on the same batch. `set_aside_failing_records` finds the records by halving the
batch: the failed model's compiled query runs on a part of the batch (the raw table's name in its
SQL replaced by a view of that part) into an aggregate that reads every column, so any record
whose decoding fails makes the part fail; a failing part is halved until single records are left.
Each is written to the raw schema's `cdc_set_aside_records` with the error as its reason: the base
models leave those records out (macro raw_records_since_last_build names them in the batch's
filter, ahead of everything else, so no expression of the model ever sees them) and `int_raw_records_unioned`
takes them as rejected records, so they reach `cdc_rejected_messages` with their Kafka coordinates
and the reconciliation counts them. Nothing is lost: the raw table keeps the record, and
`release` brings it back (with a landing sequence of its own, so the next build stages it).

k failing records of n cost at most 2·k·log2(n) probes, each one query of the model on a part of
the batch; a half is probed only when its sibling failed too (a failing span whose first half
builds has its failure in the second), so one record costs about 1.5·log2(n).
The batch is numbered once (`cache table`), so a probe reads only its part.
Everything is SQL through an Executor, so it works on the embedded session and on a Thrift Server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdc_lake.landing import (
    RAW_COLUMNS,
    Executor,
    as_executor,
    landing_sequence,
    raw_schema,
    raw_table,
    table_exists,
)
from cdc_lake.sqltext import qualified_name, quote_identifier, sql_string

SET_ASIDE_TABLE = "cdc_set_aside_records"
# The register of set-aside records (the dbt macro create_raw_tables creates the same table;
# test_project_rules checks that the two agree).
SET_ASIDE_COLUMNS = """
    source_format string not null,
    kafka_topic string not null,
    kafka_partition int not null,
    kafka_offset bigint not null,
    kafka_topic_incarnation int,
    landing_seq bigint not null,
    kafka_timestamp timestamp,
    landed_at timestamp not null,
    kafka_value string,
    reason string not null,
    set_aside_at timestamp not null
"""
BATCH_VIEW = "cdc_set_aside_batch"  # the failed batch, numbered (probe_row)
PROBE_VIEW = "cdc_set_aside_probe"  # the part of it a probe reads
REASON_PREFIX = "the build failed on this record: "
MAX_REASON = 2000  # characters of the error kept in the reason
MAX_PROBES = 400  # a batch failing for no record of its own stops the search here
RAW_NAMES = ", ".join(line.split()[0] for line in RAW_COLUMNS.strip().splitlines())


def set_aside_table() -> str:
    return qualified_name(raw_schema(), SET_ASIDE_TABLE)


def ensure_set_aside_table(executor: Executor) -> None:
    executor.execute(f"create database if not exists {quote_identifier(raw_schema())}")
    executor.execute(f"create table if not exists {set_aside_table()} ({SET_ASIDE_COLUMNS}) using iceberg")


def base_model_format(model_name: str) -> str | None:
    """The format of a base model's name (`base_debezium__messages` -> `debezium`), else None."""
    match = re.fullmatch(r"base_(\w+?)__messages", model_name)
    return match.group(1) if match else None


@dataclass
class SetAside:
    """What one search found: the records set aside, the probes it ran, and, when the model's query
    passed on the whole batch, that no record of it is the cause."""

    fmt: str
    records: list[dict[str, Any]]
    probes: int
    batch_records: int
    reproduced: bool

    def summary(self) -> str:
        if not self.reproduced:
            return (f"{self.fmt}: the batch of {self.batch_records} records builds when probed alone; "
                    "no record set aside (the failure was not one of its records)")
        return (f"{self.fmt}: set aside {len(self.records)} of {self.batch_records} records "
                f"({self.probes} probes): " + ", ".join(
                    f"{r['kafka_topic']}[{r['kafka_partition']}]@{r['kafka_offset']}" for r in self.records[:10]))


def probe_query(model_sql: str, fmt: str) -> str:
    """The base model's compiled query reading PROBE_VIEW instead of the raw table, wrapped in an
    aggregate that needs every column of every row (so no decoding is pruned away)."""
    schema = re.escape(raw_schema())
    table = re.escape(f"raw_{fmt}")
    relation = re.compile(rf"(?:`?spark_catalog`?\.)?`?{schema}`?\.`?{table}`?(?![\w`])", re.IGNORECASE)
    replaced, count = relation.subn(PROBE_VIEW, model_sql)
    if count == 0:
        raise ValueError(f"the model's SQL does not read {raw_table(fmt)}")
    return f"select count(*), sum(length(to_json(struct(*)))) from (\n{replaced}\n) as cdc_set_aside_model"


def error_reason(error: BaseException) -> str:
    """The error a probe failed with, as a reject reason: Spark's own message, without the stack."""
    text = str(error)
    # a task's failure: the cause Spark names after "most recent failure: Lost task ...: "
    cause = re.search(r"most recent failure: Lost task [^:]*: ([^\n]+)", text)
    first = cause.group(1) if cause else next((line for line in text.splitlines() if line.strip()), repr(error))
    return (REASON_PREFIX + first.strip())[:MAX_REASON]


def find_failing_records(
    executor: Executor, fmt: str, model_sql: str, base_relation: str | None,
    log: Callable[[str], None] = lambda _: None,
) -> SetAside:
    """Halve the base model's batch until the records that make its query fail are single."""
    raw = raw_table(fmt)
    watermark = -1
    if base_relation is not None:
        try:
            found = executor.query(f"select max(landing_seq) from {base_relation}")[0][0]
            watermark = -1 if found is None else int(found)
        except Exception:  # noqa: BLE001 - a base model never built: everything is its batch
            watermark = -1
    executor.execute(f"drop view if exists {BATCH_VIEW}")
    executor.execute(
        f"cache table {BATCH_VIEW} as select raw.*, row_number() over ("
        "order by raw.landing_seq, raw.kafka_topic, raw.kafka_partition, raw.kafka_offset) as probe_row "
        f"from {raw} as raw left anti join {set_aside_table()} as aside "
        f"on aside.source_format = {sql_string(fmt)} and {_same_record('aside', 'raw')} "
        f"where raw.landing_seq > {watermark}"
    )
    try:
        size = int(executor.query(f"select count(*) from {BATCH_VIEW}")[0][0])
        query = probe_query(model_sql, fmt)
        probes = 0

        def fails(lo: int, hi: int) -> BaseException | None:
            nonlocal probes
            probes += 1
            executor.execute(
                f"create or replace temporary view {PROBE_VIEW} as select {RAW_NAMES} "
                f"from {BATCH_VIEW} where probe_row between {lo} and {hi}"
            )
            try:
                executor.query(query)
            except Exception as error:  # noqa: BLE001 - the failure is what is looked for
                return error
            return None

        first = fails(1, size) if size else None
        if first is None:
            return SetAside(fmt, [], probes, size, reproduced=False)
        found: list[tuple[int, str]] = []
        # (lo, hi, the error of a probe of a span holding it, whether that span itself was probed)
        pending: list[tuple[int, int, BaseException, bool]] = [(1, size, first, True)]
        while pending and probes < MAX_PROBES:
            lo, hi, error, probed = pending.pop()
            if lo == hi:
                own = error if probed else fails(lo, hi)  # a record inferred to fail is made sure of
                if own is None:
                    log(f"{fmt}: row {lo} builds alone; it failed only beside other records (not set aside)")
                else:
                    found.append((lo, error_reason(own)))
                continue
            mid = (lo + hi) // 2
            left = fails(lo, mid)
            if left is None:
                # the whole failed and its left half builds: the right half fails (checked when
                # it is a single record or is split further)
                pending.append((mid + 1, hi, error, False))
                continue
            right = fails(mid + 1, hi)
            pending.append((lo, mid, left, True))
            if right is not None:
                pending.append((mid + 1, hi, right, True))
        records = _rows(executor, found)
        log(f"{fmt}: {len(records)} failing records of {size} found in {probes} probes")
        return SetAside(fmt, records, probes, size, reproduced=True)
    finally:
        executor.execute(f"drop view if exists {PROBE_VIEW}")
        executor.execute(f"uncache table if exists {BATCH_VIEW}")
        executor.execute(f"drop view if exists {BATCH_VIEW}")


def _same_record(left: str, right: str) -> str:
    return " and ".join(
        [f"{left}.{c} = {right}.{c}" for c in ("kafka_topic", "kafka_partition", "kafka_offset", "landing_seq")]
        + [f"coalesce({left}.kafka_topic_incarnation, 0) = coalesce({right}.kafka_topic_incarnation, 0)"]
    )


def _rows(executor: Executor, found: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """The batch rows numbered `found`, with their reasons."""
    if not found:
        return []
    reasons = dict(found)
    columns = ["probe_row", "kafka_topic", "kafka_partition", "kafka_offset", "kafka_topic_incarnation",
               "landing_seq"]
    numbers = ", ".join(str(row) for row in reasons)
    rows = executor.query(f"select {', '.join(columns)} from {BATCH_VIEW} where probe_row in ({numbers})")
    return [{**dict(zip(columns, row, strict=True)), "reason": reasons[int(row[0])]} for row in rows]


def record_set_aside(executor: Executor, fmt: str, records: Iterable[dict[str, Any]]) -> int:
    """Write the records to the register (their raw value copied from the raw table), in one commit;
    a record already there is kept as it is."""
    records = list(records)
    if not records:
        return 0
    ensure_set_aside_table(executor)
    found = " union all ".join(
        f"select {sql_string(r['kafka_topic'])} as kafka_topic, {int(r['kafka_partition'])} as kafka_partition, "
        f"{int(r['kafka_offset'])} as kafka_offset, {int(r['landing_seq'])} as landing_seq, "
        f"{int(r['kafka_topic_incarnation'] or 0)} as kafka_topic_incarnation, {sql_string(r['reason'])} as reason"
        for r in records
    )
    executor.execute(
        f"merge into {set_aside_table()} as aside using ("
        f"select {sql_string(fmt)} as source_format, raw.kafka_topic, raw.kafka_partition, raw.kafka_offset, "
        "raw.kafka_topic_incarnation, raw.landing_seq, raw.kafka_timestamp, raw.landed_at, raw.kafka_value, "
        "found.reason, current_timestamp() as set_aside_at "
        f"from {raw_table(fmt)} as raw join ({found}) as found on {_same_record('found', 'raw')}"
        f") as new on aside.source_format = new.source_format and {_same_record('aside', 'new')} "
        "when not matched then insert *"
    )
    return len(records)


def failed_base_models(results: Iterable[Any]) -> dict[str, str]:
    """Of a dbt build's results (objects with `.node` and `.status`, or run_results.json entries),
    the base models that failed, with their compiled SQL: {format: sql}."""
    failed: dict[str, str] = {}
    for result in results:
        node = getattr(result, "node", None)
        status = str(getattr(result, "status", "") if node is not None else result.get("status", ""))
        name = node.name if node is not None else str(result.get("unique_id", "")).rsplit(".", 1)[-1]
        code = getattr(node, "compiled_code", None) if node is not None else result.get("compiled_code")
        fmt = base_model_format(name)
        if fmt and status.lower() == "error" and code:
            failed[fmt] = code
    return failed


def failed_base_models_of_last_run(project_dir: Path) -> dict[str, str]:
    """`failed_base_models` of the last dbt command run in `project_dir` (target/run_results.json)."""
    path = project_dir / "target" / "run_results.json"
    if not path.exists():
        return {}
    return failed_base_models(json.loads(path.read_text(encoding="utf-8")).get("results", []))


def set_aside_failing_records(
    target: Any, failed: dict[str, str], base_relation: Callable[[str], str | None],
    log: Callable[[str], None] = print,
) -> list[SetAside]:
    """For each failed base model ({format: compiled SQL}), find its failing records and set them aside."""
    executor = as_executor(target)
    ensure_set_aside_table(executor)
    outcomes = []
    for fmt, sql in sorted(failed.items()):
        outcome = find_failing_records(executor, fmt, sql, base_relation(fmt), log)
        record_set_aside(executor, fmt, outcome.records)
        log(f"cdc-lake set-aside: {outcome.summary()}")
        outcomes.append(outcome)
    return outcomes


def release(target: Any, fmt: str, where: str = "true", rejects_table: str | None = None) -> int:
    """Bring set-aside records of `fmt` (those matching `where`, SQL on the register's columns) back,
    after a fix: each gets a new landing sequence in the raw table, so the next build stages it;
    its reject row leaves `rejects_table` (cdc_rejected_messages) when given and present; it leaves
    the register. Returns how many. Run again after a crash, it finishes what was left."""
    executor = as_executor(target)
    ensure_set_aside_table(executor)
    chosen = f"select * from {set_aside_table()} where source_format = {sql_string(fmt)} and ({where})"
    count = int(executor.query(f"select count(*) from ({chosen})")[0][0])
    if not count:
        return 0
    reland(executor, fmt, f"({chosen}) as aside", _same_record("aside", "raw"))
    if rejects_table is not None and table_exists(executor, rejects_table):
        executor.execute(
            f"merge into {rejects_table} as rejected using ({chosen}) as aside "
            "on rejected.source_format = aside.source_format and rejected.kafka_topic = aside.kafka_topic "
            "and rejected.kafka_partition = aside.kafka_partition and rejected.kafka_offset = aside.kafka_offset "
            "and rejected.landing_seq = aside.landing_seq when matched then delete"
        )
    executor.execute(f"delete from {set_aside_table()} where source_format = {sql_string(fmt)} and ({where})")
    return count


def reland(executor: Executor, fmt: str, chosen: str, on: str) -> None:
    """Give the raw records of `fmt` that `chosen` (an aliased relation) matches by `on` (against
    `raw`) a new landing sequence, so the next build stages them again, as late changes when they
    are changes: how set-aside records and records a schema change held come back."""
    with landing_sequence() as landing_seq:
        executor.execute(
            f"merge into {raw_table(fmt)} as raw using {chosen} on {on} "
            f"when matched then update set raw.landing_seq = {int(landing_seq)}, raw.landed_at = current_timestamp()"
        )
