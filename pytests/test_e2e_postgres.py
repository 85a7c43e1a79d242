"""End to end with a real PostgreSQL producer (issue 68): PostgreSQL → Debezium (pgoutput, Kafka
Connect) → Kafka → `cdc-lake consume` → `dbt build`, compared with PostgreSQL's own `SELECT *`.

A PostgreSQL 15 server (Debian's postgresql, own initdb, wal_level=logical), the KRaft broker and
a Kafka Connect standalone worker running Debezium's PostgreSQL connector start on free loopback
ports in temporary folders and stop whatever happens. The workload (`cdc_lake.testing.pg_workload`)
runs in two databases of the server: `e2e` keeps each table's replica identity (DEFAULT, FULL
where the table says so) and `e2e_full` sets every table to FULL, because replica identity is a
table's setting, not a connector's. It runs in three rounds: before the connectors start (their
initial snapshot), while they stream, and after the first build (incremental; with a Debezium
incremental snapshot of one table whose chunk window has changes of that table inside it: the
signaling table `public.debezium_signal` is captured and lands as an ordinary table). One connector per
setting variant reads its database into its own topics (`<variant>.<schema>.<table>`, its own
slot and publication); all variants land in one lake (`source_system` = the variant) through
`cdc-lake consume`'s function and are built with dbt.

The truth is PostgreSQL's own text of every value (its output function's), read after every committed
transaction, turned into the lake's canonical text by `cdc_lake.testing.pg_values` (the one place
that says what the lake should hold per PostgreSQL type). After each build, per variant: every
table's live rows in `cdc_current` (database_name `<db>.<schema>`, `image` the canonical text)
equal `SELECT *`; `cdc_history` holds one version per committed row state, in commit order, the
last one open exactly when the row exists; `cdc_rejected_messages` is empty; `cdc_reconciliation`
accounts for every record. Values a Debezium setting cannot carry (`pg_values.cannot_carry`) are
left out of the comparison and listed.

`CDC_LAKE_E2E=ci` (CI: `make e2e-ci`) runs Debezium's defaults plus one combined variant (FULL
identity, string decimals, connect time precision, no schemas) with a 2,000-row transaction;
`CDC_LAKE_E2E=full` (`make e2e`) the whole matrix and a 100,000-row transaction.
`CDC_LAKE_E2E_PG_SAMPLE=<file>` writes every record the connectors sent, as `kcat -C -J` lines
(how pytests/fixtures/postgres/debezium_pg_sample.jsonl is made).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cdc_lake.consume import ConsumeSettings, TopicRule, consume
from cdc_lake.servers.kafka_broker import LocalKafka, wait_for_message
from cdc_lake.testing import pg_values
from cdc_lake.testing.harness import TYPED_TABLES, DbtFailure, Lake, copy_project
from cdc_lake.testing.kafka_connect import KafkaConnect, debezium_postgres
from cdc_lake.testing.pg_values import PgType
from cdc_lake.testing.pg_workload import (
    SCHEMAS,
    SIGNAL_TABLE,
    TABLES,
    TOASTED,
    Recorder,
    incremental_round,
    setup_round,
    snapshot_round,
    streaming_round,
)
from cdc_lake.testing.postgresql import PASSWORD, USER, LocalPostgres
from cdc_lake.verify.compare import TableResult
from cdc_lake.verify.postgres import PostgresUrl
from cdc_lake.verify.run import verify

pytestmark = pytest.mark.e2e

MODE = os.environ.get("CDC_LAKE_E2E", "ci")
LARGE_ROWS = 100_000 if MODE == "full" else 2_000
DATABASES = {"e2e": False, "e2e_full": True}  # database -> every table REPLICA IDENTITY FULL


@dataclass
class Variant:
    """One Debezium setting combination: a connector, slot and publication of its own, topics
    `<name>.*`, reading `database` (its tables' replica identity)."""

    name: str
    database: str = "e2e"
    schemas_enable: bool = True
    settings: dict[str, str] = field(default_factory=dict)
    publication_mode: str = "filtered"

    def compared(self, columns: list[tuple[str, PgType]]) -> list[tuple[str, PgType]]:
        """The columns this variant's records carry as canonical text: all of them with schemas;
        without, only those whose JSON form is already that text (docs/formats.md)."""
        if self.schemas_enable:
            return columns
        return [(c, t) for c, t in columns if pg_values.sent_as_canonical(t, self.settings)]


# skipped.operations=none: TRUNCATE reaches Kafka (an op `t` record; Debezium skips it by default);
# signal.data.collection: the table whose `execute-snapshot` rows start an incremental snapshot
BASE = {"skipped.operations": "none", "signal.data.collection": SIGNAL_TABLE}
VARIANTS = [
    Variant("pg_default", settings={**BASE}),
    Variant("pg_combined", database="e2e_full", schemas_enable=False, settings={
        **BASE, "decimal.handling.mode": "string", "time.precision.mode": "connect"}),
    Variant("pg_full", database="e2e_full", settings={**BASE}, publication_mode="all_tables"),
    Variant("pg_string_connect", settings={
        **BASE, "decimal.handling.mode": "string", "time.precision.mode": "connect"}),
    Variant("pg_noschema", schemas_enable=False, settings={**BASE}),
]
if MODE != "full":
    VARIANTS = VARIANTS[:2]
# a developer's shortcut: CDC_LAKE_E2E_VARIANTS=pg_default runs only the named variants
if os.environ.get("CDC_LAKE_E2E_VARIANTS"):
    VARIANTS = [v for v in VARIANTS if v.name in os.environ["CDC_LAKE_E2E_VARIANTS"].split(",")]
USED_DATABASES = sorted({v.database for v in VARIANTS})


# ----------------------------------------------------------------------------------- fixtures


@dataclass
class E2E:
    server: LocalPostgres
    recorders: dict[str, Recorder]
    worker: KafkaConnect
    broker: LocalKafka
    lake: Lake
    folder: Path
    # per database: transactions committed before its connectors' snapshot
    snapshot_txns: dict[str, int] = field(default_factory=dict)
    build_failure: str | None = None
    timings: dict[str, float] = field(default_factory=dict)


@pytest.fixture(scope="module")
def e2e(spark) -> Iterator[E2E]:
    os.environ["TZ"] = "UTC"
    time.tzset()
    folder = Path(tempfile.mkdtemp(prefix="cdc_lake_e2e_pg_"))
    broker = LocalKafka(folder / "kafka")
    (folder / "project").mkdir()
    project = copy_project(folder / "project")
    server = LocalPostgres(folder / "postgres")
    worker: KafkaConnect | None = None
    recorders: dict[str, Recorder] = {}
    lake: Lake | None = None
    try:
        started = time.monotonic()
        broker.start()
        server.start()
        for database in USED_DATABASES:
            server.create_database(database)
            recorders[database] = Recorder(server, database,
                                           connectors=sum(v.database == database for v in VARIANTS))
            recorders[database].run(setup_round(DATABASES[database]))
            recorders[database].run(snapshot_round())
        connectors = [
            debezium_postgres(
                v.name, topic_prefix=v.name, port=server.port, user=USER, password=PASSWORD, database=v.database,
                schemas=SCHEMAS, schemas_enable=v.schemas_enable, publication_mode=v.publication_mode,
                settings=v.settings,
            )
            for v in VARIANTS
        ]
        worker = KafkaConnect(folder / "connect", broker.bootstrap, connectors).start()
        worker.wait_running()
        snapshot_txns = {database: recorder.committed for database, recorder in recorders.items()}
        wait_for_snapshots(recorders, worker, broker.bootstrap)
        lake = Lake(spark, "t_e2e_postgres")
        lake.project_dir = project
        lake.drop()
        state = E2E(server, recorders, worker, broker, lake, folder, snapshot_txns=snapshot_txns)
        state.timings["servers and snapshot"] = time.monotonic() - started
        yield state
        if os.environ.get("CDC_LAKE_E2E_PG_SAMPLE"):
            dump_topics(broker.bootstrap, Path(os.environ["CDC_LAKE_E2E_PG_SAMPLE"]))
    finally:
        if worker is not None:
            worker.stop()
        for recorder in recorders.values():
            recorder.close()
        server.stop()
        broker.stop()
        if lake is not None:
            lake.drop()
        shutil.rmtree(folder, ignore_errors=True)


def marker_change(value: dict) -> tuple[str | None, int | None]:
    """The op and round number of a change of the marker row (the envelope with or without schemas)."""
    payload = value.get("payload", value)
    return payload.get("op"), (payload.get("after") or {}).get("round_no")


def marker_topic(variant: Variant) -> str:
    return f"{variant.name}.public.sync_marker"


def wait_for_snapshots(recorders: dict[str, Recorder], worker: KafkaConnect, bootstrap: str,
                       timeout: float = 600.0) -> None:
    """A connector reported RUNNING may still be snapshotting. It streams only after its snapshot:
    once a marker change arrives as a streamed change (not a snapshot read), the snapshot is done.
    A marker the snapshot read instead is followed by a new one (0, -1, ...: each a real change)."""
    deadline = time.monotonic() + timeout
    waiting = list(VARIANTS)
    for mark in itertools.count(0, -1):
        for recorder in recorders.values():
            recorder.mark(mark)

        def is_streamed_mark(value: dict, mark: int = mark) -> bool:
            op, round_no = marker_change(value)
            return op in ("c", "u") and round_no == mark

        waiting = [v for v in waiting if not wait_for_message(
            bootstrap, marker_topic(v), is_streamed_mark, timeout=20.0, while_alive=worker.check_alive)]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{[v.name for v in waiting]}: snapshot not done within {timeout:.0f}s: "
                                 f"{worker.log_tail()}")


def wait_for_marker(state: E2E, variant: Variant, round_no: int, timeout: float = 600.0) -> None:
    """Debezium sends changes in commit order: once the marker row's change is in Kafka, so is
    everything committed before it (records of other topics get a moment to be acknowledged)."""
    if not wait_for_message(state.broker.bootstrap, marker_topic(variant),
                            lambda value: marker_change(value)[1] == round_no,
                            timeout=timeout, while_alive=state.worker.check_alive):
        raise AssertionError(f"{variant.name}: round {round_no} not captured within {timeout:.0f}s: "
                             f"{state.worker.log_tail()}")


def run_round(state: E2E, round_no: int, steps: list) -> None:
    """Run the SQL in every database, wait until every connector sent it, then consume and build.
    A failed build is recorded, not raised, so the comparisons still say what differs."""
    started = time.monotonic()
    for recorder in state.recorders.values():
        recorder.run(steps)
        recorder.mark(round_no)
    for variant in VARIANTS:
        wait_for_marker(state, variant, round_no)
    time.sleep(2.0)
    state.timings[f"round {round_no}: SQL and capture"] = time.monotonic() - started
    started = time.monotonic()
    state.lake._activate()
    consume(state.lake.spark, ConsumeSettings(
        bootstrap_servers=state.broker.bootstrap,
        rules=[TopicRule("debezium", patterns=[rf"(?:{'|'.join(v.name for v in VARIANTS)})\..*"])],
        checkpoint_root=state.folder / "checkpoints",
    ), progress=None)
    state.timings[f"round {round_no}: consume"] = time.monotonic() - started
    started = time.monotonic()
    try:
        # no typed per-table views: the PostgreSQL tables have none, the demo's would build empty;
        # nor the monitoring models no check reads (each with its tests)
        state.lake.build(typed_tables=False, exclude=["cdc_lag", "cdc_consumer_lag", "cdc_verification"])
        state.build_failure = None
    except DbtFailure as failure:
        state.build_failure = str(failure)
        # a failed data test skips the models downstream of it: run them anyway, so that the
        # comparisons still say what the lake holds (the failure is reported all the same)
        try:
            state.lake.dbt("run", "--exclude", TYPED_TABLES)
        except DbtFailure as run_failure:
            state.build_failure += f"\nand dbt run failed too: {run_failure}"
    state.timings[f"round {round_no}: dbt build"] = time.monotonic() - started
    print({k: round(v, 1) for k, v in state.timings.items()}, flush=True)


def dump_topics(bootstrap: str, path: Path) -> None:
    """Every record of the variants' topics as `kcat -C -J` lines with headers (a large
    transaction cut to its first 3 and last 2 records per topic)."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient

    names = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics
    topics = sorted(t for t in names if t.split(".", 1)[0] in {v.name for v in VARIANTS} and t.count(".") == 2)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cdc-lake-dump", "enable.auto.commit": False})
    with open(path, "w", encoding="utf-8") as out:
        for topic in topics:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
            consumer.assign([TopicPartition(topic, 0, low)])
            for number in range(high - low):
                message = consumer.poll(10)
                if message is None:
                    break
                if topic.endswith(".bulk") and 3 <= number < high - low - 2:
                    continue
                headers = message.headers() or []
                record: dict[str, Any] = {
                    "topic": topic, "partition": 0, "offset": message.offset(), "tstype": "create",
                    "ts": message.timestamp()[1], "broker": 0,
                    "key": None if message.key() is None else message.key().decode(),
                    "payload": None if message.value() is None else message.value().decode(),
                }
                if headers:
                    record["headers"] = [x for k, v in headers for x in (k, None if v is None else v.decode())]
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
    consumer.close()


# ----------------------------------------------------------------------------------- the truth


def table_types(state: E2E, database: str, table: str) -> list[tuple[str, PgType]]:
    """(column, type) of a table in column order, as PostgreSQL reports them."""
    conn = state.server.connect(database)
    try:
        cursor = conn.cursor()
        cursor.execute(
            "select a.attname, format_type(a.atttypid, a.atttypmod), t.typtype, t.typcategory "
            "from pg_attribute a join pg_type t on t.oid = a.atttypid "
            "where a.attrelid = %s::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum",
            (table,),
        )
        return [(name, PgType(data_type, kind, category)) for name, data_type, kind, category in cursor.fetchall()]
    finally:
        conn.close()


def primary_key(state: E2E, database: str, table: str) -> list[str]:
    conn = state.server.connect(database)
    try:
        cursor = conn.cursor()
        cursor.execute(
            "select a.attname from pg_index i join pg_attribute a on a.attrelid = i.indrelid "
            "and a.attnum = any(i.indkey) where i.indrelid = %s::regclass and i.indisprimary order by a.attnum",
            (table,),
        )
        return [row[0] for row in cursor.fetchall()]
    finally:
        conn.close()


@dataclass
class Expected:
    """One table's comparison for a variant: compared columns, and the cells left out (why)."""

    columns: list[tuple[str, PgType]]
    variant: Variant
    skipped: Counter = field(default_factory=Counter)

    def text(self, row: dict[str, str | None]) -> dict[str, str | None | tuple[str]]:
        """A truth row as the lake should hold it; an uncarried cell is a marker naming why."""
        out: dict[str, Any] = {}
        for column, pg_type in self.columns:
            value = row.get(column)
            reason = pg_values.cannot_carry(value, pg_type, self.variant.settings)
            if reason:
                self.skipped[(column, reason)] += 1
                out[column] = ("not carried",)
            else:
                exact = pg_values.canonical(value, pg_type)
                carried = pg_values.canonical(pg_values.carried(value, pg_type, self.variant.settings), pg_type)
                # a tolerance of Debezium's snapshot (money read through a double over JDBC) does
                # not apply to the streamed changes, which carry the exact value
                snapshot_only = pg_type.base == "money"
                out[column] = ("either", exact, carried) if snapshot_only and carried != exact else carried
        return out


def matches(expected: Any, actual: str | None) -> bool:
    """Whether the lake's value is the truth's: anything for an uncarried cell, one of the two for
    a value a Debezium tolerance may have changed."""
    if expected == ("not carried",):
        return True
    if isinstance(expected, tuple) and expected[:1] == ("either",):
        return actual in expected[1:]
    return actual == expected


def same(truth: dict[str, Any], image: dict[str, str | None]) -> list[str]:
    """The columns where the lake's image differs from the truth."""
    return [c for c, v in truth.items() if not matches(v, image.get(c))]


def short(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width] + f"...({len(text)} chars)"


def describe(columns: list[str], truth: dict[str, Any], image: dict[str, Any] | None) -> str:
    return "; ".join(f"{c}: truth {short(truth.get(c))} lake {short((image or {}).get(c))}" for c in columns)


# ----------------------------------------------------------------------------------- comparisons


def lake_database(variant: Variant, table: str) -> tuple[str, str]:
    schema, name = table.split(".")
    return f"{variant.database}.{schema}", name


def compare_current(state: E2E, variant: Variant, table: str) -> tuple[list[str], Counter]:
    """Live rows of cdc_current against SELECT *, by key (keyless tables: as multisets)."""
    database_name, table_name = lake_database(variant, table)
    expected = Expected(variant.compared(table_types(state, variant.database, table)), variant)
    truth_rows = [expected.text(r) for r in state.recorders[variant.database].select(table)]
    images = state.lake.rows(
        "select image, row_count from {schema}.cdc_current "
        f"where source_system = '{variant.name}' and database_name = '{database_name}' "
        f"and table_name = '{table_name}' and not is_deleted"
    )
    key = primary_key(state, variant.database, table)
    problems: list[str] = []
    if not key:
        names = [c for c, _ in expected.columns]
        truth_bag = Counter(tuple(r[c] for c in names) for r in truth_rows)
        lake_bag: Counter = Counter()
        for image in images:
            lake_bag[tuple((image["image"] or {}).get(c) for c in names)] += image["row_count"] or 1
        if truth_bag != lake_bag:
            problems.append(f"{table}: current rows differ (keyless, columns {names}): only in PostgreSQL "
                            f"{dict(truth_bag - lake_bag)}, only in the lake {dict(lake_bag - truth_bag)}")
        return problems, expected.skipped
    truth_by_key = {tuple(r[k] for k in key): r for r in truth_rows}
    lake_by_key: dict[tuple, dict] = {}
    for image in images:
        values = image["image"] or {}
        lake_by_key[tuple(values.get(k) for k in key)] = values
    for row_key in sorted(set(truth_by_key) | set(lake_by_key), key=str):
        truth, image = truth_by_key.get(row_key), lake_by_key.get(row_key)
        if truth is None:
            problems.append(f"{table} key {row_key}: in the lake's current state, not in PostgreSQL")
        elif image is None:
            problems.append(f"{table} key {row_key}: in PostgreSQL, not in the lake's current state")
        elif differing := same(truth, image):
            problems.append(f"{table} key {row_key}: current differs in {describe(differing, truth, image)}")
    return problems, expected.skipped


def truth_versions(state: E2E, variant: Variant, table: str, key: list[str],
                   expected: Expected) -> dict[tuple, list[dict]]:
    """Per key, the row states in commit order: a new state whenever a committed transaction left
    the row different (or brought it back). States from before the snapshot collapse into one."""
    recorder = state.recorders[variant.database]
    versions: dict[tuple, list[dict]] = {}
    previous: dict[tuple, dict] = {}
    for txn, rows in recorder.states.get(table, []):
        current = {tuple(r[k] for k in key): r for r in rows}
        for row_key, row in current.items():
            if previous.get(row_key) != row:
                chain = versions.setdefault(row_key, [])
                if txn <= state.snapshot_txns[variant.database] and chain:
                    chain[-1] = row
                else:
                    chain.append(row)
        previous = current
    return {tuple(expected.text(chain[0])[k] for k in key): [expected.text(r) for r in chain]
            for chain in versions.values()}


def compare_history(state: E2E, variant: Variant, table: str) -> list[str]:
    key = primary_key(state, variant.database, table)
    if not key:
        return []  # keyless tables are multisets: compared through their current state
    database_name, table_name = lake_database(variant, table)
    expected = Expected(variant.compared(table_types(state, variant.database, table)), variant)
    if any(k not in dict(expected.columns) for k in key):
        return []
    history = state.lake.rows(
        "select image, is_current, op from {schema}.cdc_history "
        f"where source_system = '{variant.name}' and database_name = '{database_name}' "
        f"and table_name = '{table_name}' order by change_order"
    )
    found: dict[tuple, list[dict]] = {}
    for version in history:
        image = version["image"] or {}
        found.setdefault(tuple(image.get(k) for k in key), []).append(version)
    truth = truth_versions(state, variant, table, key, expected)
    live = {tuple(expected.text(r)[k] for k in key) for r in state.recorders[variant.database].select(table)}
    problems = []
    for row_key in sorted(set(truth) | set(found), key=str):
        truth_chain, lake_chain = truth.get(row_key, []), found.get(row_key, [])
        differing = [same(t, v["image"] or {}) for t, v in zip(truth_chain, lake_chain, strict=False)]
        if len(truth_chain) != len(lake_chain) or any(differing):
            first = next((i for i, d in enumerate(differing) if d), None)
            detail = (f"; version {first + 1} differs in "
                      f"{describe(differing[first], truth_chain[first], lake_chain[first]['image'])}"
                      if first is not None else "")
            problems.append(f"{table} key {row_key}: PostgreSQL {len(truth_chain)} states, lake "
                            f"{len(lake_chain)} versions (ops {[v['op'] for v in lake_chain]}){detail}")
        elif lake_chain and lake_chain[-1]["is_current"] != (row_key in live):
            # a TRUNCATE closes the version although no row change names the row
            problems.append(f"{table} key {row_key}: last version is_current={lake_chain[-1]['is_current']}, "
                            f"but the row {'exists' if row_key in live else 'is gone'} in PostgreSQL")
    return problems


def kafka_records(bootstrap: str, prefix: str) -> dict[str, tuple[int, int, int]]:
    """Per topic of a connector: (records, tombstones, TRUNCATEs) in Kafka now, read from the broker:
    every topic's records up to its end offset, all topics assigned at once (one by one, each
    assignment's first fetch made the reading take seconds a topic)."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient

    names = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cdc-lake-count", "enable.auto.commit": False})
    try:
        ends = {topic: consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
                for topic in sorted(t for t in names if t.startswith(f"{prefix}."))}
        counts = {topic: [high - low, 0, 0] for topic, (low, high) in ends.items()}
        left = {topic: high - low for topic, (low, high) in ends.items() if high > low}
        consumer.assign([TopicPartition(topic, 0, ends[topic][0]) for topic in left])
        while left:
            message = consumer.poll(10)
            if message is None:
                raise AssertionError(f"fewer records than their end offsets: {left} not read")
            topic = message.topic()
            if message.error() or topic not in left or message.offset() >= ends[topic][1]:
                continue
            if message.value() is None:
                counts[topic][1] += 1
            else:
                value = json.loads(message.value())
                counts[topic][2] += value.get("payload", value).get("op") == "t"
            left[topic] -= 1
            if not left[topic]:
                del left[topic]
    finally:
        consumer.close()
    return {topic: (records, tombstones, truncates) for topic, (records, tombstones, truncates) in counts.items()}


def compare_reconciliation(state: E2E, variant: Variant) -> list[str]:
    """Nothing lost: per topic, cdc_reconciliation counts every record Kafka holds: tombstones as
    control records, TRUNCATEs (op `t`) as DDL (as MySQL's TRUNCATE TABLE is), the rest as DML;
    nothing rejected, filtered or unaccounted, no offset gap, nothing awaiting a build."""
    expected = {
        topic: {"raw_records": records, "dml_messages": records - tombstones - truncates,
                "control_messages": tombstones, "ddl_messages": truncates, "rejected_messages": 0,
                "filtered_messages": 0, "unaccounted_records": 0, "offset_gaps": 0, "awaiting_build_records": 0}
        for topic, (records, tombstones, truncates) in kafka_records(state.broker.bootstrap, variant.name).items()
    }
    found = {
        row.pop("kafka_topic"): row
        for row in state.lake.rows(
            f"select kafka_topic, {', '.join(next(iter(expected.values())))} from {{schema}}.cdc_reconciliation "
            f"where kafka_topic like '{variant.name}.%'"
        )
    }
    return [f"reconciliation of {topic}: expected {want}, found {found.get(topic)}"
            for topic, want in sorted(expected.items()) if found.get(topic) != want] + [
        f"reconciliation of {topic}: not in Kafka" for topic in sorted(set(found) - set(expected))]


def check_variant(state: E2E, variant: Variant) -> None:
    problems: list[str] = []
    skipped: Counter = Counter()
    if state.build_failure:
        problems.append(f"dbt build failed: {state.build_failure[:3000]}")
    for table in TABLES:
        current, table_skipped = compare_current(state, variant, table)
        problems += current
        problems += compare_history(state, variant, table)
        skipped.update({(table, *k): n for k, n in table_skipped.items()})
    lake = state.lake
    rejected = lake.rows(
        "select kafka_topic, kafka_offset, reject_reason from {schema}.cdc_rejected_messages "
        f"where kafka_topic like '{variant.name}.%'"
    )
    if rejected:
        problems.append(f"rejected ({len(rejected)}): {rejected[:5]}")
    problems += compare_reconciliation(state, variant)
    if skipped:
        print(f"\n{variant.name}: cells Debezium cannot carry (left out): "
              + "; ".join(f"{t}.{c} x{n}: {why}" for (t, c, why), n in sorted(skipped.items())), flush=True)
    if problems:
        print(f"\n{variant.name}:\n" + "\n".join(problems), flush=True)  # seen before later rounds run
    assert not problems, "\n".join(problems)


def variant_params() -> list:
    return [pytest.param(v, id=v.name) for v in VARIANTS]


@pytest.fixture(scope="module")
def round1(e2e) -> E2E:
    run_round(e2e, 1, streaming_round(LARGE_ROWS))
    return e2e


@pytest.fixture(scope="module")
def round2(round1) -> E2E:
    run_round(round1, 2, incremental_round())
    return round1


def test_toasted_values_are_out_of_line_and_sent_as_unavailable(round1):
    """The TOAST case is real: the docs table's large values live in its TOAST relation, and
    Debezium (DEFAULT identity) sends its placeholder for them on an update that leaves them alone."""
    for database in USED_DATABASES:
        conn = round1.server.connect(database)
        try:
            cursor = conn.cursor()
            cursor.execute("select reltoastrelid::regclass::text from pg_class where oid = 'public.docs'::regclass")
            (toast_table,) = cursor.fetchone()
            cursor.execute(f"select count(*) from {toast_table}")
            assert cursor.fetchone()[0] > 0, database
            cursor.execute("select min(least(octet_length(body), octet_length(payload::text), octet_length(blob))) "
                           "from public.docs")
            assert cursor.fetchone()[0] > 8192, database
        finally:
            conn.close()
    default = [v for v in VARIANTS if v.database == "e2e"]
    if not default:
        pytest.skip("no variant reads the DEFAULT-identity database")

    def has_placeholder(value: dict) -> bool:
        after = value.get("payload", value).get("after") or {}
        return all(after.get(c) in (pg_values.UNAVAILABLE, pg_values.UNAVAILABLE_BASE64) for c in TOASTED)

    assert wait_for_message(round1.broker.bootstrap, f"{default[0].name}.public.docs", has_placeholder, timeout=60)


@pytest.mark.parametrize("variant", variant_params())
def test_round1_snapshot_and_streaming(round1, variant):
    check_variant(round1, variant)


@pytest.mark.parametrize("variant", variant_params())
def test_round2_incremental(round2, variant):
    check_variant(round2, variant)


@pytest.mark.parametrize("variant", variant_params())
def test_incremental_snapshot_reads_interleave_with_streamed_changes(round2, variant):
    """The incremental snapshot of public.accounts really interleaved (its equality with PostgreSQL
    is test_round2_incremental's): the lake holds its reads of the keys the window left alone, none
    of the keys changed inside the window (Debezium dropped them), and a streamed change of a read
    key after them (key 2, whose current row is that change's)."""
    database_name, table_name = lake_database(variant, "public.accounts")
    where = (f"source_system = '{variant.name}' and database_name = '{database_name}' "
             f"and table_name = '{table_name}'")
    reads = round2.lake.rows(
        f"select row_key, op from {{schema}}.cdc_changelog where {where} "
        "and source_position like '% snapshot incremental' order by row_key")
    assert reads == [{"row_key": key, "op": "r"} for key in ("11", "2", "40")]
    assert round2.lake.rows(
        f"select op, image['owner'] as owner from {{schema}}.cdc_current where {where} and row_key = '2'"
    ) == [{"op": "u", "owner": "bob after the snapshot"}]


# ----------------------------------------------------------------------------- cdc-lake verify

VERIFIED = "pg_default"  # the variant verify compares: Debezium's defaults, each table's own identity


def run_verify(state: E2E, tables: list[str] | None = None) -> dict[str, TableResult]:
    url = PostgresUrl(USER, state.server.host, state.server.port, "e2e")
    verification = verify(state.lake.spark, url, state.lake.schema, state.lake.raw_schema, tables=tables,
                          source_system=VERIFIED, password=PASSWORD)
    print(verification.as_text())
    return {r.label: r for r in verification.results}


@pytest.fixture(scope="module")
def verified(round2) -> E2E:
    if VERIFIED not in {v.name for v in VARIANTS}:
        pytest.skip(f"CDC_LAKE_E2E_VARIANTS leaves out {VERIFIED}")
    # the WAL reader verify's in_flight uses (PostgreSQL 15's contrib)
    round2.server.execute("e2e", "create extension if not exists pg_walinspect")
    return round2


def test_verify_equal_after_the_workload(verified):
    """`cdc-lake verify` against the PostgreSQL the connector read: every table equal, TOASTed
    values, key-only deletes, the TRUNCATE and every type included."""
    results = run_verify(verified)
    assert "public.types" in results and "public.docs" in results and "other.items" in results
    assert {t: r.status for t, r in results.items() if r.status != "equal"} == {}
    assert all(r.source_rows == r.lake_rows for r in results.values())


def test_verify_finds_a_changed_lake_row_and_one_in_flight(verified):
    lake = verified.lake
    where = (f"source_system = '{VERIFIED}' and database_name = 'e2e.public' and table_name = 'accounts' "
             "and is_current")
    changed, moved = (r["row_key"] for r in lake.rows(
        f"select row_key from {lake.schema}.cdc_history where {where} order by row_key limit 2"))
    lake.spark.sql(
        f"update {lake.schema}.cdc_history set image = map_concat(map_filter(image, (k, v) -> k != 'owner'), "
        f"map('owner', 'by hand')) where {where} and row_key = '{changed}'"
    )
    result = run_verify(verified, ["public.accounts"])["public.accounts"]
    assert (result.status, result.differing_keys) == ("different", 1)
    assert [d.key for d in result.differences] == [f"id={changed}"]
    # a change the connector sends but the lake has not landed yet: in flight, not wrong
    verified.server.execute("e2e", f"update public.accounts set owner = 'moved' where id = {moved}")
    result = run_verify(verified, ["public.accounts"])["public.accounts"]
    assert (result.status, result.differing_keys) == ("in_flight", 2)
    assert result.in_flight >= 1
    assert sorted(d.key for d in result.differences) == sorted([f"id={changed}", f"id={moved}"])
