"""Hand-made traps for the three MySQL-text formats: Canal FlatMessage, Tencent DTS, KafkaRiverCanal.

Every format's inputs land on topics of their own in the shared lake (conftest `shared_lake`), built
once with `source_time_zone_by_topic` (Canal's and Tencent DTS's TIMESTAMP values are rendered in
Asia/Shanghai, KafkaRiverCanal's in America/New_York; all must come out in UTC, and the other
modules' topics stay in the default UTC) and `cdc_exclude_tables = ['traps\\.ignored_.*']`
(excluded records must be accounted as `filtered`, not lost).
"""

from __future__ import annotations

import json

from cdc_lake.testing.harness import kcat_lines

CANAL_TOPIC = "canal-traps"
MISSING_KEY = (
    "key column id has no value in the row image of {table}: the message names it as primary key but its row "
    "does not carry it; fix the producer or set var cdc_primary_keys for this table to columns every row carries"
)
DTS_TOPIC = "dts-traps"
KRC_TOPIC = "krc-traps"
BUILD_VARS = {
    "source_time_zone_by_topic": {
        CANAL_TOPIC: "Asia/Shanghai", DTS_TOPIC: "Asia/Shanghai", KRC_TOPIC: "America/New_York",
    },
    "cdc_exclude_tables": [r"traps\.ignored_.*"],
}

# ---------------------------------------------------------------- Canal FlatMessage

CANAL_TYPES = {
    "id": "int(11)", "e": "enum('new','paid','shipped')", "s": "set('a','b','c')",
    "e2": "enum('new','paid')", "s0": "set('a','b')", "bin": "varbinary(8)", "blb": "blob",
    "b": "bit(3)", "dt": "datetime(6)", "tm": "time(3)", "ts": "timestamp(3)", "dec": "decimal(10,2)",
    "f": "float", "d": "double", "j": "json", "txt": "varchar(10)",
}


def canal(type_: str, table: str | None, data, old=None, *, msg_id: int, es: int, pk=("id",),
          types=None, **extra) -> str:
    message = {
        "data": data, "database": "traps", "es": es, "id": msg_id, "isDdl": False,
        "mysqlType": types, "old": old, "pkNames": list(pk), "sql": "", "table": table,
        "ts": es + 500, "type": type_, **extra,
    }
    if table is None:
        del message["table"]
    return json.dumps(message, ensure_ascii=False)


T2_TYPES = {"id": "int(11)", "a": "varchar(5)", "b": "varchar(5)", "c": "varchar(5)"}
BINARY_TYPES = {"id": "int(11)", "fix": "binary(4)"}
CANAL_MESSAGES = [
    # 0: every converted type in one row; pkNames repeats the key; GTID present
    canal("INSERT", "t1", [{
        "id": "1", "e": "3", "s": "5", "e2": "paid", "s0": "0", "bin": "\u0000\u00ff\u0010",
        "blb": "AB", "b": "5", "dt": "2024-02-29 13:05:00.120000", "tm": "00:00:01.250",
        "ts": "2024-02-29 20:05:00.500", "dec": "12.5", "f": "3.140000104904175", "d": "0.1",
        "j": '{"a": 1}', "txt": "O'Brien",
    }], msg_id=1, es=1_700_000_000_000, pk=("id", "id"), types=CANAL_TYPES,
        gtid="3e11fa47-71ca-11e1-9e33-c80aa9429562:23"),
    # 1: two rows inserted
    canal("INSERT", "t2", [{"id": "1", "a": "x1", "b": "y1", "c": None},
                           {"id": "2", "a": "x1", "b": "y1", "c": None}],
          msg_id=2, es=1_700_000_001_000, types=T2_TYPES),
    # 2: one UPDATE, two rows changing different columns
    canal("UPDATE", "t2", [{"id": "1", "a": "x2", "b": "y1", "c": None},
                           {"id": "2", "a": "x1", "b": "y2", "c": None}],
          old=[{"a": "x1"}, {"b": "y1"}], msg_id=3, es=1_700_000_002_000, types=T2_TYPES),
    # 3: NULL -> value (old has the key with null: it WAS null)
    canal("UPDATE", "t2", [{"id": "1", "a": "x2", "b": "y1", "c": "v"}], old=[{"c": None}],
          msg_id=4, es=1_700_000_003_000, types=T2_TYPES),
    # 4-7: rejects
    '{"data":[{"id":"1"}',
    canal("FOO", "t3", [{"id": "1"}], msg_id=9, es=1_700_000_004_000),
    canal("INSERT", None, [{"id": "1"}], msg_id=10, es=1_700_000_004_000),
    canal("INSERT", "t3", [{"name": "x"}], msg_id=11, es=1_700_000_004_000),
    # 8-9: excluded table (DML and DDL) -> filtered
    canal("INSERT", "ignored_t", [{"id": "1"}], msg_id=12, es=1_700_000_005_000),
    json.dumps({"data": None, "database": "traps", "table": "ignored_t", "isDdl": True, "type": "ALTER",
                "sql": "ALTER TABLE ignored_t ADD COLUMN z int", "es": 1_700_000_005_000, "id": 13}),
    # 10: the statement text Canal's server sends before a statement's rows (MariaDB's annotate
    # rows event; seen from Canal 1.1.4 against MariaDB 10.11): no database, no table -> control
    json.dumps({"data": None, "database": "", "es": 1_700_000_006_000, "id": 14, "isDdl": False,
                "mysqlType": None, "old": None, "pkNames": None, "sql": "insert into traps.t2 values (3, 'a')",
                "sqlType": None, "table": "", "ts": 1_700_000_006_400, "type": "QUERY"}),
    # 11-15: messages of one Canal batch share `id` and `es` (seen from Canal 1.1.4): they follow
    # their offsets, whatever their row indexes. 11: a binary(4) value whose trailing 0x00 bytes the
    # binlog dropped; 12: the delete of row 1 of 11, as row 0
    canal("INSERT", "t4", [{"id": "1", "fix": "\u0000\u00ff\u0010"}, {"id": "2", "fix": ""}],
          msg_id=20, es=1_700_000_007_000, types=BINARY_TYPES),
    canal("DELETE", "t4", [{"id": "2", "fix": ""}], msg_id=20, es=1_700_000_007_000, types=BINARY_TYPES),
    # 13-15: rows, a TRUNCATE, a row after it, one batch: the TRUNCATE ends 1 and 2, not 3
    canal("INSERT", "t5", [{"id": "1"}, {"id": "2"}], msg_id=21, es=1_700_000_008_000, types={"id": "int(11)"}),
    json.dumps({"data": None, "database": "traps", "es": 1_700_000_008_000, "id": 21, "isDdl": True,
                "mysqlType": None, "old": None, "pkNames": None, "sql": "truncate table traps.t5",
                "sqlType": None, "table": "t5", "ts": 1_700_000_008_400, "type": "TRUNCATE"}),
    canal("INSERT", "t5", [{"id": "3"}], msg_id=21, es=1_700_000_008_000, types={"id": "int(11)"}),
]
CANAL_REJECTS = {
    4: "malformed JSON or a field of the wrong type",
    5: "unknown type: FOO",
    6: "DML without database or table",
    7: MISSING_KEY.format(table="traps.t3"),
}

# ---------------------------------------------------------------- Tencent DTS

DTS_COLUMNS = [
    {"name": "id", "dataTypeNumber": 3, "isKey": True, "originalType": "int(11)"},
    {"name": "payload", "dataTypeNumber": 252, "isKey": False, "originalType": "blob"},
    {"name": "ts", "dataTypeNumber": 17, "isKey": False, "originalType": "timestamp(3)"},
    {"name": "note", "dataTypeNumber": 253, "isKey": False, "originalType": "varchar(20)"},
    {"name": "st", "dataTypeNumber": 247, "isKey": False, "originalType": "enum('a','b')"},
]


def dts(record_id: int, message_type: str, position: str | None, **fields) -> str:
    record = {
        "id": record_id, "version": 1, "messageType": message_type, "fileName": "mysql-bin.000004",
        "position": position, "safePosition": "100@4", "timestamp": 1_700_000_000 + record_id,
        "gtid": f"c7c98333-6006-11ed-bfc9-b8cef6e1a231:{record_id}", "serverId": 7001, "threadId": 12,
        "sourceType": "MySQL", "sourceVersion": "8.0.32", "tags": {}, "total": 0, "index": 0,
        "fakeGtid": False, "readerTimestamp": 1_700_000_000_000 + record_id * 1000,
    }
    if message_type in ("INSERT", "UPDATE", "DELETE", "DDL"):
        record.update(schemaName="shop", tableName="items", objectName="shop.items")
    if message_type in ("INSERT", "UPDATE", "DELETE"):
        record.update(columns=DTS_COLUMNS, pkNames=["id"])
    record.update(fields)
    return json.dumps(record)


DTS_RECORDS = [
    dts(1, "BEGIN", "200@4"),
    # 1: array shape, a null element, 0x hex, timestamp in the source zone, enum index
    dts(2, "INSERT", "500@4", oldColumns=None,
        newColumns=["1", "0x0aff", "2024-02-29 20:05:00.500", None, "2"]),
    # 2: object shape, odd-length upper-case hex, same position as the previous row (same event)
    dts(3, "INSERT", "500@4", oldColumns=None,
        newColumns={"id": "2", "payload": "0xFFF", "ts": "2024-02-29 20:05:00.000", "note": None, "st": "a"}),
    dts(4, "COMMIT", "600@4", transactionId=99),
    dts(5, "HEARTBEAT", None, heartbeatTimestamp=1_700_000_100),
    dts(6, "CHECKPOINT", "650@4"),
    # 6-7: two updates of row 2, landed in the wrong order; file 10 > file 9 although "300" < "9999"
    dts(8, "UPDATE", "300@10", fileName="mysql-bin.000010",
        oldColumns={"note": "first"}, newColumns=["2", "0x0fff", "2024-02-29 20:05:00", "second", "a"]),
    dts(7, "UPDATE", "9999@9", fileName="mysql-bin.000009",
        oldColumns=["2", "0x0fff", "2024-02-29 20:05:00", None, "a"],
        newColumns=["2", "0x0fff", "2024-02-29 20:05:00", "first", "a"]),
    dts(9, "DELETE", "400@10", oldColumns=["1", "0x0aff", "2024-02-29 20:05:00.5", None, "b"],
        newColumns=None),
    dts(10, "DDL", "500@10", sql="ALTER TABLE items ADD COLUMN x int", executionTime=0),
    # 10-14: rejects
    dts(11, "FOO", "510@10"),
    dts(12, "INSERT", "520@10", schemaName=None, tableName=None, objectName=None,
        newColumns=["3", None, None, None, None]),
    dts(13, "INSERT", "530@10", newColumns={"payload": "0x00"}),
    dts(14, "INSERT", "540@10", newColumns=["4", None]),
    "not json",
    # 15: excluded table
    dts(15, "INSERT", "550@10", schemaName="traps", tableName="ignored_items",
        objectName="traps.ignored_items",
        newColumns=["5", None, None, None, None]),
]
DTS_REJECTS = {
    10: "unknown messageType: FOO",
    11: "DML without database or table",
    12: MISSING_KEY.format(table="shop.items"),
    13: "newColumns missing, unreadable or not aligned with columns",
    14: "malformed JSON or a field of the wrong type",
}
DTS_CONTROL = [0, 3, 4, 5]

# ---------------------------------------------------------------- KafkaRiverCanal


def krc(event: str, columns, keys=("id",), binlog="100@mysql-bin.000001", **extra) -> str:
    message = {"binlog": binlog, "time": 1_700_000_000_000, "canalTime": 1_700_000_000_500,
               "db": "traps", "table": "k1", "event": event, "columns": columns, **extra}
    if keys is not None:
        message["keys"] = list(keys)
    return json.dumps(message, ensure_ascii=False)


KRC_UPDATE_COLUMNS = [
    {"n": "id", "t": "int(11)", "v": "1", "null": False, "updated": False},
    {"n": "a", "t": "varchar(5)", "v": "new", "origin_val": "old", "null": False, "updated": True},
    # origin_val on a column NOT flagged updated is ignored
    {"n": "b", "t": "varchar(5)", "v": "same", "origin_val": "bogus", "null": False, "updated": False},
    # updated column without origin_val: it was NULL
    {"n": "c", "t": "varchar(5)", "v": "x", "null": False, "updated": True},
    {"n": "d", "t": "varchar(5)", "v": "", "null": True, "updated": False},
    {"n": "e", "t": "enum('p','q')", "v": "2", "null": False, "updated": False},
]
KRC_MESSAGES = [
    krc("u", KRC_UPDATE_COLUMNS),
    krc("x", KRC_UPDATE_COLUMNS),
    # no keys: a table without primary key, identified by its image (not rejected)
    krc("i", KRC_UPDATE_COLUMNS[:1], keys=None),
    krc("i", [KRC_UPDATE_COLUMNS[0], KRC_UPDATE_COLUMNS[0]]),
    krc("i", KRC_UPDATE_COLUMNS[:1], binlog="garbage"),
    # 5: a TIMESTAMP rendered in this topic's zone, New York (UTC-5 in February)
    krc("i", [KRC_UPDATE_COLUMNS[0], {"n": "ts", "t": "timestamp(3)", "v": "2024-02-29 07:05:00.500", "null": False,
                                      "updated": False}], binlog="200@mysql-bin.000001", table="k2"),
]
KRC_REJECTS = {
    1: "unknown event: x",
    3: "column without a name or named twice",
    4: "unreadable binlog position: garbage",
}


def land_records(lake):
    """This module's records; one build of the shared lake (conftest.shared_lake) makes `built`."""
    lake.land("canal_flat", kcat_lines(CANAL_MESSAGES, CANAL_TOPIC))
    lake.land("tencent_dts", kcat_lines(DTS_RECORDS, DTS_TOPIC))
    lake.land("kafka_river_canal", kcat_lines(KRC_MESSAGES, KRC_TOPIC))


def changes(lake, topic: str, table: str) -> list[dict]:
    return lake.rows(
        "select op, row_key, primary_key, before, after, changed_columns, gtid, source_system, "
        "kafka_offset, change_order from {schema}.cdc_changelog "
        f"where kafka_topic = '{topic}' and table_name = '{table}' order by change_order"
    )


def record_kinds(lake, topic: str) -> dict[int, str]:
    rows = lake.rows(
        "select kafka_offset, record_kind from {schema}.int_raw_records_unioned "
        f"where kafka_topic = '{topic}'"
    )
    return {r["kafka_offset"]: r["record_kind"] for r in rows}


def rejects(lake, topic: str) -> dict[int, str]:
    rows = lake.rows(
        "select kafka_offset, reject_reason, raw_value from {schema}.cdc_rejected_messages "
        f"where kafka_topic = '{topic}'"
    )
    assert all(r["raw_value"] for r in rows)
    return {r["kafka_offset"]: r["reject_reason"] for r in rows}


# ---------------------------------------------------------------- Canal


def test_canal_values_are_canonical(built):
    [row] = changes(built, CANAL_TOPIC, "t1")
    assert row["after"] == {
        "id": "1", "e": "shipped", "s": "a,c", "e2": "paid", "s0": "", "bin": "00ff10", "blb": "4142",
        "b": "5", "dt": "2024-02-29 13:05:00.12", "tm": "00:00:01.25", "ts": "2024-02-29 12:05:00.5",
        "dec": "12.50", "f": "3.14", "d": "0.1", "j": '{"a": 1}', "txt": "O'Brien",
    }
    # pkNames ["id", "id"] is one key column: the row key is the value, not a JSON array
    assert row["row_key"] == "1" and row["primary_key"] == {"id": "1"}
    assert row["gtid"] == "3e11fa47-71ca-11e1-9e33-c80aa9429562:23"


def test_canal_multi_row_update_and_null_to_value(built):
    rows = changes(built, CANAL_TOPIC, "t2")
    summary = [(r["op"], r["row_key"], r["changed_columns"]) for r in rows]
    assert summary == [
        ("c", "1", ["a", "b", "c", "id"]),
        ("c", "2", ["a", "b", "c", "id"]),
        ("u", "1", ["a"]),
        ("u", "2", ["b"]),
        ("u", "1", ["c"]),
    ]
    assert rows[2]["before"] == {"id": "1", "a": "x1", "b": "y1", "c": None}
    assert rows[3]["before"] == {"id": "2", "a": "x1", "b": "y1", "c": None}
    assert rows[3]["after"] == {"id": "2", "a": "x1", "b": "y2", "c": None}
    assert rows[4]["before"] == {"id": "1", "a": "x2", "b": "y1", "c": None}
    assert rows[4]["after"] == {"id": "1", "a": "x2", "b": "y1", "c": "v"}


def test_canal_rejects_and_filtered(built):
    assert rejects(built, CANAL_TOPIC) == CANAL_REJECTS
    kinds = record_kinds(built, CANAL_TOPIC)
    assert kinds == {0: "dml", 1: "dml", 2: "dml", 3: "dml", 4: "rejected", 5: "rejected",
                     6: "rejected", 7: "rejected", 8: "filtered", 9: "filtered", 10: "control",
                     11: "dml", 12: "dml", 13: "dml", 14: "ddl", 15: "dml"}
    assert changes(built, CANAL_TOPIC, "ignored_t") == []


def test_canal_binary_padded_and_one_batch_in_offset_order(built):
    rows = changes(built, CANAL_TOPIC, "t4")
    summary = [(r["op"], r["row_key"], r["kafka_offset"]) for r in rows]
    assert summary == [("c", "1", 11), ("c", "2", 11), ("d", "2", 12)]
    assert [r["after"]["fix"] for r in rows[:2]] == ["00ff1000", "00000000"]
    current = built.rows(
        "select table_name, row_key, is_deleted, op from {schema}.cdc_current "
        f"where source_system = '{CANAL_TOPIC}' and table_name in ('t4', 't5') order by table_name, row_key"
    )
    assert [(r["table_name"], r["row_key"], r["is_deleted"], r["op"]) for r in current] == [
        ("t4", "1", False, "c"), ("t4", "2", True, "d"),
        ("t5", "1", True, "t"), ("t5", "2", True, "t"), ("t5", "3", False, "c"),
    ]


# ---------------------------------------------------------------- Tencent DTS


def test_tencent_control_records_are_not_rejected(built):
    kinds = record_kinds(built, DTS_TOPIC)
    assert [o for o, k in sorted(kinds.items()) if k == "control"] == DTS_CONTROL
    assert kinds[9] == "ddl" and kinds[15] == "filtered"
    assert rejects(built, DTS_TOPIC) == DTS_REJECTS
    assert len(kinds) == len(DTS_RECORDS)


def test_tencent_images_in_both_shapes(built):
    rows = changes(built, DTS_TOPIC, "items")
    assert [(r["op"], r["row_key"]) for r in rows] == [
        ("c", "1"), ("c", "2"), ("u", "2"), ("u", "2"), ("d", "1"),
    ]
    assert {r["source_system"] for r in rows} == {"7001"}
    assert rows[0]["after"] == {
        "id": "1", "payload": "0aff", "ts": "2024-02-29 12:05:00.5", "note": None, "st": "b",
    }
    assert rows[1]["after"] == {
        "id": "2", "payload": "0fff", "ts": "2024-02-29 12:05:00", "note": None, "st": "a",
    }
    # rows of one event share the position; the record id orders them
    assert rows[0]["change_order"] < rows[1]["change_order"]
    # file 9 before file 10 (numbers), whatever the landing order
    notes = [(r["before"]["note"], r["after"]["note"]) for r in rows[2:4]]
    assert notes == [(None, "first"), ("first", "second")]
    # a partial object as old image is completed from the new image
    assert rows[3]["before"] == {
        "id": "2", "payload": "0fff", "ts": "2024-02-29 12:05:00", "note": "first", "st": "a",
    }
    assert rows[4]["after"] is None and rows[4]["before"]["st"] == "b"


def test_tencent_current_and_ddl(built):
    current = built.rows(
        "select row_key, is_deleted, image from {schema}.cdc_current "
        "where source_system = '7001' order by row_key"
    )
    assert [(r["row_key"], r["is_deleted"]) for r in current] == [("1", True), ("2", False)]
    assert current[1]["image"]["note"] == "second"
    ddl = built.rows(
        "select source_system, database_name, ddl_type, ddl_statement, gtid from {schema}.cdc_schema_changes "
        f"where kafka_topic = '{DTS_TOPIC}'"
    )
    assert ddl == [{
        "source_system": "7001", "database_name": "shop", "ddl_type": "ALTER",
        "ddl_statement": "ALTER TABLE items ADD COLUMN x int",
        "gtid": "c7c98333-6006-11ed-bfc9-b8cef6e1a231:10",
    }]


# ---------------------------------------------------------------- KafkaRiverCanal


def test_krc_origin_val_only_on_updated_columns(built):
    row, keyless = changes(built, KRC_TOPIC, "k1")
    assert (keyless["op"], keyless["after"], keyless["primary_key"]) == ("c", {"id": "1"}, {})
    assert row["after"] == {"id": "1", "a": "new", "b": "same", "c": "x", "d": None, "e": "q"}
    assert row["before"] == {"id": "1", "a": "old", "b": "same", "c": None, "d": None, "e": "q"}
    assert row["changed_columns"] == ["a", "c"]


def test_krc_rejects(built):
    assert rejects(built, KRC_TOPIC) == KRC_REJECTS


def test_same_value_same_text_across_formats(built):
    """One instant, rendered in Shanghai by Canal and Tencent DTS and in New York by
    KafkaRiverCanal (each topic's zone from `source_time_zone_by_topic`), is one UTC text."""
    canal_ts = changes(built, CANAL_TOPIC, "t1")[0]["after"]["ts"]
    dts_ts = changes(built, DTS_TOPIC, "items")[0]["after"]["ts"]
    [krc_row] = changes(built, KRC_TOPIC, "k2")
    assert canal_ts == dts_ts == krc_row["after"]["ts"] == "2024-02-29 12:05:00.5"
