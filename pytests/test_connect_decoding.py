"""Kafka Connect values decided by their JSON type, never by their look (issue 16, defects 1 and 2).

A Connect `Decimal` arrives as a JSON string holding base64 two's-complement bytes (the
JsonConverter default), or as a JSON number (`decimal.format=NUMERIC`). Text such as `1234` or
`20000000000` is both a number and valid base64; reading it as base64 turned 1234 into -2658824
with nothing rejected. And a number with a fraction was read as a double: 33 integer digits
overflowed and the whole message was rejected. The expected texts below are the numbers
themselves, written with their scale (docs/canonical_values.md); each value is sent both ways.
"""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import pytest

from cdc_lake.testing.harness import kcat_lines

DECIMAL = "org.apache.kafka.connect.data.Decimal"
# (MySQL type, precision, scale, the value as MySQL prints it)
VALUES = [
    ("bigint unsigned", 20, 0, "20000000000"),
    ("bigint unsigned", 20, 0, "18446744073709551615"),
    ("decimal(8,0)", 8, 0, "12"),
    ("decimal(8,0)", 8, 0, "1234"),
    ("decimal(8,0)", 8, 0, "-1234"),
    ("decimal(65,3)", 65, 3, "123456789876543212345678987654321.123"),
    ("decimal(65,30)", 65, 30, "12345678901234567890123456789012345.123456789012345678901234567890"),
    ("decimal(10,2)", 10, 2, "0.10"),
] + [("decimal(30,0)", 30, 0, "9" * n) for n in (1, 4, 8, 12, 16, 20, 24)]


def base64_of(text: str, scale: int) -> str:
    whole, _, fraction = text.partition(".")
    assert len(fraction) == scale
    unscaled = int(whole + fraction)
    size = max(1, (unscaled.bit_length() + 8) // 8)
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()


def record(values: dict[str, object], fields: list[dict], pos: int) -> str:
    row = {"type": "struct", "fields": fields, "optional": True, "name": "num.Value"}
    schema = {"type": "struct", "fields": [{**row, "field": "before"}, {**row, "field": "after"},
                                           {"type": "struct", "fields": [], "field": "source"}]}
    payload = {"before": None, "after": values, "op": "c", "ts_ms": 1709211900999,
               "source": {"connector": "mysql", "name": "srv", "ts_ms": 1709211900000, "snapshot": "false",
                          "db": "num", "table": "t", "file": "mysql-bin.000001", "pos": pos, "row": 0}}
    # a JSON number with its own digits (json.dumps would not keep 65 digits)
    text = json.dumps({"schema": schema, "payload": payload})
    return text


def messages() -> tuple[list[str], list[str]]:
    values, keys = [], []
    for i, (_, precision, scale, text) in enumerate(VALUES):
        fields = [{"type": "int32", "optional": False, "field": "id"},
                  {"type": "bytes", "optional": True, "name": DECIMAL, "field": "v",
                   "parameters": {"scale": str(scale), "connect.decimal.precision": str(precision)}}]
        as_string = record({"id": 2 * i, "v": base64_of(text, scale)}, fields, 100 + 2 * i)
        # the number's own digits in the JSON text, as JsonConverter writes a BigDecimal
        as_number = record({"id": 2 * i + 1, "v": "@NUMBER@"}, fields, 101 + 2 * i).replace('"@NUMBER@"', text)
        values += [as_string, as_number]
        keys += [json.dumps({"id": 2 * i}), json.dumps({"id": 2 * i + 1})]
    # exponent notation, as a BigDecimal may print: 1.2345E+3 with scale 1 is 1234.5
    fields = [{"type": "int32", "optional": False, "field": "id"},
              {"type": "bytes", "optional": True, "name": DECIMAL, "field": "v", "parameters": {"scale": "1"}}]
    values.append(record({"id": 999, "v": "@N@"}, fields, 999).replace('"@N@"', "1.2345E+3"))
    keys.append(json.dumps({"id": 999}))
    return values, keys


# Geometry (defect 6): one canonical text from every format, MySQL's `LOWER(HEX(g))`: the SRID as
# 4 bytes little-endian, then the WKB (here written with struct, not with the project's code).
POINTS = {1: (0, 1.0, 2.0), 2: (4326, -71.5, 42.25)}


def wkb_point(x: float, y: float) -> bytes:
    return struct.pack("<BIdd", 1, 1, x, y)


def mysql_internal(srid: int, x: float, y: float) -> bytes:
    return struct.pack("<I", srid) + wkb_point(x, y)


def geometry_messages() -> dict[str, tuple[list[str], list[str] | None]]:
    canal, dts, debezium, keys = [], [], [], []
    for id_, (srid, x, y) in POINTS.items():
        internal = mysql_internal(srid, x, y)
        canal.append(json.dumps({
            "data": [{"id": str(id_), "g": internal.decode("latin-1")}], "database": "geo", "es": 1_700_000_000_000,
            "id": id_, "isDdl": False, "mysqlType": {"id": "int(11)", "g": "point"}, "old": None,
            "pkNames": ["id"], "table": "places", "ts": 1_700_000_000_001, "type": "INSERT",
        }))
        dts.append(json.dumps({
            "id": id_, "version": 1, "messageType": "INSERT", "fileName": "mysql-bin.000001",
            "position": f"{100 + id_}@1", "timestamp": 1_700_000_000, "serverId": 1, "schemaName": "geo",
            "tableName": "places", "objectName": "geo.places", "pkNames": ["id"],
            "columns": [{"name": "id", "dataTypeNumber": 3, "isKey": True, "originalType": "int(11)"},
                        {"name": "g", "dataTypeNumber": 255, "isKey": False, "originalType": "point"}],
            "oldColumns": None, "newColumns": [str(id_), "0x" + internal.hex().upper()],
        }))
        fields = [{"type": "int32", "optional": False, "field": "id"},
                  {"type": "struct", "optional": True, "name": "io.debezium.data.geometry.Point", "field": "g",
                   "fields": [{"type": "double", "field": "x"}, {"type": "double", "field": "y"},
                              {"type": "bytes", "optional": True, "field": "wkb"},
                              {"type": "int32", "optional": True, "field": "srid"}]}]
        point = {"x": x, "y": y, "wkb": base64.b64encode(wkb_point(x, y)).decode(), "srid": srid or None}
        debezium.append(record({"id": id_, "g": point}, fields, 500 + id_).replace('"table": "t"', '"table": "places"'))
        keys.append(json.dumps({"id": id_}))
    return {"canal_flat": (canal, None), "tencent_dts": (dts, None), "debezium": (debezium, keys)}


def land_records(lake):
    """This module's records; one build of the shared lake (conftest.shared_lake) makes `built`."""
    values, keys = messages()
    lake.land("debezium", kcat_lines(values, "numbers", keys=keys))
    for fmt, (records, record_keys) in geometry_messages().items():
        lake.land(fmt, kcat_lines(records, f"geo-{fmt}", keys=record_keys))


def test_geometry_is_the_same_hex_from_every_format(built):
    rows = built.rows(
        "select source_format, row_key, after['g'] as g from {schema}.cdc_changelog where table_name = 'places'"
    )
    actual = {(r["source_format"], int(r["row_key"])): r["g"] for r in rows}
    expected = {
        (fmt, id_): mysql_internal(*point).hex()
        for fmt in ("canal_flat", "tencent_dts", "debezium") for id_, point in POINTS.items()
    }
    assert actual == expected


def test_every_value_is_the_number_sent_whichever_json_type(built):
    rows = built.rows("select row_key, after['v'] as v from {schema}.cdc_changelog where table_name = 't'")
    actual = {int(r["row_key"]): r["v"] for r in rows}
    expected = {}
    for i, (_, _, _, text) in enumerate(VALUES):
        expected[2 * i] = expected[2 * i + 1] = text
    expected[999] = "1234.5"
    assert actual == expected


def test_nothing_rejected(built):
    assert built.rows("select reject_reason from {schema}.cdc_rejected_messages") == []


CORRUPTED = [
    # (value, source type): what the look-based decoder produced from real data
    ("-2644399324058561715", "bigint unsigned"),  # 20000000000 read as base64
    ("-" + "1" * 36, "bigint(20) unsigned"),  # 18446744073709551615 read as base64
    ("-2658824", "decimal(3,0)"),  # 1234 read as base64, into a column of 3 digits
    ("1.2345678987654321E32", "decimal(65,3)"),  # a number read as a double
    ("300", "tinyint(4)"),
    ("12.5", "decimal(10,2)"),
]


# the value-level guards a user's own `dbt build` runs, each alone
RANGE_GUARD = ("test", "--select", "cdc_changelog,test_name:numeric_values_in_range", "--exclude", "test_type:unit")
SENT_GUARD = (
    "test", "--select", "cdc_changelog,test_name:connect_numbers_match_sent_json", "--exclude", "test_type:unit"
)


def data_test_results(result: Any) -> list[Any]:
    """A dbt run's results of data tests (the results also hold the project's on-run-start hook)."""
    return [r for r in result.result.results if r.node.resource_type == "test"]


@pytest.mark.parametrize("guard", [RANGE_GUARD, SENT_GUARD], ids=["range", "sent_numbers"])
def test_the_guard_passes_on_what_was_sent(built, guard):
    assert [str(r.status) for r in data_test_results(built.dbt(*guard))] == ["pass"]


def test_the_range_test_fails_on_each_corrupted_value(built):
    """The value-level guard a user's own `dbt build` runs: each corrupted value, a row of its own,
    is one failing row (the test returns one per bad value), so all of them fail it or the count
    falls short. (A wrong value that fits its type, like -41 for decimal(8,0), is only caught by
    the decoding test above.)"""
    table = f"{built.schema}.cdc_changelog"
    rows = ", ".join(
        f"('x{key}', 'debezium', 'srv', 'num', 'corrupt', 'c', '{key}', map('id', '{key}'), false, null, "
        f"map('id', '{key}', 'v', '{value}'), array(), null, map('id', 'int', 'v', '{mysql_type}'), "
        f"current_timestamp(), null, '0', null, null, 'corrupt', 0, {key}, 0, 0)"
        for key, (value, mysql_type) in enumerate(CORRUPTED, start=1)
    )
    built.spark.sql(
        f"insert into {table} (change_id, source_format, source_system, database_name, table_name, op, row_key, "
        "primary_key, is_keyless, before, after, unavailable_columns, changed_columns, column_types, commit_ts, "
        "capture_ts, change_order, "
        f"source_position, gtid, kafka_topic, kafka_partition, kafka_offset, row_in_message, landing_seq) values {rows}"
    )
    try:
        [test] = data_test_results(built.dbt(*RANGE_GUARD, expect_success=False))
        assert (str(test.status), test.failures) == ("fail", len(CORRUPTED))
    finally:
        built.spark.sql(f"delete from {table} where table_name = 'corrupt'")


@pytest.mark.parametrize(
    ("row_key", "corrupted"),
    [
        ("5", "-41"),  # 12 in a decimal(8,0), read as base64: in range, so only this test sees it
        ("7", "-2658824"),  # 1234 in a decimal(8,0), read as base64: in range too
        ("1", "-2644399324058561715"),  # 20000000000 in a bigint unsigned
    ],
)
def test_the_sent_numbers_test_fails_on_a_corrupted_value(built, row_key, corrupted):
    """The corruptions the look-based decoder made from values sent as JSON numbers (ids 1, 5 and
    7 carry 20000000000, 12 and 1234 as numbers), written into the change log in their place."""
    table = f"{built.schema}.cdc_changelog"
    where = f"database_name = 'num' and table_name = 't' and row_key = '{row_key}'"
    (original,) = built.rows(f"select after['v'] as v from {table} where {where}")
    built.spark.sql(f"update {table} set after = map('id', '{row_key}', 'v', '{corrupted}') where {where}")
    try:
        result = built.dbt(*SENT_GUARD, expect_success=False)
        assert [str(r.status) for r in data_test_results(result)] == ["fail"]
    finally:
        built.spark.sql(f"update {table} set after = map('id', '{row_key}', 'v', '{original['v']}') where {where}")
