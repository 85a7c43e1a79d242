"""End to end with a real CDC producer (issue 18): MariaDB → Debezium (Kafka Connect) → Kafka → cdc_lake.

A MariaDB server (Debian's mariadb-server, own datadir, row binlog), the KRaft broker and a Kafka
Connect standalone worker running Debezium's MariaDB connector start on free loopback ports in
temporary folders and stop whatever happens. The scripted workload (`cdc_lake.testing.e2e_workload`) runs
in three rounds: before the connectors start (initial snapshot), while they stream, and again after
the first build (incremental). One connector per Debezium setting variant reads the same binlog
into its own topics; each variant is consumed (`cdc-lake consume`'s function, format `debezium`)
into its own lake schemas and built with dbt.

The truth is MariaDB's own `SELECT *`, read after every committed transaction. After each build,
per variant: every table's typed `e2e__<table>_current` view equals `SELECT *` value by value, as
typed values and (through `cdc_current.image`) as canonical text; `e2e__<table>_history` holds one
version per committed row state, in commit order; `cdc_schema_changes` lists the DDL;
`cdc_rejected_messages` is empty; `cdc_reconciliation` accounts for every record.

Option `schema_changes` (docs/table_options.md, "Schema changes") on two tables with a real
`ALTER TABLE ... ADD COLUMN` while the connectors stream (the orders table's ALTERs are the
default mode, evolve): `schema_ignored` (ignore_new_columns) equals MariaDB without the added
column, in every round; `schema_held` (fail) stays as it was before its ALTER after round 1, its
later changes rejects with the reason; `cdc-lake accept-schema e2e.schema_held` before round 2,
whose build takes them in: from then on it equals MariaDB.

`CDC_LAKE_E2E=ci` (CI: `make e2e-ci`) runs the default settings plus one combined variant;
`CDC_LAKE_E2E=full` (`make e2e`) the whole matrix and the 100k-row transaction.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from cdc_lake import cli
from cdc_lake.consume import ConsumeSettings, TopicRule, consume
from cdc_lake.schema_acceptance import hold_prefix
from cdc_lake.servers.kafka_broker import LocalKafka, wait_for_message
from cdc_lake.testing.e2e_workload import (
    DATABASE,
    SCHEMA_CHANGE_TABLES,
    Recorder,
    incremental_round,
    snapshot_round,
    streaming_round,
)
from cdc_lake.testing.harness import DbtFailure, Lake, copy_project, invoke_dbt
from cdc_lake.testing.kafka_connect import KafkaConnect, debezium_mariadb
from cdc_lake.testing.mariadb import PASSWORD, USER, LocalMariaDB
from cdc_lake.testing.mysql_values import (
    canonical,
    canonical_key,
    ddl_text,
    diff,
    mysql_columns,
    rows_match,
    same_typed,
    short,
    typed_lake,
    typed_truth,
)
from cdc_lake.verify import compare
from cdc_lake.verify.compare import TableResult
from cdc_lake.verify.run import verify
from cdc_lake.verify.source import SourceUrl

pytestmark = pytest.mark.e2e

MODE = os.environ.get("CDC_LAKE_E2E", "ci")
TABLES = ["types", "orders", "events_nokey", "truncated", "recreated", "sync_marker"]
LARGE_ROWS = 100_000 if MODE == "full" else 2_000
if LARGE_ROWS:
    TABLES.append("bulk")
# what a round's build leaves out: the typed views of the demo's shop tables (the project's own,
# empty here) and the monitoring models no check reads (each with its tests)
NOT_COMPARED = ["marts.tables.shop__*", "cdc_lag", "cdc_consumer_lag", "cdc_verification"]
# option schema_changes of the tables of SCHEMA_CHANGE_TABLES, for every round's build
SCHEMA_VARS = json.dumps({"cdc_table_options": {
    rf"{DATABASE}\.{table}": {"schema_changes": mode} for table, (mode, _) in SCHEMA_CHANGE_TABLES.items()
}})


@dataclass
class Variant:
    """One Debezium setting combination: a connector of its own, topics `<name>.*`, a lake of its own."""

    name: str
    schemas_enable: bool = True
    settings: dict[str, str] = field(default_factory=dict)

    def carried(self, value: Any, data_type: str) -> Any:
        """A MariaDB value as this variant's records can carry it: the documented tolerances
        (docs/formats.md, "Debezium connector settings"), applied to the truth, never to the lake."""
        if value is None:
            return None
        if self.settings.get("time.precision.mode") == "connect":
            # Kafka Connect's Time and Timestamp hold milliseconds (timestamp columns stay
            # Debezium's ZonedTimestamp text, with microseconds); a time outside a day is no
            # Connect Time at all, and Debezium sends null
            if data_type == "datetime":
                return value.replace(microsecond=value.microsecond // 1000 * 1000)
            if data_type == "time":
                if not timedelta(0) <= value < timedelta(days=1):
                    return None
                return timedelta(milliseconds=math.floor(value / timedelta(milliseconds=1)))
        if self.settings.get("decimal.handling.mode") == "double" and data_type == "decimal":
            return float(value)
        return value

    def compared(self, columns: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
        """The columns this variant can carry exactly. Without schemas (`schemas.enable=false`)
        values stay as sent: only those whose JSON form is their canonical text are compared."""
        if self.schemas_enable:
            return columns
        # (a bigint unsigned travels as a Connect Decimal with bigint.unsigned.handling.mode=precise:
        # base64 bytes without a schema; MariaDB reports its column_type as `bigint(20) unsigned`)
        return {c: t for c, t in columns.items()
                if t[0] in AS_SENT_TYPES and not (t[0] == "bigint" and "unsigned" in t[1])}

    def truth_typed(self, value: Any, data_type: str) -> Any:
        carried = self.carried(value, data_type)
        return typed_truth(carried, data_type) if self.schemas_enable else canonical(carried, data_type)

    def lake_typed(self, value: Any, data_type: str) -> Any:
        if not self.schemas_enable:
            return None if value is None else str(value)  # schema-less columns type as string
        return typed_lake(value, data_type)


# JSON numbers and strings that are the canonical text as they are (no schema needed)
AS_SENT_TYPES = {"tinyint", "smallint", "mediumint", "int", "bigint", "year", "char", "varchar", "text",
                 "mediumtext", "longtext", "enum", "set"}


def lake_group(variant: Variant) -> str:
    """Variants with schemas share one lake (one consume, one build; `source_system` = the
    variant's topic prefix tells them apart); schema-less records type nothing, so their own."""
    return "schemas" if variant.schemas_enable else "noschema"


# bigint.unsigned.handling.mode=precise everywhere: Debezium's default `long` wraps values >= 2^63
# to negative numbers, which nothing downstream can undo (docs/formats.md)
# skipped.operations=none: TRUNCATE reaches Kafka (an op `t` record; Debezium skips it by default)
BASE = {"bigint.unsigned.handling.mode": "precise", "skipped.operations": "none"}
VARIANTS = [
    Variant("dbz_default", settings={**BASE}),
    Variant("dbz_string_connect", settings={
        **BASE, "decimal.handling.mode": "string", "time.precision.mode": "connect"}),
    Variant("dbz_double", settings={**BASE, "decimal.handling.mode": "double"}),
    Variant("dbz_noschema", schemas_enable=False, settings={**BASE}),
]
if MODE != "full":
    VARIANTS = VARIANTS[:2]
# a developer's shortcut: CDC_LAKE_E2E_VARIANTS=dbz_default runs only the named variants
if os.environ.get("CDC_LAKE_E2E_VARIANTS"):
    VARIANTS = [v for v in VARIANTS if v.name in os.environ["CDC_LAKE_E2E_VARIANTS"].split(",")]


# ----------------------------------------------------------------------------------- fixtures


@dataclass
class E2E:
    server: LocalMariaDB
    recorder: Recorder
    worker: KafkaConnect
    broker: Any
    lakes: dict[str, Lake]
    folder: Path
    snapshot_txns: int = 0
    # DDL run while the connectors streamed
    streamed_ddl: set[str] = field(default_factory=set)
    build_failures: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    # `cdc-lake accept-schema` ran for the table in mode fail
    schema_accepted: bool = False


@pytest.fixture(scope="module")
def e2e(spark) -> Iterator[E2E]:
    os.environ["TZ"] = "UTC"
    time.tzset()
    folder = Path(tempfile.mkdtemp(prefix="cdc_lake_e2e_"))
    # a broker of its own in this folder, not in pytest's basetemp (the shared `kafka_broker`
    # fixture's): pytest prunes old basetemps of the same user, and here every engineer is root
    kafka_broker = LocalKafka(folder / "kafka")
    (folder / "project").mkdir()
    project = copy_project(folder / "project")
    for table in TABLES + list(SCHEMA_CHANGE_TABLES):
        assert cli.main(["add-table", DATABASE, table, "--no-lake", "--project-dir", str(project)]) == 0
    server = LocalMariaDB(folder / "mariadb")
    worker: KafkaConnect | None = None
    lakes: dict[str, Lake] = {}
    try:
        started = time.monotonic()
        kafka_broker.start()
        server.start()
        recorder = Recorder(server.connect())
        recorder.run(snapshot_round())
        connectors = [
            debezium_mariadb(
                v.name, topic_prefix=v.name, port=server.port, user=USER, password=PASSWORD, server_id=5400 + i,
                databases=[DATABASE], bootstrap=kafka_broker.bootstrap, schemas_enable=v.schemas_enable,
                settings=v.settings,
            )
            for i, v in enumerate(VARIANTS)
        ]
        worker = KafkaConnect(folder / "connect", kafka_broker.bootstrap, connectors).start()
        worker.wait_running()
        snapshot_txns = recorder.committed
        wait_for_snapshots(recorder, worker, kafka_broker.bootstrap)
        for group in sorted({lake_group(v) for v in VARIANTS}):
            lake = Lake(spark, f"t_e2e_{group}")
            lake.project_dir = project
            lake.drop()
            lakes[group] = lake
        state = E2E(server, recorder, worker, kafka_broker, lakes, folder, snapshot_txns=snapshot_txns)
        state.timings["servers and snapshot"] = time.monotonic() - started
        yield state
    finally:
        if worker is not None:
            worker.stop()
        server.stop()
        kafka_broker.stop()
        for lake in lakes.values():
            lake.drop()
        shutil.rmtree(folder, ignore_errors=True)


def run_round(state: E2E, round_no: int, transactions: list) -> None:
    """Run SQL, wait until every connector sent it, then consume and build every lake. A failed
    build is recorded, not raised, so the comparisons still say what differs."""
    started = time.monotonic()
    state.streamed_ddl |= {s for t in transactions if t.ddl for s in t.statements}
    state.recorder.run(transactions)
    state.recorder.mark(round_no)
    for variant in VARIANTS:
        wait_for_marker(state, variant.name, round_no, settle=0.0)
    time.sleep(SETTLE)  # once for every variant: each marker has been seen
    state.timings[f"round {round_no}: SQL and capture"] = time.monotonic() - started
    for group, lake in state.lakes.items():
        started = time.monotonic()
        consume_group(state, group)
        state.timings[f"round {round_no}: consume {group}"] = time.monotonic() - started
        started = time.monotonic()
        try:
            lake.build("--vars", SCHEMA_VARS, exclude=NOT_COMPARED)
        except DbtFailure as failure:
            state.build_failures[group] = str(failure)
        state.timings[f"round {round_no}: dbt build {group}"] = time.monotonic() - started
    print({k: round(v, 1) for k, v in state.timings.items()})


def consume_group(state: E2E, group: str) -> None:
    """Land what the connectors of one lake group sent since the last time."""
    lake = state.lakes[group]
    lake._activate()
    prefixes = "|".join(v.name for v in VARIANTS if lake_group(v) == group)
    consume(lake.spark, ConsumeSettings(
        bootstrap_servers=state.broker.bootstrap,
        rules=[TopicRule("debezium", patterns=[rf"(?:{prefixes})(\..*)?"])],
        checkpoint_root=state.folder / "checkpoints" / group,
    ), progress=None)


def marker_change(value: dict) -> tuple[str | None, int | None]:
    """The op and round number of a change of the marker row (the envelope with or without schemas)."""
    payload = value.get("payload", value)
    return payload.get("op"), (payload.get("after") or {}).get("round_no")


# after a marker is seen, how long records of other topics get to be acknowledged
SETTLE = 3.0


def wait_for_marker(state: E2E, prefix: str, round_no: int, timeout: float = 600.0, settle: float = SETTLE) -> None:
    """Debezium sends changes in binlog order: once the marker row's change is in Kafka, so is
    everything committed before it (records of other topics get `settle` seconds to be acknowledged)."""

    def is_marker(value: dict) -> bool:
        return marker_change(value)[1] == round_no

    if not wait_for_message(state.broker.bootstrap, f"{prefix}.{DATABASE}.sync_marker", is_marker,
                            timeout=timeout, while_alive=state.worker.check_alive):
        raise AssertionError(
            f"{prefix}: round {round_no} not captured within {timeout:.0f}s: {state.worker.log_tail()}"
        )
    time.sleep(settle)


def wait_for_snapshots(recorder: Recorder, worker: KafkaConnect, bootstrap: str, timeout: float = 600.0) -> None:
    """A connector reported RUNNING may still be snapshotting, and DDL run meanwhile breaks the
    snapshot's SELECT (a renamed column). Debezium streams only after its snapshot: once a marker
    change arrives as a streamed change (not a snapshot read), that connector's snapshot is done.
    A marker the snapshot read instead is followed by a new one (0, -1, ...: each a real change)."""
    deadline = time.monotonic() + timeout
    waiting = [variant.name for variant in VARIANTS]
    for mark in itertools.count(0, -1):
        recorder.mark(mark)

        def is_streamed_mark(value: dict, mark: int = mark) -> bool:
            op, round_no = marker_change(value)
            return op in ("c", "u") and round_no == mark

        waiting = [name for name in waiting if not wait_for_message(
            bootstrap, f"{name}.{DATABASE}.sync_marker", is_streamed_mark, timeout=20.0,
            while_alive=worker.check_alive)]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{waiting}: snapshot not done within {timeout:.0f}s: {worker.log_tail()}")


@pytest.fixture(scope="module")
def round1(e2e) -> E2E:
    run_round(e2e, 1, streaming_round(LARGE_ROWS))
    return e2e


@pytest.fixture(scope="module")
def round2(round1) -> E2E:
    # the schema change of the table in mode fail accepted: round 2's build takes its held changes in
    held = [t for t, (mode, _) in SCHEMA_CHANGE_TABLES.items() if mode == "fail"]
    for lake in round1.lakes.values():
        lake._activate()
        for table in held:
            assert cli.main(["accept-schema", f"{DATABASE}.{table}"]) == 0
    round1.schema_accepted = True
    run_round(round1, 2, incremental_round())
    return round1


# ----------------------------------------------------------------------------------- the truth's values


# ----------------------------------------------------------------------------------- the lake's values


def primary_key(state: E2E, table: str) -> list[str]:
    with state.server.connect() as conn, conn.cursor() as cursor:
        cursor.execute(
            "select column_name from information_schema.key_column_usage where constraint_name = 'PRIMARY' "
            f"and table_schema = '{DATABASE}' and table_name = '{table}' order by ordinal_position"
        )
        return [row[0] for row in cursor.fetchall()]


def compare_current(state: E2E, variant: Variant, table: str, left_out: frozenset[str] = frozenset(),
                    truth_rows: list[dict] | None = None) -> list[str]:
    """Typed view vs SELECT * (or `truth_rows`), typed and as canonical text, but for the columns
    `left_out`; returns the differences."""
    lake = state.lakes[lake_group(variant)]
    columns = {c: t for c, t in variant.compared(mysql_columns(state, table)).items() if c not in left_out}
    truth_rows = state.recorder.select(table) if truth_rows is None else truth_rows
    view = lake.rows(f"select * from {{schema}}.{DATABASE}__{table}_current where source_system = '{variant.name}'")
    images = lake.rows(
        f"select image, row_count from {{schema}}.cdc_current where source_system = '{variant.name}' "
        f"and database_name = '{DATABASE}' and table_name = '{table}' and not is_deleted"
    )
    problems: list[str] = []
    typed_truth_rows = Counter(
        tuple((c, variant.truth_typed(r.get(c), t)) for c, (t, _) in columns.items()) for r in truth_rows
    )
    typed_lake_rows = Counter(
        tuple((c, variant.lake_typed(r.get(c), t)) for c, (t, _) in columns.items()) for r in view
    )
    if not rows_match(typed_truth_rows, typed_lake_rows, columns):
        problems.append(f"{table}: typed current differs:\n  only in MariaDB: {diff(typed_truth_rows, typed_lake_rows)}"
                        f"\n  only in the lake: {diff(typed_lake_rows, typed_truth_rows)}")
    text_truth = Counter(
        tuple((c, canonical(variant.carried(r.get(c), t), t)) for c, (t, _) in columns.items()) for r in truth_rows
    )
    text_lake: Counter = Counter()
    for image in images:
        text_lake[tuple((c, (image["image"] or {}).get(c)) for c in columns)] += image["row_count"] or 1
    if text_truth != text_lake:
        problems.append(f"{table}: canonical text differs:\n  only in MariaDB: {diff(text_truth, text_lake)}"
                        f"\n  only in the lake: {diff(text_lake, text_truth)}")
    return problems


def truth_versions(state: E2E, table: str, key: list[str]) -> dict[tuple, list[dict]]:
    """Per key, the row states in commit order: a new state whenever a committed transaction left
    the row different. States from before the connector started collapse into the snapshot's."""
    versions: dict[tuple, list[dict]] = {}
    previous: dict[tuple, dict] = {}
    for txn, ddl, rows in state.recorder.states.get(table, []):
        current = {tuple(canonical_key(r[k]) for k in key): r for r in rows}
        if not ddl:
            for row_key, row in current.items():
                if previous.get(row_key) != row:
                    chain = versions.setdefault(row_key, [])
                    if txn <= state.snapshot_txns and chain:
                        chain[-1] = row
                    else:
                        chain.append(row)
        previous = current
    return versions


def compare_history(state: E2E, variant: Variant, table: str, left_out: frozenset[str] = frozenset()) -> list[str]:
    key = primary_key(state, table)
    if not key:
        return []  # keyless tables are multisets: compared through their current state
    lake = state.lakes[lake_group(variant)]
    history = lake.rows(
        f"select * from {{schema}}.{DATABASE}__{table}_history where source_system = '{variant.name}' "
        "order by change_order"
    )
    expected = truth_versions(state, table, key)
    found: dict[tuple, list[dict]] = {}
    for version in history:
        found.setdefault(tuple(canonical_key(version[k]) for k in key), []).append(version)
    types = {c: t for c, t in variant.compared(mysql_columns(state, table)).items() if c not in left_out}
    if any(k not in types for k in key):
        return []  # a key this variant cannot carry as text (schema-less bigint unsigned): no versions to match
    problems = []
    live = {tuple(canonical_key(r[k]) for k in key) for r in state.recorder.select(table)}
    for row_key in sorted(set(expected) | set(found)):
        truth_chain = expected.get(row_key, [])
        lake_chain = found.get(row_key, [])
        ok = len(truth_chain) == len(lake_chain) and all(
            same_typed(variant.truth_typed(t[c], types[c][0]), variant.lake_typed(v.get(c), types[c][0]), types[c][0])
            for t, v in zip(truth_chain, lake_chain, strict=False) for c in t if c in types
        )
        # the last version is open exactly when the row is in MariaDB now (a TRUNCATE or DROP TABLE
        # closes it although no row change was sent)
        ok = ok and (not lake_chain or lake_chain[-1]["is_current"] == (row_key in live))
        if not ok:
            problems.append(
                f"{table} key {row_key}: history differs: MariaDB {len(truth_chain)} states "
                f"{[short(tuple(t.items())) for t in truth_chain][:4]}, lake {len(lake_chain)} versions "
                f"{[short(tuple((c, v.get(c)) for c in types)) for v in lake_chain][:4]}"
            )
    return problems


def compare_schema_changes(state: E2E, variant: Variant) -> list[str]:
    """Every DDL statement the workload ran while the connector streamed is in cdc_schema_changes,
    once, in commit order (the snapshot's DDL is Debezium's own text, not the workload's)."""
    ddl = state.lakes[lake_group(variant)].rows(
        "select ddl_statement, kafka_topic, kafka_partition, kafka_offset, source_position "
        f"from {{schema}}.cdc_schema_changes where source_system = '{variant.name}' order by change_order"
    )
    found = [ddl_text(r["ddl_statement"]) for r in ddl]
    expected = [ddl_text(s) for s in state.recorder.ddl_statements if s in state.streamed_ddl]
    problems = []
    for statement in expected:
        copies = [r for r in ddl if ddl_text(r["ddl_statement"]) == statement]
        if len(copies) != 1:
            problems.append(f"schema changes: {statement!r} found {len(copies)} times: {copies}")
    positions = [found.index(s) for s in expected if s in found]
    if positions != sorted(positions):
        problems.append(f"schema changes out of order: expected {expected}, found {found}")
    return problems


def check_variant(state: E2E, variant: Variant) -> None:
    problems: list[str] = []
    for table in TABLES:
        problems += compare_current(state, variant, table)
        problems += compare_history(state, variant, table)
    lake = state.lakes[lake_group(variant)]
    if lake_group(variant) in state.build_failures:
        problems.append(state.build_failures[lake_group(variant)])
    problems += compare_schema_changes(state, variant)
    schema_problems, held = compare_schema_change_tables(state, variant)
    problems += schema_problems
    rejected = lake.rows("select kafka_topic, kafka_offset, reject_reason from {schema}.cdc_rejected_messages")
    if [r for r in rejected if r not in held]:
        problems.append(f"rejected: {[r for r in rejected if r not in held][:5]}")
    unaccounted = lake.rows("select * from {schema}.cdc_reconciliation where unaccounted_records != 0")
    if unaccounted:
        problems.append(f"unaccounted: {unaccounted}")
    if problems:
        print(f"\n{variant.name}:\n" + "\n".join(problems), flush=True)  # seen before later rounds run
    assert not problems, "\n".join(problems)


def compare_schema_change_tables(state: E2E, variant: Variant) -> tuple[list[str], list[dict]]:
    """The tables of SCHEMA_CHANGE_TABLES (their ALTER TABLE ran in round 1): in ignore_new_columns,
    MariaDB's rows and versions without the added column, which the typed view lacks; in fail,
    before the acceptance, the rows MariaDB had before the ALTER, no added column, and the changes
    after it held (rejects of this variant's topic naming the column and the command); after it,
    MariaDB's rows and versions. Returns the problems and the held rejects."""
    lake = state.lakes[lake_group(variant)]
    problems: list[str] = []
    held: list[dict] = []
    for table, (mode, column) in SCHEMA_CHANGE_TABLES.items():
        view_columns = set(lake.spark.table(f"{lake.schema}.{DATABASE}__{table}_current").columns)
        if mode == "ignore_new_columns" or (mode == "fail" and not state.schema_accepted):
            if column in view_columns:
                problems.append(f"{table} ({mode}): the typed view has the column {column}")
        if mode == "ignore_new_columns":
            problems += compare_current(state, variant, table, frozenset({column}))
            problems += compare_history(state, variant, table, frozenset({column}))
        elif state.schema_accepted:
            problems += compare_current(state, variant, table)
            problems += compare_history(state, variant, table)
        else:
            states = state.recorder.states[table]
            before_alter = next(rows for (_, _, rows), (_, ddl, _) in zip(states, states[1:], strict=False) if ddl)
            problems += compare_current(state, variant, table, frozenset({column}), truth_rows=before_alter)
            held = lake.rows(
                "select kafka_topic, kafka_offset, reject_reason from {schema}.cdc_rejected_messages "
                f"where startswith(reject_reason, '{hold_prefix(DATABASE, table)}') "
                f"and startswith(kafka_topic, '{variant.name}.')"
            )
            if not held or not all(f"new columns {column}" in r["reject_reason"]
                                   or "after alter table" in r["reject_reason"].lower() for r in held):
                problems.append(f"{table} (fail): held records {held[:3]}")
    all_held = lake.rows(
        "select kafka_topic, kafka_offset, reject_reason from {schema}.cdc_rejected_messages where "
        + " or ".join(f"startswith(reject_reason, '{hold_prefix(DATABASE, t)}')" for t in SCHEMA_CHANGE_TABLES)
    ) if not state.schema_accepted else []
    return problems, all_held


def variant_params() -> list:
    return [pytest.param(v, id=v.name) for v in VARIANTS]


@pytest.mark.parametrize("variant", variant_params())
def test_round1_snapshot_and_streaming(round1, variant):
    check_variant(round1, variant)


@pytest.mark.parametrize("variant", variant_params())
def test_round2_incremental(round2, variant):
    check_variant(round2, variant)


# ----------------------------------------------------------------------------------- cdc-lake verify
# After the last round the lake holds what MariaDB holds (the tests above prove it from MariaDB's own
# SELECT); `cdc-lake verify` must say so, and then find each difference made behind its back. These
# tests run last: they change MariaDB with the binlog off and delete a row from the lake.

VERIFIED = "dbz_default"


def verify_url(state: E2E) -> SourceUrl:
    return SourceUrl(USER, "127.0.0.1", state.server.port, DATABASE)


def run_verify(state: E2E, tables: list[str] | None = None) -> dict[str, TableResult]:
    lake = state.lakes["schemas"]
    verification = verify(lake.spark, verify_url(state), lake.schema, lake.raw_schema, tables=tables,
                          source_system=VERIFIED, password=PASSWORD)
    print(verification.as_text())
    return {r.table: r for r in verification.results}


def source_sql(state: E2E, *statements: str) -> None:
    """Statements the CDC tool never sees: the session writes no binlog."""
    with state.server.connect(DATABASE) as conn, conn.cursor() as cursor:
        cursor.execute("set session sql_log_bin = 0")
        for statement in statements:
            cursor.execute(statement)


@pytest.fixture(scope="module")
def verified(round2) -> E2E:
    if VERIFIED not in {v.name for v in VARIANTS}:
        pytest.skip(f"CDC_LAKE_E2E_VARIANTS leaves out {VERIFIED}")
    return round2


def test_verify_equal_after_the_workload(verified):
    # the table in mode ignore_new_columns lacks a column by design
    compared = TABLES + [t for t, (mode, _) in SCHEMA_CHANGE_TABLES.items() if mode != "ignore_new_columns"]
    results = run_verify(verified, compared)
    assert set(results) == set(compared)
    assert {t: r.status for t, r in results.items() if r.status != "equal"} == {}
    for table, result in results.items():
        assert result.source_rows == len(verified.recorder.select(table)) == result.lake_rows, table
    # the rows at both ends of every type's range, NULLs in every column and the 1 MB text
    assert results["types"].source_rows >= 3
    # every row's values were compared by checksum: one scan per side, nothing pulled
    assert {r.scans for r in results.values()} == {1}
    recorded = verified.lakes["schemas"].rows(
        "select table_name, status from {raw_schema}.verification_results where source_system = 'dbz_default'"
    )
    assert sorted(recorded, key=lambda r: r["table_name"]) == [
        {"table_name": t, "status": "equal"} for t in sorted(compared)
    ]


def test_verify_finds_a_row_changed_behind_the_cdc_tools_back(verified, monkeypatch, capsys):
    (row,) = [r for r in verified.recorder.select("orders") if (r["order_id"], r["line_no"]) == (4, 2)]
    source_sql(verified, f"update {DATABASE}.orders set note = 'by hand' where order_id = 4 and line_no = 2")
    lake = verified.lakes["schemas"]
    lake._activate()
    monkeypatch.setenv("CDC_LAKE_SOURCE_PASSWORD", PASSWORD)
    code = cli.main(["verify", "--source", str(verify_url(verified)), "--tables", f"{DATABASE}.orders",
                     "--source-system", VERIFIED, "--output", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    (orders,) = report["tables"]
    # no binlog event for it: a real difference, not one in flight
    assert (orders["status"], orders["differing_keys"], orders["changes_in_flight"]) == ("different", 1, 0)
    assert orders["samples"] == [{"key": "order_id=4, line_no=2", "kind": "values_differ",
                                  "columns": {"note": {"source": "by hand", "lake": row["note"]}}}]
    assert report["equal"] is False


def test_verify_counts_keyless_duplicates(verified):
    before = run_verify(verified, ["events_nokey"])["events_nokey"]
    source_sql(verified, f"insert into {DATABASE}.events_nokey values ('click', 1)")
    result = run_verify(verified, ["events_nokey"])["events_nokey"]
    assert before.status == "equal"
    assert (result.status, result.source_rows, result.lake_rows) == ("different", before.source_rows + 1,
                                                                     before.lake_rows)
    assert [(d.key, d.kind) for d in result.differences] == [("row(kind=click, amount=1)", "missing_in_lake")]


def test_verify_finds_a_row_deleted_from_the_lake_and_one_in_flight(verified, monkeypatch):
    # buckets of a few rows, so that 2,000 rows take a level of bisection before the pull
    monkeypatch.setattr(compare, "PULL_ROWS", 32)
    lake = verified.lakes["schemas"]
    lake.spark.sql(
        f"delete from {lake.schema}.cdc_history where source_system = '{VERIFIED}' and table_name = 'bulk' "
        "and primary_key['id'] = '17'"
    )
    result = run_verify(verified, ["bulk"])["bulk"]
    assert (result.status, result.differing_keys, result.lake_rows) == ("different", 1, result.source_rows - 1)
    assert [(d.key, d.kind) for d in result.differences] == [("id=17", "missing_in_lake")]
    # bisection: the whole table, then 256 buckets, then the rows of the one that differs
    assert result.scans == 3
    # a change the connector sends but the lake has not landed yet: in flight, not wrong
    with verified.server.connect(DATABASE) as conn, conn.cursor() as cursor:
        cursor.execute(f"update {DATABASE}.bulk set v = 'moved' where id = 18")
    result = run_verify(verified, ["bulk"])["bulk"]
    assert (result.status, result.differing_keys) == ("in_flight", 2)
    assert result.in_flight >= 1
    assert [d.key for d in result.differences] == ["id=17", "id=18"]


def test_verify_as_of_landed_builds_first(verified, monkeypatch, capsys):
    """Once the in-flight change is landed, `--as-of-landed` builds it before comparing: only the
    row deleted from the lake still differs, and nothing is in flight.

    The command's `dbt` command line (the venv's dbt) runs in this process, dbt in-process on the
    test session's warm Spark, instead of a child process with a cold JVM (which cost a minute):
    what is under test is that verify builds first, and what it builds then."""
    verified.recorder.mark(3)
    wait_for_marker(verified, VERIFIED, 3)
    consume_group(verified, "schemas")
    lake = verified.lakes["schemas"]
    monkeypatch.setenv("CDC_LAKE_SOURCE_PASSWORD", PASSWORD)
    commands: list[list[str]] = []
    real_run = subprocess.run

    def run(command, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not (isinstance(command, list) and Path(command[0]).name == "dbt"):
            return real_run(command, *args, **kwargs)
        commands.append(command)
        assert Path(command[0]) == Path(sys.executable).parent / "dbt" and os.access(command[0], os.X_OK), command
        args = command[1:]
        if "--project-dir" in args:  # invoke_dbt names the project itself
            at = args.index("--project-dir")
            assert args[at + 1] == str(lake.project_dir), args
            del args[at:at + 2]
        lake._activate()
        result = invoke_dbt(Path(lake.project_dir), args, expect_success=False)
        return subprocess.CompletedProcess(command, 0 if result.success else 1)

    monkeypatch.setattr(subprocess, "run", run)
    code = cli.main(["verify", "--source", str(verify_url(verified)), "--tables", "bulk", "--source-system",
                     VERIFIED, "--as-of-landed", "--project-dir", str(lake.project_dir), "--output", "json"])
    # the report is the command's stdout after dbt's lines: its JSON from the last line "{"
    out = capsys.readouterr().out
    (bulk,) = json.loads(out[out.rindex("\n{\n") + 1:] if "\n{\n" in out else out)["tables"]
    assert [c[1:4] for c in commands] == [["run", "--select", "+cdc_current"]]
    assert code == 1
    assert (bulk["status"], bulk["differing_keys"], bulk["changes_in_flight"]) == ("different", 1, 0)
    assert [d["key"] for d in bulk["samples"]] == ["id=17"]
