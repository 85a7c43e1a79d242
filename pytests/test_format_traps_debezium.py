"""Format traps of the debezium and lindorm formats, on hand-made messages (one build).

Debezium: every logical type decoded into canonical text (base64 two's-complement decimals, also
negative and beyond 38 digits; epoch days, ms, µs, ns; zoned timestamps; times beyond 24 h; bits
little-endian; bytes; booleans as BIT(1)), schema-less payloads, snapshot rows (op r, and dtle's op
c with snapshot=true), both kinds of tombstone, heartbeats and transaction markers, Debezium's own
schema-change and truncate events, ordering by binlog file number (not landing order), a
re-delivery, and every reject reason. Lindorm: HBase base64 cells (text, binary, invalid), a
column-deleting update, a re-delivery recognised by content, rejects.
"""

from __future__ import annotations

import base64
import json

from cdc_lake.testing.harness import kcat_lines

DECIMAL = "org.apache.kafka.connect.data.Decimal"
BIG = 123456789012345678901234567890123456789012345
# (column, Connect type, logical name, parameters, JSON value, canonical text, column type)
TYPES = [
    ("id", "int32", None, None, 1, "1", "int32"),
    ("dec_neg", "bytes", DECIMAL, {"scale": "2", "connect.decimal.precision": "10"},
     "+y4=", "-12.34", "decimal(10,2)"),
    ("dec_small", "bytes", DECIMAL, {"scale": "3", "connect.decimal.precision": "5"}, "BQ==", "0.005", "decimal(5,3)"),
    ("dec_minus_cent", "bytes", DECIMAL, {"scale": "2"}, "/w==", "-0.01", "decimal(?,2)"),
    ("dec_zero_scale", "bytes", DECIMAL, {"scale": "0", "connect.decimal.precision": "20"},
     base64.b64encode((2**64 - 1).to_bytes(9, "big", signed=True)).decode(), "18446744073709551615", "decimal(20,0)"),
    ("dec_big", "bytes", DECIMAL, {"scale": "5", "connect.decimal.precision": "65"},
     base64.b64encode(BIG.to_bytes(19, "big", signed=True)).decode(),
     "1234567890123456789012345678901234567890.12345", "decimal(65,5)"),
    ("dec_big_neg", "bytes", DECIMAL, {"scale": "10", "connect.decimal.precision": "65"},
     base64.b64encode((1 - 10**60).to_bytes(26, "big", signed=True)).decode(),
     "-" + "9" * 50 + "." + "9" * 10, "decimal(65,10)"),
    ("dec_numeric", "bytes", DECIMAL, {"scale": "2"}, 12.5, "12.50", "decimal(?,2)"),
    ("dec_as_string", "string", None, None, "12.50", "12.50", "string"),
    ("dec_as_double", "double", None, None, 12.5, "12.5", "float64"),
    ("d", "int32", "io.debezium.time.Date", None, 19782, "2024-02-29", "date"),
    ("d_old", "int32", "io.debezium.time.Date", None, -1, "1969-12-31", "date"),
    ("dt_ms", "int64", "io.debezium.time.Timestamp", None, 1709211900120, "2024-02-29 13:05:00.12", "datetime"),
    ("dt_us", "int64", "io.debezium.time.MicroTimestamp", None, 1709211900000005, "2024-02-29 13:05:00.000005",
     "datetime"),
    ("dt_us_old", "int64", "io.debezium.time.MicroTimestamp", None, -1, "1969-12-31 23:59:59.999999", "datetime"),
    ("dt_ns", "int64", "io.debezium.time.NanoTimestamp", None, 1709211900000000000, "2024-02-29 13:05:00",
     "datetime"),
    ("ts_zoned", "string", "io.debezium.time.ZonedTimestamp", None, "2024-02-29T13:05:00.5+01:00",
     "2024-02-29 12:05:00.5", "timestamp"),
    ("ts_utc", "string", "io.debezium.time.ZonedTimestamp", None, "2024-02-29T12:05:00Z", "2024-02-29 12:05:00",
     "timestamp"),
    ("t_min", "int64", "io.debezium.time.MicroTime", None, -3020399000000, "-838:59:59", "time"),
    ("t_frac", "int64", "io.debezium.time.MicroTime", None, 1250000, "00:00:01.25", "time"),
    ("t_ms", "int32", "io.debezium.time.Time", None, 45296789, "12:34:56.789", "time"),
    ("bits", "bytes", "io.debezium.data.Bits", {"length": "3"}, "BQ==", "5", "bit(3)"),
    ("bits16", "bytes", "io.debezium.data.Bits", {"length": "16"}, "AQI=", "513", "bit(16)"),
    ("bit1", "boolean", None, None, True, "1", "boolean"),
    ("bin", "bytes", None, None, "AP8Q", "00ff10", "bytes"),
    # compact, as Debezium writes it -> as MySQL prints it; separators inside strings untouched
    ("js", "string", "io.debezium.data.Json", None, '{"k":"a:b, \\"c\\"","n":[1,{"x":null}],"e":{}}',
     '{"k": "a:b, \\"c\\"", "n": [1, {"x": null}], "e": {}}', "json"),
    ("e", "string", "io.debezium.data.Enum", {"allowed": "new,shipped"}, "shipped", "shipped", "enum('new','shipped')"),
    ("s", "string", "io.debezium.data.EnumSet", {"allowed": "a,b,c"}, "a,c", "a,c", "set('a','b','c')"),
    ("f", "float", None, None, 3.140000104904175, "3.14", "float32"),
    ("tiny", "int16", None, None, -5, "-5", "int16"),
    ("y", "int32", "io.debezium.time.Year", None, 2024, "2024", "year"),
    ("txt", "string", None, None, "O'Brien \"x\" ✓", "O'Brien \"x\" ✓", "string"),
    ("nothing", "string", None, None, None, None, "string"),
]


def field(name: str, ctype: str, logical: str | None, params: dict | None) -> dict:
    out: dict = {"type": ctype, "optional": True, "field": name}
    if logical:
        out["name"] = logical
    if params:
        out["parameters"] = params
    return out


def envelope(fields: list[dict], payload: dict) -> str:
    row = {"type": "struct", "fields": fields, "optional": True, "name": "traps.Value"}
    schema = {"type": "struct", "fields": [{**row, "field": "before"}, {**row, "field": "after"},
                                           {"type": "struct", "fields": [], "field": "source"}]}
    return json.dumps({"schema": schema, "payload": payload}, ensure_ascii=False)


def dml(op: str, before: dict | None, after: dict | None, file: str = "mysql-bin.000001", pos: int = 100,
        table: str | None = "types", snapshot: str = "false", db: str = "traps", fields: list[dict] | None = None,
        schema: bool = True, server: str = "srv", ts_ms: int = 1709211900000) -> str:
    payload = {
        "before": before, "after": after, "op": op, "ts_ms": ts_ms + 999,
        "source": {"version": "2.5.0.Final", "connector": "mysql", "name": server, "ts_ms": ts_ms,
                   "snapshot": snapshot, "db": db, "table": table, "server_id": 1, "gtid": None,
                   "file": file, "pos": pos, "row": 0},
    }
    if not schema:
        return json.dumps(payload)
    return envelope(fields or [field("id", "int32", None, None), field("v", "string", None, None)], payload)


KEY = json.dumps({"schema": {"type": "struct", "fields": [{"type": "int32", "field": "id"}]}, "payload": {"id": 1}})
ALL_TYPES = dml("c", None, {t[0]: t[4] for t in TYPES}, fields=[field(*t[:4]) for t in TYPES])
# (value, key) per topic, in landing (offset) order
DEBEZIUM = {
    "types": [(ALL_TYPES, KEY)],
    "order": [
        # landed newest first: the binlog position decides, by file number (10 > 9), not offsets
        (dml("u", {"id": 7, "v": "b"}, {"id": 7, "v": "c"}, file="mysql-bin.000010", pos=4), '{"id":7}'),
        (dml("u", {"id": 7, "v": "a"}, {"id": 7, "v": "b"}, file="mysql-bin.000009", pos=999999), '{"id":7}'),
        (dml("c", None, {"id": 7, "v": "a"}, file="mysql-bin.000009", pos=5), '{"id":7}'),
        # a re-delivery of the update above, at a new offset
        (dml("u", {"id": 7, "v": "b"}, {"id": 7, "v": "c"}, file="mysql-bin.000010", pos=4), '{"id":7}'),
    ],
    "snapshot": [
        (dml("r", None, {"id": 1, "v": "x"}, snapshot="true", table="snap"), '{"id":1}'),
        (dml("r", None, {"id": 2, "v": "y"}, snapshot="true", table="snap"), '{"id":2}'),
        (dml("c", None, {"id": 3, "v": "z"}, snapshot="last", table="snap"), '{"id":3}'),
    ],
    "schemaless": [(dml("d", {"id": 5, "v": 12.5}, None, table="plain", schema=False), '{"id":5}')],
    "control": [
        (None, '{"id":5}'),  # Kafka tombstone
        ('{"schema":null,"payload":null}', '{"id":5}'),  # dtle's tombstone text
        ('{"ts_ms":1709211900000}', '{"serverName":"srv"}'),  # heartbeat
        ('{"status":"BEGIN","id":"abc:1","event_count":null,"data_collections":null}', None),
    ],
    "ddl": [
        (json.dumps({"payload": {"source": {"name": "srv", "db": "traps", "table": "types", "file": "mysql-bin.000002",
                                            "pos": 77, "ts_ms": 1709211901000},
                                 "databaseName": "traps", "ddl": "ALTER TABLE types ADD COLUMN z int",
                                 "tableChanges": []}}), '{"databaseName":"traps"}'),
        (dml("t", None, None, pos=200), None),
    ],
    # one table from two connectors: `decimal.handling.mode=precise` (a declared decimal(10,2)),
    # then, later, `double` (a Connect double, which a DECIMAL or a DOUBLE column can be)
    "decimal_modes": [
        (dml("c", None, {"id": 1, "amount": "BNI="}, table="amounts", server="precise", fields=[
            field("id", "int32", None, None), field("amount", "bytes", DECIMAL,
                                                    {"scale": "2", "connect.decimal.precision": "10"})]), '{"id":1}'),
        (dml("c", None, {"id": 2, "amount": 12.5}, table="amounts", server="double", ts_ms=1709211999000, fields=[
            field("id", "int32", None, None), field("amount", "double", None, None)]), '{"id":2}'),
    ],
    "rejects": [
        ('{"payload": {"op": "c", ', '{"id":1}'),
        (dml("x", None, {"id": 1, "v": "a"}), '{"id":1}'),
        (dml("c", None, {"v": "a"}), '{"id":1}'),
        (dml("c", None, {"id": 1, "v": "@@@@"}, fields=[field("id", "int32", None, None),
                                                        field("v", "bytes", DECIMAL, {"scale": "2"})]), '{"id":1}'),
        (dml("c", None, {"id": 1, "v": "a"}, table=None), '{"id":1}'),
    ],
}
REJECT_REASONS = [
    "malformed JSON or a field of the wrong type",
    "unknown op: x",
    "key column id has no value in the row image of traps.types: the message names it as primary key but its row "
    "does not carry it; fix the producer or set var cdc_primary_keys for this table to columns every row carries",
    "undecodable value in column v (org.apache.kafka.connect.data.Decimal)",
    "DML without database or table",
]


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def lindorm(op: str, before: dict | None, after: dict | None, ts: int = 1725258833727, table: str = "t",
            lag: int = 10, fields: list[dict] | None = None) -> str:
    row = {"type": "struct", "fields": fields or [], "optional": True}
    schema = {"type": "struct", "fields": [{**row, "field": "before"}, {**row, "field": "after"}]} if fields else {}
    return json.dumps({"schema": schema, "payload": {
        "op": op, "ts_ms": ts + lag, "before": before, "after": after,
        "source": {"version": "v2.0", "db": "ld-traps", "namespace": "hb", "table": table, "ts_ms": ts},
    }})


SQL_FIELDS = [field("id", "int32", None, None), field("flag", "boolean", None, None),
              field("at", "int64", "org.apache.kafka.connect.data.Timestamp", None)]
SQL_V1 = {"id": 9, "flag": True, "at": 1709211900120}
SQL_V2 = {"id": 9, "flag": False, "at": 1709211900120}
# same commit second; the capture time (ts_ms) of the later change is the earlier one
LINDORM_SQL = [
    (lindorm("c", None, SQL_V1, table="sqlt", lag=900, fields=SQL_FIELDS), '{"id":9}'),
    (lindorm("u", SQL_V1, SQL_V2, table="sqlt", lag=5, fields=SQL_FIELDS), '{"id":9}'),
]


HB_ROW = {"ROW": b64(b"r1"), "f_text": b64("✓ ok".encode()), "f_bin": b64(b"\x00\xff"), "f_gone": b64(b"x")}
LINDORM = [
    lindorm("c", None, HB_ROW),
    lindorm("u", HB_ROW, {k: v for k, v in HB_ROW.items() if k != "f_gone"}, ts=1725258833728),
    lindorm("u", HB_ROW, {k: v for k, v in HB_ROW.items() if k != "f_gone"}, ts=1725258833728),  # re-delivery
    lindorm("c", None, {"ROW": b64(b"r2"), "f_x": "!!not base64!!"}),
    lindorm("z", None, HB_ROW),
    '{"payload":',
    None,
]


def land_records(lake):
    """This module's records; one build of the shared lake (conftest.shared_lake) makes `built`."""
    for topic, records in DEBEZIUM.items():
        values, keys = zip(*records, strict=True)
        lake.land("debezium", kcat_lines(values, topic, keys=keys))
    lake.land("lindorm", kcat_lines(LINDORM, "lindorm_traps"))
    values, keys = zip(*LINDORM_SQL, strict=True)
    lake.land("lindorm", kcat_lines(values, "lindorm_sql", keys=keys))


def one_change(lake, where: str) -> dict:
    rows = lake.rows(f"select * from {{schema}}.cdc_changelog where {where}")
    assert len(rows) == 1, rows
    return rows[0]


def test_every_logical_type_decodes_to_canonical_text(built):
    change = one_change(built, "kafka_topic = 'types'")
    expected = {t[0]: t[5] for t in TYPES}
    assert {k: change["after"].get(k) for k in expected} == expected
    assert set(change["after"]) == set(expected)
    assert change["column_types"] == {t[0]: t[6] for t in TYPES}
    assert change["row_key"] == "1"


def test_order_by_binlog_file_number_and_redelivery(built):
    changes = built.rows(
        "select after['v'] as v, source_position from {schema}.cdc_changelog "
        "where kafka_topic = 'order' order by change_order"
    )
    assert changes == [
        {"v": "a", "source_position": "mysql-bin.000009:5 row 0"},
        {"v": "b", "source_position": "mysql-bin.000009:999999 row 0"},
        {"v": "c", "source_position": "mysql-bin.000010:4 row 0"},
    ]
    current = built.rows("select image, op from {schema}.cdc_current where table_name = 'types' and row_key = '7'")
    assert current == [{"image": {"id": "7", "v": "c"}, "op": "u"}]


def test_snapshot_rows(built):
    rows = built.rows(
        "select row_key, op, source_position from {schema}.cdc_changelog where table_name = 'snap' order by row_key"
    )
    # all three share one binlog position: the row key keeps them apart
    assert rows == [
        {"row_key": "1", "op": "r", "source_position": "mysql-bin.000001:100 row 0 snapshot true"},
        {"row_key": "2", "op": "r", "source_position": "mysql-bin.000001:100 row 0 snapshot true"},
        {"row_key": "3", "op": "c", "source_position": "mysql-bin.000001:100 row 0 snapshot last"},
    ]


def test_schemaless_payload_keeps_json_text(built):
    change = one_change(built, "table_name = 'plain'")
    assert (change["op"], change["before"], change["after"], change["column_types"]) == (
        "d", {"id": "5", "v": "12.5"}, None, None,
    )


def test_control_records(built):
    kinds = built.rows(
        "select kafka_offset, record_kind from {schema}.base_debezium__messages where kafka_topic = 'control' "
        "order by kafka_offset"
    )
    assert [k["record_kind"] for k in kinds] == ["control"] * 4


def test_schema_change_and_truncate(built):
    ddl = built.rows(
        "select ddl_type, table_name, ddl_statement, source_position from {schema}.cdc_schema_changes "
        "order by change_order"
    )
    assert ddl == [
        {"ddl_type": "TRUNCATE", "table_name": "types", "ddl_statement": "TRUNCATE TABLE `types`",
         "source_position": "mysql-bin.000001:200"},
        {"ddl_type": "ALTER", "table_name": "types", "ddl_statement": "ALTER TABLE types ADD COLUMN z int",
         "source_position": "mysql-bin.000002:77"},
    ]
    # the TRUNCATE (mysql-bin.000001:200) removed row 1 (inserted at :100) without a row change;
    # row 7 was written after it (files 9 and 10) and stays
    current = built.rows(
        "select row_key, op, is_deleted, change_order = (select change_order from {schema}.cdc_schema_changes "
        "where ddl_type = 'TRUNCATE') as ended_by_truncate from {schema}.cdc_current "
        "where table_name = 'types' order by row_key"
    )
    assert current == [
        {"row_key": "1", "op": "t", "is_deleted": True, "ended_by_truncate": True},
        {"row_key": "7", "op": "u", "is_deleted": False, "ended_by_truncate": False},
    ]
    history = built.rows(
        "select row_key, is_current, closed_by_delete, closing_change_id = (select schema_change_id "
        "from {schema}.cdc_schema_changes where ddl_type = 'TRUNCATE') as closed_by_truncate "
        "from {schema}.cdc_history where table_name = 'types' and row_key = '1'"
    )
    assert history == [{"row_key": "1", "is_current": False, "closed_by_delete": True, "closed_by_truncate": True}]


def test_declared_decimal_outranks_a_connect_double(built):
    """Found end to end (issue 18): with both connectors' records in one lake, the later Connect
    `double` won the column's type, and the typed view rounded the precise connector's decimals
    through a double. A Connect type ranks below a declared one, whatever arrives last."""
    changes = built.rows(
        "select source_system, after['amount'] as amount, column_types['amount'] as amount_type "
        "from {schema}.cdc_changelog where table_name = 'amounts' order by source_system"
    )
    assert changes == [{"source_system": "double", "amount": "12.5", "amount_type": "float64"},
                       {"source_system": "precise", "amount": "12.34", "amount_type": "decimal(10,2)"}]
    typed = built.rows(
        "select mysql_type, spark_type from {schema}.cdc_typed_columns "
        "where table_name = 'amounts' and column_name = 'amount'"
    )
    assert typed == [{"mysql_type": "decimal(10,2)", "spark_type": "decimal(10,2)"}]


def test_rejects_have_reasons(built):
    rejected = built.rows(
        "select kafka_offset, reject_reason, raw_value from {schema}.cdc_rejected_messages "
        "where kafka_topic = 'rejects' order by kafka_offset"
    )
    assert [r["reject_reason"] for r in rejected] == REJECT_REASONS
    assert [r["raw_value"] for r in rejected] == [value for value, _ in DEBEZIUM["rejects"]]


def test_lindorm_hbase_cells_and_deleted_column(built):
    rows = built.rows(
        "select op, before, after, changed_columns, column_types, row_key from {schema}.cdc_changelog "
        "where kafka_topic = 'lindorm_traps' order by change_order"
    )
    assert len(rows) == 2  # the re-delivered update is one change
    insert, update = rows
    image = {"ROW": "r1", "f_text": "✓ ok", "f_bin": "00ff", "f_gone": "x"}
    assert (insert["op"], insert["after"], insert["row_key"]) == ("c", image, "r1")
    assert insert["column_types"] == {"ROW": "varchar", "f_text": "varchar", "f_bin": "varbinary", "f_gone": "varchar"}
    assert update["before"] == image
    assert update["after"] == {k: v for k, v in image.items() if k != "f_gone"}
    assert update["changed_columns"] == ["f_gone"]


def test_lindorm_rejects_and_control(built):
    outcome = built.rows(
        "select kafka_offset, record_kind, reject_reason from {schema}.base_lindorm__messages "
        "where kafka_topic = 'lindorm_traps' order by kafka_offset"
    )
    assert [(o["record_kind"], o["reject_reason"]) for o in outcome] == [
        ("dml", None),
        ("dml", None),
        ("dml", None),
        ("rejected", "undecodable value in column f_x (HBase cell is not base64)"),
        ("rejected", "unknown op: z"),
        ("rejected", "malformed JSON or a field of the wrong type"),
        ("control", None),
    ]


def test_lindorm_order_within_a_second_is_the_offset_order(built):
    rows = built.rows(
        "select op, after, column_types from {schema}.cdc_changelog where kafka_topic = 'lindorm_sql' "
        "order by change_order"
    )
    assert [r["op"] for r in rows] == ["c", "u"]
    assert rows[1]["after"] == {"id": "9", "flag": "0", "at": "2024-02-29 13:05:00.12"}
    assert rows[0]["column_types"] == {"id": "int32", "flag": "boolean", "at": "datetime"}
    current = built.rows("select op, image from {schema}.cdc_current where table_name = 'sqlt'")
    assert current == [{"op": "u", "image": {"id": "9", "flag": "0", "at": "2024-02-29 13:05:00.12"}}]
