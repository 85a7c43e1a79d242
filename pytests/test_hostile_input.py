"""Hostile input (issue 9): a generated corpus of broken, odd and malicious records in every format.

From one small valid record per format (Canal FlatMessage, KafkaRiverCanal, Tencent DTS, Debezium,
dtle, Lindorm) the corpus derives mutants: truncated JSON, every field replaced by a value of every
other JSON type (and null) or removed, huge (1 MB) and deeply nested values, invalid UTF-8 and lone
surrogates, empty values, unknown ops and message types, hostile database/table/column names and
duplicate JSON keys. All of it is landed with valid records in one lake and built with one
`dbt build` (all models, all data tests). Then every landed record must be accounted for: it made
changes in cdc_changelog, sits in cdc_rejected_messages with a reason, or is a control/DDL record;
and the records whose outcome is known must have exactly that outcome.

Spark's from_json (Jackson) decides two things documented here and asserted below: with a
duplicate JSON key the LAST occurrence wins (in structs and in maps), and a lone surrogate escape
(\\ud800) decodes to `?`. Invalid UTF-8 bytes in a Kafka value become U+FFFD when landed.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cdc_lake.env import PROJECT_DIR
from cdc_lake.testing.harness import Lake

pytestmark = pytest.mark.integration

Json = Any
DB, TABLE = "hostile", "items"
COMMIT_MS = 1_709_251_201_000
HUGE = "x" * (1024 * 1024)
# 500 levels parse (Jackson's default nesting limit is 1000); 2000 levels do not
DEEP_OK = '{"a":' * 500 + "1" + "}" * 500
DEEP_TOO_DEEP = '{"a":' * 2000 + "1" + "}" * 2000
HOSTILE_DB = "d.b`x"
HOSTILE_TABLE = "we.ird \"t\" 'q' `b` ;--"
HOSTILE_COLUMNS = ["select", "from", "a b", "x`y", "1col", "drop table t;--"]
WRONG_TYPES: list[tuple[str, Json]] = [
    ("string", "x"),
    ("number", 7),
    ("float", 1.5e300),
    ("bool", True),
    ("object", {}),
    ("array", []),
    ("null", None),
]
# Tencent DTS heartbeats (partition, heartbeatTimestamp): partition 1 is at 02:00, partition 2 at 01:30
HEARTBEATS = [(1, 1_709_254_800), (1, 1_709_258_400), (2, 1_709_256_600)]
SLOWEST_HEARTBEAT = "2024-03-01 01:30:00"
# every record of this module is landed after this moment and before its assertions run
MODULE_START = time.time()
OFFSET_GAP = 2
# Placeholders replaced in the kcat line text after JSON encoding
LONE_SURROGATE_MARK = "@@LONE_SURROGATE@@"


# --- valid records, one builder per format -------------------------------------------------------


def canal_flat(n: int, row: dict[str, str | None], db: str = DB, table: str = TABLE, kind: str = "INSERT") -> Json:
    return {
        "data": [row], "database": db, "es": COMMIT_MS + n * 1000, "id": n, "isDdl": False,
        "mysqlType": {c: ("int(11)" if c == "id" else "text") for c in row}, "old": None, "pkNames": ["id"],
        "sql": "", "sqlType": {c: (4 if c == "id" else 2005) for c in row}, "table": table,
        "ts": COMMIT_MS + n * 1000 + 5, "type": kind,
    }


def kafka_river_canal(n: int, row: dict[str, str | None], db: str = DB, table: str = TABLE, kind: str = "i") -> Json:
    return {
        "binlog": f"{1000 + n * 10}@mysql-bin.000001", "time": COMMIT_MS + n * 1000,
        "canalTime": COMMIT_MS + n * 1000 + 5, "db": db, "table": table, "event": kind,
        "columns": [
            {"n": c, "t": "int(11)" if c == "id" else "text", "v": v, "null": v is None} for c, v in row.items()
        ],
        "keys": ["id"],
    }


def tencent_dts(n: int, row: dict[str, str | None], db: str = DB, table: str = TABLE, kind: str = "INSERT") -> Json:
    return {
        "id": n, "version": 1, "messageType": kind, "fileName": "mysql-bin.000001",
        "position": f"{1000 + n * 10}@1", "safePosition": "195@1", "timestamp": (COMMIT_MS + n * 1000) // 1000,
        "gtid": f"cd613e30-d8f1-6adf-91b7-584a2265b1f5:{n}", "transactionId": None, "serverId": 1,
        "threadId": 7, "sourceType": "MySQL", "sourceVersion": "5.7.44-log", "schemaName": db, "tableName": table,
        "objectName": f"{db}.{table}" if db is not None and table is not None else None,
        "columns": [
            {"name": c, "dataTypeNumber": 3 if c == "id" else 252, "isKey": c == "id",
             "originalType": "int(11)" if c == "id" else "text"}
            for c in row
        ],
        "oldColumns": None, "newColumns": list(row.values()), "sql": None, "executionTime": None,
        "heartbeatTimestamp": None, "syncedGtid": None, "fakeGtid": False, "pkNames": ["id"],
        "readerTimestamp": COMMIT_MS + n * 1000 + 5, "tags": {}, "total": 0, "index": 0,
    }


def debezium(n: int, row: dict[str, str | None], db: str = DB, table: str = TABLE, kind: str = "c") -> Json:
    """Debezium MySQL, bare payload (schemas.enable=false)."""
    return {
        "before": None, "after": row,
        "source": {
            "version": "2.5.0.Final", "connector": "mysql", "name": "hsrv", "ts_ms": COMMIT_MS + n * 1000,
            "snapshot": "false", "db": db, "table": table, "server_id": 1, "gtid": None,
            "file": "mysql-bin.000001", "pos": 1000 + n * 10, "row": 0,
        },
        "op": kind, "ts_ms": COMMIT_MS + n * 1000 + 5,
    }


def dtle(n: int, row: dict[str, str | None], db: str = DB, table: str = TABLE, kind: str = "c") -> Json:
    """dtle: a Debezium-shaped payload with dtle's source block (ts_sec, no ts_ms)."""
    return {
        "before": None, "after": row,
        "source": {
            "version": "3.21.0", "name": "dtle", "server_id": 1, "ts_sec": (COMMIT_MS + n * 1000) // 1000,
            "gtid": None, "file": "mysql-bin.000002", "pos": 1000 + n * 10, "row": 0, "snapshot": False,
            "db": db, "table": table,
        },
        "op": kind, "ts_ms": COMMIT_MS + n * 1000 + 5,
    }


def lindorm(n: int, row: dict[str, str | None], db: str = DB, table: str = TABLE, kind: str = "c") -> Json:
    return {
        "op": kind, "ts_ms": COMMIT_MS + n * 1000 + 5, "before": None, "after": row,
        "source": {"version": "2", "db": "ld-cluster", "namespace": db, "table": table, "ts_ms": COMMIT_MS + n * 1000},
    }


Builder = Callable[..., Json]


@dataclass(frozen=True)
class Source:
    """One stream of the corpus: a landing format, a topic, the record builder, where the kind is."""

    name: str
    fmt: str
    build: Builder
    kind_path: tuple[str, ...]
    keyed: bool  # Debezium/Lindorm records name their key columns in the Kafka key


SOURCES = [
    Source("canal_flat", "canal_flat", canal_flat, ("type",), False),
    Source("kafka_river_canal", "kafka_river_canal", kafka_river_canal, ("event",), False),
    Source("tencent_dts", "tencent_dts", tencent_dts, ("messageType",), False),
    Source("debezium", "debezium", debezium, ("op",), True),
    Source("dtle", "debezium", dtle, ("op",), True),
    Source("lindorm", "lindorm", lindorm, ("op",), True),
]


# --- the corpus ----------------------------------------------------------------------------------


@dataclass
class Record:
    source: Source
    name: str
    value: str | None  # the Kafka value as text (may hold surrogateescape'd bytes / placeholders)
    key: str | None = None
    expect: str | None = None  # 'dml' / 'rejected' / 'control' when the outcome is known
    after: dict[str, str | None] | None = None  # the exact expected after image of a dml record
    table: tuple[str, str] = (DB, TABLE)
    partition: int = 0
    gap_before: int = 0  # offsets left unused before this record (lost messages, as far as the lake knows)
    offset: int = -1
    topic: str = ""

    @property
    def coordinates(self) -> tuple[str, str, int, int]:
        return (self.source.fmt, self.topic, self.partition, self.offset)


def paths(value: Json, prefix: tuple[Any, ...] = (), depth: int = 3) -> Iterator[tuple[Any, ...]]:
    """Every path into a JSON value down to `depth` levels (object keys and array indexes)."""
    if depth == 0:
        return
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for k, child in children:
        yield (*prefix, k)
        yield from paths(child, (*prefix, k), depth - 1)


def replaced(value: Json, path: tuple[Any, ...], new: Json) -> Json:
    out = copy.deepcopy(value)
    target = out
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = new
    return out


def removed(value: Json, path: tuple[Any, ...]) -> Json:
    out = copy.deepcopy(value)
    target = out
    for k in path[:-1]:
        target = target[k]
    del target[path[-1]]
    return out


def text(value: Json) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Corpus:
    def __init__(self) -> None:
        self.records: list[Record] = []
        self.build_statuses: dict[str, str] = {}  # dbt node name -> status of the one build
        self._n = 0

    def next_n(self) -> int:
        self._n += 1
        return self._n

    def add(self, source: Source, name: str, value: str | None, row_id: str | None = None, **kw: Any) -> Record:
        key = json.dumps({"id": row_id}) if source.keyed and row_id is not None else None
        record = Record(source, name, value, key, **kw)
        self.records.append(record)
        return record

    def valid(self, source: Source, name: str, row: dict[str, str | None], **kw: Any) -> tuple[Json, Record]:
        n = self.next_n()
        row = {"id": str(n), **row}
        table = (kw.pop("db", DB), kw.pop("table_name", TABLE))
        value = source.build(n, row, db=table[0], table=table[1])
        record = self.add(source, name, text(value), row["id"], expect="dml", after=row, table=table, **kw)
        return value, record


def build_corpus() -> Corpus:
    corpus = Corpus()
    for source in SOURCES:
        # valid records: plain, a NULL and an empty string, unicode, a 1 MB value, 500-deep JSON text
        corpus.valid(source, "valid", {"name": "plain", "note": None})
        corpus.valid(source, "valid empty string", {"name": "", "note": "ünïcødé ✓ 😀"})
        corpus.valid(source, "huge value", {"name": HUGE, "note": "end"})
        corpus.valid(source, "deep JSON text value", {"name": DEEP_OK, "note": None})
        corpus.valid(source, "hostile identifiers", {c: f"v:{c}" for c in HOSTILE_COLUMNS},
                     db=HOSTILE_DB, table_name=HOSTILE_TABLE)
        corpus.valid(source, "quotes and backslashes in values",
                     {"name": "it's \"q\" \\ back`tick", "note": "line\nbreak\ttab\u0001"})

        # mutants of one valid record
        n = corpus.next_n()
        row: dict[str, str | None] = {"id": str(n), "name": "m", "note": "n"}
        template = source.build(n, row)
        for path in paths(template):
            for type_name, new in WRONG_TYPES:
                corpus.add(source, f"{'.'.join(map(str, path))} as {type_name}",
                           text(replaced(template, path, new)), row["id"])
            corpus.add(source, f"{'.'.join(map(str, path))} removed", text(removed(template, path)), row["id"])
        whole = text(template)
        for cut in (1, len(whole) // 2, len(whole) - 1):
            corpus.add(source, f"truncated at {cut}", whole[:cut], row["id"], expect="rejected")
        for name, value in [("empty string", ""), ("empty object", "{}"), ("empty array", "[]"),
                            ("JSON null", "null"), ("number", "42"), ("JSON string", '"text"'),
                            ("not JSON", "hello, world"), ("deep nesting beyond the parser limit", DEEP_TOO_DEEP),
                            ("object beside nonsense", whole + "garbage")]:
            corpus.add(source, name, value, row["id"], expect=None if value in ("{}", "null") else "rejected")
        kind_unknown = replaced(template, source.kind_path, "EXPLODE")
        corpus.add(source, "unknown op or message type", text(kind_unknown), row["id"], expect="rejected")
        corpus.add(source, "deeply nested extra field", whole[:-1] + ',"extra":' + DEEP_OK + "}", row["id"])

        # duplicate JSON keys: the last occurrence wins
        n = corpus.next_n()
        first = source.build(n, {"id": str(n), "name": "first", "note": "n"})
        dup = text(first)
        dup_row = {"id": str(n), "name": "second", "note": "n"}
        if source.name in ("kafka_river_canal", "tencent_dts"):
            # images are arrays here: duplicate a top-level key instead (`time` / `timestamp` twice)
            dup = dup[:-1] + "," + text(source.build(n, dup_row))[1:]
        else:
            dup = dup.replace('"name":"first"', '"name":"first","name":"second"')
        corpus.add(source, "duplicate JSON keys", dup, str(n), expect="dml", after=dup_row)

        # invalid UTF-8 bytes and lone surrogates
        n = corpus.next_n()
        corpus.add(source, "invalid UTF-8 bytes", text(source.build(n, {"id": str(n), "name": "a\udcff\udcfeb"})),
                   str(n), expect="dml", after={"id": str(n), "name": "a\ufffd\ufffdb"})
        n = corpus.next_n()
        corpus.add(source, "lone surrogate escape in the value",
                   text(source.build(n, {"id": str(n), "name": "a" + LONE_SURROGATE_MARK + "b"})).replace(
                       LONE_SURROGATE_MARK, "\\ud800"),
                   str(n), expect="dml", after={"id": str(n), "name": "a?b"})
        n = corpus.next_n()
        corpus.add(source, "lone surrogate in the Kafka record",
                   text(source.build(n, {"id": str(n), "name": "a" + LONE_SURROGATE_MARK + "b"})),
                   str(n), expect="dml", after={"id": str(n), "name": "a\ufffdb"})

        # missing identity
        for name, db, table in [("no database", None, TABLE), ("no table", DB, None)]:
            n = corpus.next_n()
            value = source.build(n, {"id": str(n), "name": "z"}, db=db, table=table)
            corpus.add(source, name, text(value), str(n), expect="rejected")
        n = corpus.next_n()
        corpus.add(source, "no primary key value", text(source.build(n, {"id": None, "name": "z"})), str(n),
                   expect="rejected")
        corpus.add(source, "tombstone", None, str(n), expect="control")
        if not source.keyed:
            # MySQL text formats: an int(11) column holding text is a corrupt image, never an INT 'x'
            n = corpus.next_n()
            corpus.add(source, "text in a number column", text(source.build(n, {"id": "x", "name": "z"})), "x",
                       expect="rejected")

    # Tencent DTS heartbeats on two more partitions of the stream (the slowest partition counts)
    tencent = next(s for s in SOURCES if s.name == "tencent_dts")
    for i, (partition, seconds) in enumerate(HEARTBEATS):
        value = {"id": corpus.next_n(), "version": 1, "messageType": "HEARTBEAT", "timestamp": seconds,
                 "serverId": 1, "heartbeatTimestamp": seconds, "readerTimestamp": seconds * 1000 + 5}
        # two offsets of partition 1 never landed: cdc_reconciliation must count the gap (a warning)
        corpus.add(tencent, f"heartbeat {seconds}", text(value), expect="control", partition=partition,
                   gap_before=OFFSET_GAP if i == 1 else 0)
    return corpus


def assign_coordinates(corpus: Corpus) -> None:
    """Topic hostile.<source>, the record's partition, offsets in corpus order."""
    offsets: dict[tuple[str, int], int] = defaultdict(int)
    for record in corpus.records:
        record.topic = f"hostile.{record.source.name}"
        offsets[(record.topic, record.partition)] += record.gap_before
        record.offset = offsets[(record.topic, record.partition)]
        offsets[(record.topic, record.partition)] += 1


def kcat_line(record: Record) -> bytes:
    line = json.dumps(
        {"topic": record.topic, "partition": record.partition, "offset": record.offset, "tstype": "create",
         "ts": COMMIT_MS + 60_000, "broker": 0, "key": record.key, "payload": record.value},
        ensure_ascii=False,
    )
    # a JSON escape of a lone surrogate in the Kafka record itself (kcat prints what it was given)
    line = line.replace(LONE_SURROGATE_MARK, "\\ud800")
    return line.encode("utf-8", errors="surrogateescape") + b"\n"


# --- the run -------------------------------------------------------------------------------------


@dataclass
class Outcome:
    kinds: set[str] = field(default_factory=set)  # record_kind of its messages (int_raw_records_unioned)
    staged_change_ids: set[str] = field(default_factory=set)  # changes it made, before deduplication
    changes: list[dict[str, Any]] = field(default_factory=list)  # cdc_changelog rows at its coordinates
    rejects: list[dict[str, Any]] = field(default_factory=list)


def collect_outcomes(lake: Lake) -> tuple[dict[tuple, Outcome], set[str]]:
    """What became of every landed record, by (format, topic, partition, offset); and the change ids
    of cdc_changelog."""
    outcomes: dict[tuple, Outcome] = defaultdict(Outcome)

    def coordinates(r: dict[str, Any]) -> tuple:
        return (r["source_format"], r["kafka_topic"], r["kafka_partition"], r["kafka_offset"])

    for r in lake.rows("select * from {schema}.int_raw_records_unioned"):
        outcomes[coordinates(r)].kinds.add(r["record_kind"])
    for r in lake.rows("select * from {schema}.int_changes_unioned"):
        outcomes[coordinates(r)].staged_change_ids.add(r["change_id"])
    changelog_ids = set()
    for r in lake.rows("select * from {schema}.cdc_changelog"):
        outcomes[coordinates(r)].changes.append(r)
        changelog_ids.add(r["change_id"])
    for r in lake.rows("select * from {schema}.cdc_rejected_messages"):
        outcomes[coordinates(r)].rejects.append(r)
    return outcomes, changelog_ids


def land_corpus(lake: Lake, corpus: Corpus, folder: Path) -> None:
    """Give every record its topic and offset, write one kcat file per format and land it."""
    assign_coordinates(corpus)
    files: dict[str, list[bytes]] = defaultdict(list)
    for record in corpus.records:
        files[record.source.fmt].append(kcat_line(record))
    for fmt, lines in files.items():
        path = folder / f"{fmt}.jsonl"
        path.write_bytes(b"".join(lines))
        report = lake.land(fmt, path)
        assert not report.bad_lines, report.bad_lines[:3]
        assert report.records_landed == len(lines)


Built = tuple[Lake, Corpus, dict[tuple, Outcome], set[str]]


@pytest.fixture(scope="module")
def built(lake: Lake, tmp_path_factory: pytest.TempPathFactory) -> Built:
    corpus = build_corpus()
    land_corpus(lake, corpus, tmp_path_factory.mktemp("hostile"))
    result = lake.build(typed_tables=False)
    corpus.build_statuses = {r.node.name: str(r.status) for r in result.result.results}
    return (lake, corpus, *collect_outcomes(lake))


def test_every_landed_record_is_accounted_for(built: Built):
    """Each record made changes (all in cdc_changelog: at its own coordinates, or at those of an
    earlier delivery of the same change), or is rejected with a reason and its raw value, or is a
    control / DDL record; cdc_reconciliation agrees."""
    lake, corpus, outcomes, changelog_ids = built
    raw = {
        (fmt, r["kafka_topic"], r["kafka_partition"], r["kafka_offset"]): r["kafka_value"]
        for fmt in {s.fmt for s in SOURCES}
        for r in lake.rows(f"select * from {{raw_schema}}.raw_{fmt}")
    }
    assert set(raw) == {r.coordinates for r in corpus.records}
    problems = []
    for record in corpus.records:
        outcome = outcomes.get(record.coordinates, Outcome())
        if not outcome.kinds:
            problems.append((record.source.name, record.name, "no outcome"))
        if "dml" in outcome.kinds and (not outcome.staged_change_ids or outcome.staged_change_ids - changelog_ids):
            problems.append((record.source.name, record.name, "dml without its change in cdc_changelog"))
        if "rejected" in outcome.kinds:
            if not outcome.rejects or any(not (x["reject_reason"] or "").strip() for x in outcome.rejects):
                problems.append((record.source.name, record.name, "rejected without a reason"))
            elif any(x["raw_value"] != raw[record.coordinates] for x in outcome.rejects):
                problems.append((record.source.name, record.name, "reject does not keep the raw value"))
        if outcome.changes and "dml" not in outcome.kinds:
            problems.append((record.source.name, record.name, f"changes from a {outcome.kinds} record"))
    assert problems == [], "\n".join(map(str, problems))
    reconciliation = lake.rows("select * from {schema}.cdc_reconciliation")
    assert sum(r["raw_records"] for r in reconciliation) == len(corpus.records)
    assert [r for r in reconciliation if r["unaccounted_records"] != 0] == []
    gaps = {(r["kafka_topic"], r["kafka_partition"]): r["offset_gaps"] for r in reconciliation if r["offset_gaps"]}
    assert gaps == {("hostile.tencent_dts", 1): OFFSET_GAP}
    assert {r["kafka_topic"] for r in reconciliation} == {f"hostile.{s.name}" for s in SOURCES}


def test_build_passes_with_only_the_offset_gap_warning(built: Built):
    """One `dbt build` over the whole corpus: every model and data test passes; the two warnings
    are the offset gap left on purpose and the new rejects the corpus is made of."""
    statuses = built[1].build_statuses
    assert len(statuses) > 50
    assert {name: s for name, s in statuses.items() if s not in ("success", "pass")} == {
        "accepted_values_cdc_reconciliation_offset_gaps__0": "warn",
        "new_rejects_cdc_rejected_messages_": "warn",
    }


def test_known_outcomes(built: Built):
    """Valid records give exactly their change; records that must be rejected are; a sample of the
    generated mutants is rejected too (so the corpus really is hostile)."""
    _, corpus, outcomes, _ = built
    wrong = []
    for record in corpus.records:
        outcome = outcomes[record.coordinates]
        if record.expect is None:
            continue
        if outcome.kinds != {record.expect}:
            wrong.append((record.source.name, record.name, record.expect, outcome.kinds,
                          [x["reject_reason"] for x in outcome.rejects]))
            continue
        if record.expect == "dml":
            [change] = outcome.changes
            got = (change["database_name"], change["table_name"], change["op"], change["after"])
            if got != (*record.table, "c", record.after):
                wrong.append((record.source.name, record.name, "change", {
                    k: (v if len(str(v)) < 200 else f"<{len(str(v))} chars>") for k, v in change["after"].items()
                } if change["after"] else None, change["database_name"], change["table_name"]))
    assert wrong == [], "\n".join(map(str, wrong))
    rejected = sum(1 for r in corpus.records if "rejected" in outcomes[r.coordinates].kinds)
    assert rejected > len(corpus.records) // 4


def test_a_1mb_value_survives_intact(built: Built):
    _, corpus, outcomes, _ = built
    huge = [r for r in corpus.records if r.name == "huge value"]
    assert len(huge) == len(SOURCES)
    for record in huge:
        [change] = outcomes[record.coordinates].changes
        assert len(change["after"]["name"]) == len(HUGE), record.source.name
        assert change["after"]["name"] == HUGE, record.source.name


def test_duplicate_keys_last_occurrence_wins(built: Built):
    _, corpus, outcomes, _ = built
    for record in (r for r in corpus.records if r.name == "duplicate JSON keys"):
        [change] = outcomes[record.coordinates].changes
        assert change["after"]["name"] == "second", record.source.name


def test_hostile_identifiers_reach_current_and_history(built: Built):
    lake = built[0]
    rows = lake.rows(
        "select source_format, database_name, table_name, image, is_deleted from {schema}.cdc_current "
        f"where table_name = '{HOSTILE_TABLE.replace(chr(39), chr(92) + chr(39))}'"
    )
    assert sorted(r["source_format"] for r in rows) == sorted(s.fmt for s in SOURCES)
    for r in rows:
        assert r["database_name"] == HOSTILE_DB
        assert {k: v for k, v in r["image"].items() if k != "id"} == {c: f"v:{c}" for c in HOSTILE_COLUMNS}
        assert not r["is_deleted"]


@pytest.fixture(scope="module")
def hostile_table(built: Built) -> Iterator[tuple[Lake, str]]:
    """`cdc-lake add-table` for the table with the hostile database, table and column names (already
    in the lake from the corpus), in a copy of the project; then a build of its typed models and tests."""
    from cdc_lake import cli
    from cdc_lake.tables import model_base
    from cdc_lake.testing.harness import copy_project

    lake = built[0]
    folder = Path(tempfile.mkdtemp(prefix="cdc_lake_hostile_project_"))
    lake.project_dir = copy_project(folder)
    try:
        assert cli.main(["add-table", HOSTILE_DB, HOSTILE_TABLE, "--project-dir", str(folder)]) == 0
        base = model_base(HOSTILE_DB, HOSTILE_TABLE)
        lake.build("--select", "cdc_tables", f"{base}_current", f"{base}_history")
        yield lake, base
    finally:
        lake.project_dir = PROJECT_DIR
        shutil.rmtree(folder, ignore_errors=True)


def test_add_table_with_hostile_names_builds_typed_models(hostile_table: tuple[Lake, str]):
    lake, base = hostile_table
    assert base.startswith("d_b_x__we_ird_t_q_b") or base.startswith("d_b_x_we_ird_t_q_b")
    columns = [r["col_name"] for r in lake.rows(f"describe {{schema}}.`{base}_current`")]
    for column in ["id", *HOSTILE_COLUMNS]:
        assert column in columns
    rows = lake.rows(f"select * from {{schema}}.`{base}_current` order by source_system")
    assert len(rows) == len(SOURCES)
    for row in rows:
        assert {c: row[c] for c in HOSTILE_COLUMNS} == {c: f"v:{c}" for c in HOSTILE_COLUMNS}
        assert row["id"] is not None
    history = lake.rows(f"select * from {{schema}}.`{base}_history`")
    assert len(history) == len(SOURCES)
    assert all(r["is_current"] and r["valid_to"] is None for r in history)
    assert {r["x`y"] for r in history} == {"v:x`y"}


def test_lag_from_commit_times_and_heartbeats(built: Built):
    """cdc_lag: for the Tencent DTS stream the heartbeat figures come from its slowest partition
    (latest heartbeat 01:30 on partition 2, though partition 1 is at 02:00); the table is current
    as of that heartbeat, later than its last commit. Streams without heartbeats have none."""
    lake = built[0]
    rows = lake.rows(
        "select source_format, source_system, database_name, table_name, changes, "
        "cast(last_commit_ts as string) as last_commit, cast(last_heartbeat_ts as string) as last_heartbeat, "
        "heartbeat_lag_seconds, cast(current_as_of as string) as current_as_of, median_lag_seconds "
        "from {schema}.cdc_lag"
    )
    tencent = [r for r in rows if r["source_format"] == "tencent_dts" and r["source_system"] == "1"]
    assert {(r["database_name"], r["table_name"]) for r in tencent} >= {(DB, TABLE), (HOSTILE_DB, HOSTILE_TABLE)}
    for r in tencent:
        assert r["last_heartbeat"] == SLOWEST_HEARTBEAT
        # whole seconds, an integer: never a double such as 5.5471947420225E7
        # the slowest heartbeat was landed during this module's run
        assert MODULE_START - 1_709_256_600 - 1 <= r["heartbeat_lag_seconds"] <= time.time() - 1_709_256_600 + 1
        assert isinstance(r["heartbeat_lag_seconds"], int)
        assert r["last_commit"] < SLOWEST_HEARTBEAT
        assert r["current_as_of"] == SLOWEST_HEARTBEAT
    commits = {
        (c["source_format"], c["source_system"], c["database_name"], c["table_name"]): c
        for c in lake.rows(
            "select source_format, source_system, database_name, table_name, "
            "unix_timestamp(min(commit_ts)) as first, unix_timestamp(max(commit_ts)) as last "
            "from {schema}.cdc_changelog group by source_format, source_system, database_name, table_name"
        )
    }
    others = [r for r in rows if r["source_format"] != "tencent_dts"]
    assert others
    for r in others:
        assert r["last_heartbeat"] is None and r["heartbeat_lag_seconds"] is None
        assert r["current_as_of"] == r["last_commit"]
        # every change was committed at its source time and landed during this module's run
        c = commits[(r["source_format"], r["source_system"], r["database_name"], r["table_name"])]
        assert MODULE_START - c["last"] - 1 <= r["median_lag_seconds"] <= time.time() - c["first"] + 1
