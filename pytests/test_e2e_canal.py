"""End to end with Alibaba Canal: MariaDB → Canal server (FlatMessage JSON) → Kafka → cdc_lake.

A MariaDB server, the KRaft broker and Canal's server (`cdc_lake.testing.canal_server`, Canal 1.1.4 with
`canal.mq.flatMessage=true`) start on free loopback ports in a temporary folder and stop whatever
happens. Canal 1.1.4 cannot parse the CREATE/DROP TABLE events of MariaDB 10.6+, so the tables are
created before it starts (it begins at the binlog's end); after that the workload changes rows and
truncates tables, and changes no columns. Canal runs in Asia/Shanghai, the zone it renders
TIMESTAMP values in, and the build gets it as the `source_time_zone` var.

Two rounds: changes while Canal streams, then (after the first build) more changes on the same
rows. The statements run back to back, so Canal puts many of them in one batch: messages that
share `id` and `es` (whole seconds), told apart only by their Kafka offsets. Each round ends with
a marker row; once Canal sent it, everything before it is in the topic (one partition, sent in
binlog order). The topic is consumed (`cdc-lake consume`'s function, format `canal_flat`) and
built with dbt. The truth is MariaDB's own `SELECT *`. After each build every table's live rows in
`cdc_current` (canonical text, `docs/canonical_values.md`; keyless tables as multisets through
`row_count`) and its typed `e2e__<table>_current` view equal `SELECT *`; `cdc_schema_changes`
holds each TRUNCATE once, in order; `cdc_rejected_messages` is empty; `cdc_reconciliation`
accounts for every record.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cdc_lake import cli
from cdc_lake.consume import ConsumeSettings, TopicRule, consume
from cdc_lake.servers.kafka_broker import LocalKafka, wait_for_message
from cdc_lake.testing.canal_server import MAX_RECORD_BYTES, CanalServer
from cdc_lake.testing.e2e_workload import (
    DATABASE,
    MEGABYTE_TEXT,
    ROW_MAX,
    ROW_MIN,
    ROW_NULLS,
    ROW_TEXT,
    Recorder,
    Transaction,
    create_tables,
    insert,
)
from cdc_lake.testing.harness import DbtFailure, Lake, copy_project
from cdc_lake.testing.mariadb import PASSWORD, USER, LocalMariaDB
from cdc_lake.testing.mysql_values import canonical, ddl_text, diff, mysql_columns, rows_match, typed_lake, typed_truth

pytestmark = pytest.mark.e2e

TOPIC = "canal.e2e"
TABLES = ["types", "orders", "events_nokey", "truncated", "sync_marker"]
# Canal renders TIMESTAMP in its JVM's zone: not UTC, so the conversion is exercised
CANAL_TIME_ZONE = "Asia/Shanghai"
BUILD_VARS = json.dumps({"source_time_zone": CANAL_TIME_ZONE})
# what a round's build leaves out: the typed views of the demo's shop tables (the project's own,
# empty here) and the monitoring models no check reads (each with its tests)
NOT_COMPARED = ["marts.tables.shop__*", "cdc_lag", "cdc_consumer_lag", "cdc_verification"]


def with_id(row: list[str], key: int) -> list[str]:
    return [str(key), *row[1:]]


def tables_round() -> list[Transaction]:
    """Before Canal starts (it cannot parse CREATE TABLE events of MariaDB 10.6+)."""
    return create_tables(["types", "orders", "events_nokey", "truncated", "sync_marker"])


def streaming_round() -> list[Transaction]:
    db = DATABASE
    return [
        Transaction([insert("types", [ROW_MIN, ROW_MAX])], ["types"], label="extremes, one statement"),
        Transaction([insert("types", [ROW_NULLS, ROW_TEXT])], ["types"], label="nulls and text"),
        Transaction([f"insert into {db}.types (id, c_mediumtext, c_varchar) values (5, '{MEGABYTE_TEXT}', 'big')"],
                    ["types"], label="1 MB mediumtext"),
        Transaction([
            insert("orders", [[str(o), str(n), str(n), f"{n}.50", "'first'"] for o in (1, 2) for n in (1, 2)]),
            insert("events_nokey", [["'click'", "1"], ["'click'", "1"], ["'view'", "null"]]),
            insert("truncated", [["1", "'a'"], ["2", "'b'"]]),
        ], ["orders", "events_nokey", "truncated"], label="three tables, identical keyless rows"),
        Transaction([f"update {db}.orders set qty = qty + 10, note = 'multi' where order_id = 1"], ["orders"]),
        Transaction([
            insert("orders", [["3", "1", "7", "70.00", "'new'"], ["3", "2", "8", "80.00", "null"]]),
            # row 3 of the first insert: deleted by row 0 of a later message
            f"delete from {db}.orders where order_id = 2 and line_no = 2",
            f"update {db}.types set c_int = 42, c_varchar = 'updated ✓', c_json = '{{\"u\": true}}' where id = 4",
            insert("events_nokey", [["'click'", "1"], ["'buy'", "5"]]),
        ], ["orders", "types", "events_nokey"], label="multi-statement"),
        # a key change is one UPDATE message whose `old` holds the old key
        Transaction([f"update {db}.types set id = 40 where id = 4"], ["types"], label="key change"),
        Transaction([f"update {db}.orders set line_no = 9 where order_id = 3 and line_no = 2"], ["orders"]),
        # the same change twice in one transaction: two statements inserting the same keyless row; a
        # value switched on and off twice (the second on -> off is the first one's copy). Canal sends
        # each pair as two byte-identical messages (one batch: same `id`, `es`, even `ts`)
        Transaction([
            insert("events_nokey", [["'twice'", "2"]]),
            insert("events_nokey", [["'twice'", "2"]]),
            *(f"update {db}.orders set note = '{note}' where order_id = 3 and line_no = 1"
              for note in ("on", "off", "on", "off")),
        ], ["events_nokey", "orders"], label="one change twice"),
        # keyless: one of three identical rows goes; a row is updated
        Transaction([f"delete from {db}.events_nokey where kind = 'click' limit 1"], ["events_nokey"]),
        Transaction([f"update {db}.events_nokey set amount = 2 where kind = 'view'"], ["events_nokey"]),
        # over 24 h; not exactly 100 h, which Canal 1.1.4 itself sends as 00:00:00.5 (docs/formats.md)
        Transaction([f"update {db}.types set c_timestamp = '2000-06-15 12:00:00.000001', c_time = '101:00:00.5', "
                     "c_float = -0.0001, c_double = 1e-300, c_decimal = -0.5 where id = 2"], ["types"]),
        Transaction([f"delete from {db}.types where id = 1"], ["types"], label="delete"),
        Transaction([f"update {db}.types set c_mediumtext = 'small now' where id = 5"], ["types"]),
        # one row changed several times in one transaction, a key deleted and inserted again
        Transaction([
            f"insert into {db}.types (id, c_varchar) values (6, 'born')",
            f"update {db}.types set c_varchar = 'grown', c_int = 6 where id = 6",
            f"delete from {db}.types where id = 3",
            insert("types", [ROW_NULLS]),
        ], ["types"], label="churn in one transaction"),
        Transaction([f"truncate table {db}.truncated"], ["truncated"], ddl=True),
        Transaction([insert("truncated", [["2", "'after'"], ["3", "'after'"]])], ["truncated"]),
    ]


def incremental_round() -> list[Transaction]:
    """After the first build: more changes on the same rows."""
    db = DATABASE
    return [
        Transaction([insert("types", [with_id(ROW_TEXT, 1)])], ["types"], label="re-insert a deleted key"),
        Transaction([f"update {db}.types set c_bit64 = b'1{'0' * 63}', c_bigint_u = 9223372036854775808, "
                     "c_set = 'b', c_enum = null, c_geometry = null where id = 2"], ["types"]),
        Transaction([f"update {db}.types set c_tinyint = 0, c_time = '23:59:59.999999' where id in (3, 40)",
                     f"delete from {db}.types where id = 5"], ["types"]),
        Transaction([f"update {db}.orders set order_id = 4 where order_id = 1"], ["orders"], label="key change"),
        Transaction([insert("events_nokey", [["'click'", "1"], ["'click'", "1"]])], ["events_nokey"]),
        Transaction([f"delete from {db}.truncated where id = 2"], ["truncated"]),
        Transaction([f"update {db}.truncated set v = 'again' where id = 3"], ["truncated"]),
        # a keyless table reset, then identical rows again
        Transaction([f"truncate table {db}.events_nokey"], ["events_nokey"], ddl=True),
        Transaction([insert("events_nokey", [["'after'", "1"], ["'after'", "1"]])], ["events_nokey"]),
    ]


# ----------------------------------------------------------------------------------- fixtures


@dataclass
class CanalE2E:
    server: LocalMariaDB
    recorder: Recorder
    canal: CanalServer
    broker: LocalKafka
    lake: Lake
    folder: Path
    # DDL statements run before Canal started (not in Kafka)
    ddl_before_canal: int = 0
    build_failure: str = ""
    timings: dict[str, float] = field(default_factory=dict)


@pytest.fixture(scope="module")
def e2e(spark) -> Iterator[CanalE2E]:
    os.environ["TZ"] = "UTC"  # Spark hands timestamps to Python in the local zone
    time.tzset()
    folder = Path(tempfile.mkdtemp(prefix="cdc_lake_e2e_canal_"))
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, folder, ignore_errors=True)
        (folder / "project").mkdir()
        project = copy_project(folder / "project")
        for table in TABLES:
            assert cli.main(["add-table", DATABASE, table, "--no-lake", "--project-dir", str(project)]) == 0
        started = time.monotonic()
        broker = stack.enter_context(LocalKafka(folder / "kafka", heap="256m"))
        broker.create_topic(TOPIC, partitions=1, config={"max.message.bytes": str(MAX_RECORD_BYTES)})
        server = stack.enter_context(LocalMariaDB(folder / "mariadb"))
        recorder = Recorder(server.connect())
        recorder.run(tables_round())
        canal = stack.enter_context(CanalServer(
            folder / "canal", mariadb_port=server.port, user=USER, password=PASSWORD, bootstrap=broker.bootstrap,
            topic=TOPIC, filter_regex=rf"{DATABASE}\..*", slave_id=5500, time_zone=CANAL_TIME_ZONE,
        ))
        lake = Lake(spark, "t_e2e_canal")
        lake.project_dir = project
        lake.drop()
        stack.callback(lake.drop)
        state = CanalE2E(server, recorder, canal, broker, lake, folder, ddl_before_canal=len(recorder.ddl_statements))
        state.timings["servers"] = time.monotonic() - started
        yield state


def run_round(state: CanalE2E, round_no: int, transactions: list[Transaction]) -> None:
    """Run SQL, wait until Canal sent it, consume and build. A failed build is recorded, not
    raised, so the comparisons still say what differs."""
    started = time.monotonic()
    state.recorder.run(transactions)
    state.recorder.mark(round_no)
    wait_for_marker(state, round_no)
    state.timings[f"round {round_no}: SQL and capture"] = time.monotonic() - started
    state.lake._activate()
    started = time.monotonic()
    consume(state.lake.spark, ConsumeSettings(
        bootstrap_servers=state.broker.bootstrap,
        rules=[TopicRule("canal_flat", topics=[TOPIC])],
        checkpoint_root=state.folder / "checkpoints",
    ), progress=None)
    state.timings[f"round {round_no}: consume"] = time.monotonic() - started
    started = time.monotonic()
    try:
        state.lake.build("--vars", BUILD_VARS, exclude=NOT_COMPARED)
    except DbtFailure as failure:
        state.build_failure = str(failure)
    state.timings[f"round {round_no}: dbt build"] = time.monotonic() - started
    print({k: round(v, 1) for k, v in state.timings.items()})


def wait_for_marker(state: CanalE2E, round_no: int, timeout: float = 300.0) -> None:
    """Canal sends the binlog in order to the topic's one partition: once the marker row is there,
    so is every change committed before it."""

    def is_marker(value: dict) -> bool:
        return value.get("table") == "sync_marker" and any(
            row.get("round_no") == str(round_no) for row in value.get("data") or []
        )

    if not wait_for_message(state.broker.bootstrap, TOPIC, is_marker, timeout=timeout,
                            while_alive=state.canal.check_alive):
        raise AssertionError(f"round {round_no} not captured within {timeout:.0f}s: {state.canal.log_tail()}")


@pytest.fixture(scope="module")
def round1(e2e) -> CanalE2E:
    run_round(e2e, 1, streaming_round())
    return e2e


@pytest.fixture(scope="module")
def round2(round1) -> CanalE2E:
    run_round(round1, 2, incremental_round())
    return round1


# ----------------------------------------------------------------------------------- comparisons


def compare_current(state: CanalE2E, table: str) -> list[str]:
    """Live rows of `cdc_current` (canonical text) and of the typed view vs SELECT *, as multisets."""
    columns = mysql_columns(state, table)
    truth = state.recorder.select(table)
    problems: list[str] = []
    text_truth = Counter(tuple((c, canonical(r[c], t)) for c, (t, _) in columns.items()) for r in truth)
    text_lake: Counter = Counter()
    for row in state.lake.rows(
        f"select image, row_count from {{schema}}.cdc_current where source_system = '{TOPIC}' "
        f"and database_name = '{DATABASE}' and table_name = '{table}' and not is_deleted"
    ):
        text_lake[tuple((c, (row["image"] or {}).get(c)) for c in columns)] += row["row_count"]
    if text_truth != text_lake:
        problems.append(f"{table}: cdc_current differs from SELECT *:\n  only in MariaDB: {diff(text_truth, text_lake)}"
                        f"\n  only in the lake: {diff(text_lake, text_truth)}")
    typed_rows = Counter(tuple((c, typed_truth(r[c], t)) for c, (t, _) in columns.items()) for r in truth)
    view = state.lake.rows(f"select * from {{schema}}.{DATABASE}__{table}_current where source_system = '{TOPIC}'")
    typed_view = Counter(tuple((c, typed_lake(r.get(c), t)) for c, (t, _) in columns.items()) for r in view)
    if not rows_match(typed_rows, typed_view, columns):
        problems.append(f"{table}: typed view differs from SELECT *:\n  only in MariaDB: {diff(typed_rows, typed_view)}"
                        f"\n  only in the lake: {diff(typed_view, typed_rows)}")
    return problems


def compare_schema_changes(state: CanalE2E) -> list[str]:
    """Every DDL statement run while Canal streamed (the TRUNCATEs) is there once, in order, as a TRUNCATE."""
    found = state.lake.rows(
        f"select ddl_type, table_name, ddl_statement from {{schema}}.cdc_schema_changes "
        f"where source_system = '{TOPIC}' order by change_order"
    )
    expected = [ddl_text(s) for s in state.recorder.ddl_statements[state.ddl_before_canal:]]
    texts = [ddl_text(r["ddl_statement"]) for r in found]
    if texts != expected or any(r["ddl_type"] != "TRUNCATE" for r in found):
        return [f"schema changes: expected {expected} (TRUNCATE), found {found}"]
    return []


def check(state: CanalE2E) -> None:
    problems = [state.build_failure] if state.build_failure else []
    for table in TABLES:
        problems += compare_current(state, table)
    problems += compare_schema_changes(state)
    rejected = state.lake.rows(
        "select kafka_offset, reject_reason, substr(raw_value, 1, 600) as raw_value "
        "from {schema}.cdc_rejected_messages"
    )
    if rejected:
        problems.append(f"rejected: {rejected[:5]}")
    unaccounted = state.lake.rows("select * from {schema}.cdc_reconciliation where unaccounted_records != 0")
    if unaccounted:
        problems.append(f"unaccounted: {unaccounted}")
    if problems:
        print("\n" + "\n".join(problems), flush=True)  # seen before the next round runs
    assert not problems, "\n".join(problems)


def test_round1_streaming(round1):
    check(round1)


def test_round2_incremental(round2):
    check(round2)
