"""Kafka Connect values decided by their JSON type, never by their look (issue 16, defects 1 and 2).

A Connect `Decimal` arrives as a JSON string holding base64 two's-complement bytes (the
JsonConverter default), or as a JSON number (`decimal.format=NUMERIC`). Text such as `1234` or
`20000000000` is both a number and valid base64; reading it as base64 turned 1234 into -2658824
with nothing rejected. And a number with a fraction was read as a double: 33 integer digits
overflowed and the whole message was rejected. The expected texts below are the numbers
themselves, written with their scale (docs/canonical_values.md); each value is sent both ways.

The PostgreSQL part (issue 68) does the same for every PostgreSQL type as Debezium's PostgreSQL
connector writes it, in each of its modes, with and without schemas, with the values a schema cannot
make canonical (rejected with their column), and checks the decoders against real messages; and
(issue 76) that a key-only delete of NOT NULL columns of every type keeps the row's last values.
"""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path
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
    land_postgres_records(lake)


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
    """The decimal and geometry records (the PostgreSQL ones below hold values rejected on purpose)."""
    assert built.rows(
        "select reject_reason from {schema}.cdc_rejected_messages where kafka_topic not like 'pg%'"
    ) == []


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


# PostgreSQL through Debezium (issue 68): every PostgreSQL type as Debezium's PostgreSQL connector
# (3.5, its docs and PostgresValueConverter) writes it through Kafka Connect's JSON converter, under
# the default modes and the others a connector may set, hand-written in the connector's envelope;
# and the real messages in fixtures/postgres/debezium_pg_sample.jsonl. Expected texts are
# docs/canonical_values.md's, written out here value by value, not computed by the project's code.

PG_SERVER = "pgtypes"
PG_DB = "pgdb"
DECIMAL_NAME = DECIMAL
VSD = "io.debezium.data.VariableScaleDecimal"
VSD_SCHEMA = {"type": "struct", "name": VSD, "version": 1, "doc": "Variable scaled decimal",
              "fields": [{"type": "int32", "optional": False, "field": "scale"},
                         {"type": "bytes", "optional": False, "field": "value"}]}
POINT_SCHEMA = {"type": "struct", "name": "io.debezium.data.geometry.Point", "version": 1,
                "fields": [{"type": "double", "optional": False, "field": "x"},
                           {"type": "double", "optional": False, "field": "y"},
                           {"type": "bytes", "optional": True, "field": "wkb"},
                           {"type": "int32", "optional": True, "field": "srid"}]}


def named(type_: str, name: str | None = None, **parameters: str) -> dict:
    """A Connect field schema: its type, logical name and parameters, as JsonConverter writes them."""
    schema: dict[str, Any] = {"type": type_}
    if name:
        schema.update(name=name, version=1)
    if parameters:
        schema["parameters"] = parameters
    return schema


def array_of(items: dict) -> dict:
    return {"type": "array", "items": {**items, "optional": True}}


def dec(text: str, scale: int) -> str:
    """A Connect Decimal's value: base64 of the unscaled value's two's-complement bytes."""
    return base64_of(text, scale)


def vsd(text: str) -> dict:
    """Debezium's VariableScaleDecimal: the scale of the text as written, and the unscaled bytes."""
    scale = len(text.partition(".")[2])
    return {"scale": scale, "value": base64_of(text, scale)}


def bits(value: int) -> str:
    """Debezium's Bits: the bit string's value, little-endian, in as many bytes as it needs."""
    return base64.b64encode(value.to_bytes((value.bit_length() + 7) // 8, "little")).decode()


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


DAYS_2024_02_29 = 19782
US_2024_02_29_13_05_00_12 = 1709211900120000
INF_DAYS, MINUS_INF_DAYS = -2147472692, -2147472691  # Debezium's epoch days of 'infinity'::date, '-infinity'
INF_US, MINUS_INF_US = 9223372036825200000, -9223372036832400000  # PGStatement.DATE_(POSITIVE|NEGATIVE)_INFINITY
MIN_US = -210866803200000000  # 4714-11-24 00:00:00 BC, PostgreSQL's first timestamp
MAX_US = 9223371331200000000 - 1  # 294247-01-01 23:59:59.999999, the last whole day µs since 1970 hold
MAX_MS = 9224318015999999  # 294276-12-31 23:59:59.999, PostgreSQL's last timestamp, in ms
TEXT = "O'Brien \"x\" 😀 日本語 line1\nline2\ttab\\"
UUID = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"

# Debezium's default modes (decimal precise, time adaptive, interval numeric, hstore json, binary bytes).
# column -> (field schema, [value sent for ids 1 (minima) .. 6], [canonical text for ids 1 .. 6]);
# id 3 holds NULL everywhere, 4 ordinary values, 5 and 6 the special values (NaN, ±infinity).
PG_TYPES: dict[str, tuple[dict, list, list]] = {
    "c_smallint": (named("int16"), [-32768, 32767, None, -1, 0, 0], ["-32768", "32767", None, "-1", "0", "0"]),
    "c_int": (named("int32"), [-2147483648, 2147483647, None, 42, 0, 0],
              ["-2147483648", "2147483647", None, "42", "0", "0"]),
    "c_bigint": (named("int64"), [-(2 ** 63), 2 ** 63 - 1, None, -5, 0, 0],
                 [str(-(2 ** 63)), str(2 ** 63 - 1), None, "-5", "0", "0"]),
    "c_numeric": (named("bytes", DECIMAL_NAME, scale="5", **{"connect.decimal.precision": "20"}),
                  [dec("-999999999999999.99999", 5), dec("999999999999999.99999", 5), None, dec("12.50000", 5),
                   dec("0.00000", 5), dec("-0.00001", 5)],
                  ["-999999999999999.99999", "999999999999999.99999", None, "12.50000", "0.00000", "-0.00001"]),
    # numeric(60,20): more than 8 bytes, the exact limb arithmetic
    "c_numeric_wide": (named("bytes", DECIMAL_NAME, scale="20", **{"connect.decimal.precision": "60"}),
                       [dec("-" + "9" * 40 + "." + "9" * 20, 20), dec("9" * 40 + "." + "9" * 20, 20), None,
                        dec("1." + "0" * 19 + "1", 20), dec("0." + "0" * 20, 20), dec("-0." + "0" * 19 + "1", 20)],
                       ["-" + "9" * 40 + "." + "9" * 20, "9" * 40 + "." + "9" * 20, None, "1." + "0" * 19 + "1",
                        "0." + "0" * 20, "-0." + "0" * 19 + "1"]),
    # numeric(5,-2) (PostgreSQL 15): the unscaled value counts hundreds
    "c_numeric_neg": (named("bytes", DECIMAL_NAME, scale="-2", **{"connect.decimal.precision": "5"}),
                      [b64((-99999).to_bytes(3, "big", signed=True)), b64((99999).to_bytes(3, "big", signed=True)),
                       None, b64((123).to_bytes(1, "big", signed=True)), b64(b"\x00"), b64(b"\xff")],
                      ["-9999900", "9999900", None, "12300", "0", "-100"]),
    "c_numeric_free": (VSD_SCHEMA,
                       [vsd("-123456789012345678901234567890.12345678901234567890123456789"),
                        vsd("0.000000000000000000000000000001"), None, vsd("3.14159"), vsd("0"), vsd("-0.5")],
                       ["-123456789012345678901234567890.12345678901234567890123456789",
                        "0.000000000000000000000000000001", None, "3.14159", "0", "-0.5"]),
    "c_money": (named("bytes", DECIMAL_NAME, scale="2"),
                [dec("-92233720368547758.08", 2), dec("92233720368547758.07", 2), None, dec("1234.50", 2),
                 dec("0.00", 2), dec("-0.01", 2)],
                ["-92233720368547758.08", "92233720368547758.07", None, "1234.50", "0.00", "-0.01"]),
    # Jackson writes NaN and the infinities as JSON strings
    "c_real": (named("float"), [-3.4028235e38, 3.4028235e38, None, 3.14, "NaN", "-Infinity"],
               ["-3.4028235E38", "3.4028235E38", None, "3.14", "NaN", "-Infinity"]),
    "c_double": (named("double"), [-1.7976931348623157e308, 1.7976931348623157e308, None, 0.1, "Infinity", "NaN"],
                 ["-1.7976931348623157E308", "1.7976931348623157E308", None, "0.1", "Infinity", "NaN"]),
    "c_bool": (named("boolean"), [False, True, None, True, False, False], ["0", "1", None, "1", "0", "0"]),
    "c_text": (named("string"), ["", "ÿ Grüße ✓ 😀", None, TEXT, "x", "x"], ["", "ÿ Grüße ✓ 😀", None, TEXT, "x", "x"]),
    "c_char": (named("string"), [" " * 10, "z" * 10, None, "ab        ", "x         ", "x         "],
               [" " * 10, "z" * 10, None, "ab        ", "x         ", "x         "]),
    "c_bytea": (named("bytes"), [b64(b""), b64(b"\xff" * 16), None, b64(b"\x00\xff\x10"), b64(b"\x00"), b64(b"\x00")],
                ["", "ff" * 16, None, "00ff10", "00", "00"]),
    "c_uuid": (named("string", "io.debezium.data.Uuid"),
               ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", None, UUID, UUID, UUID],
               ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", None, UUID, UUID,
                UUID]),
    # json keeps its blanks as written, jsonb is PostgreSQL's own text: both as MySQL prints JSON
    "c_json": (named("string", "io.debezium.data.Json"),
               ["[]", '{"k": [1, 2.5, "x"], "n": null}', None, '{"a":1,  "b":[1,2]}', "null", "0"],
               ["[]", '{"k": [1, 2.5, "x"], "n": null}', None, '{"a": 1, "b": [1, 2]}', "null", "0"]),
    "c_jsonb": (named("string", "io.debezium.data.Json"),
                ["{}", '{"a": 1, "b": [1, 2], "s": "x: y, z"}', None, '{"a": 1.50, "z": {"y": [true, null]}}',
                 "null", "0"],
                ["{}", '{"a": 1, "b": [1, 2], "s": "x: y, z"}', None, '{"a": 1.50, "z": {"y": [true, null]}}',
                 "null", "0"]),
    "c_xml": (named("string", "io.debezium.data.Xml"), ["<a/>", '<r a="1">x &amp; y</r>', None, "<doc>ü</doc>",
                                                         "<a/>", "<a/>"],
              ["<a/>", '<r a="1">x &amp; y</r>', None, "<doc>ü</doc>", "<a/>", "<a/>"]),
    "c_hstore": (named("string", "io.debezium.data.Json"), ["{}", '{"a":"1","b":null}', None, '{"k":"v"}',
                                                             '{"":""}', "{}"],
                 ["{}", '{"a": "1", "b": null}', None, '{"k": "v"}', '{"": ""}', "{}"]),
    "c_int_array": (array_of(named("int32")), [[], [1, None, -2147483648, 2147483647], None, [7], [None], [None, None]],
                    ["[]", "[1,null,-2147483648,2147483647]", None, "[7]", "[null]", "[null,null]"]),
    "c_text_array": (array_of(named("string")), [[], ["a", None, "b c", ""], None, ["x,y", 'q"uote'], [None], []],
                     ["[]", '["a",null,"b c",""]', None, '["x,y","q\\"uote"]', "[null]", "[]"]),
    # element logical types are decoded too, each element in the JSON type the converter gave it
    "c_numeric_array": (array_of(named("bytes", DECIMAL_NAME, scale="2", **{"connect.decimal.precision": "5"})),
                        [[], [dec("-999.99", 2), None, dec("999.99", 2)], None, [dec("1.10", 2)], [None], []],
                        ["[]", "[-999.99,null,999.99]", None, "[1.10]", "[null]", "[]"]),
    "c_numeric_free_array": (array_of(VSD_SCHEMA), [[], [vsd("1.1"), None, vsd("-22.22")], None, [vsd("0")], [], []],
                             ["[]", "[1.1,null,-22.22]", None, "[0]", "[]", "[]"]),
    "c_double_array": (array_of(named("double")), [[], [1.5, "NaN", "-Infinity", None], None, [0.1], [], []],
                       ["[]", '[1.5,"NaN","-Infinity",null]', None, "[0.1]", "[]", "[]"]),
    "c_bool_array": (array_of(named("boolean")), [[], [True, None, False], None, [True], [], []],
                     ["[]", "[true,null,false]", None, "[true]", "[]", "[]"]),
    "c_date_array": (array_of(named("int32", "io.debezium.time.Date")),
                     [[], [DAYS_2024_02_29, None, INF_DAYS, MINUS_INF_DAYS], None, [0], [], []],
                     ["[]", '["2024-02-29",null,"infinity","-infinity"]', None, '["1970-01-01"]', "[]", "[]"]),
    "c_timestamp_array": (array_of(named("int64", "io.debezium.time.MicroTimestamp")),
                          [[], [US_2024_02_29_13_05_00_12, None, INF_US], None, [0], [], []],
                          ["[]", '["2024-02-29 13:05:00.12",null,"infinity"]', None, '["1970-01-01 00:00:00"]',
                           "[]", "[]"]),
    "c_timestamptz_array": (array_of(named("string", "io.debezium.time.ZonedTimestamp")),
                            [[], ["2024-02-29T18:45:00.500000Z", "-infinity"], None, ["2020-04-01T11:51:02.000000Z"],
                             [], []],
                            ["[]", '["2024-02-29 18:45:00.5","-infinity"]', None, '["2020-04-01 11:51:02"]', "[]",
                             "[]"]),
    "c_time_array": (array_of(named("int64", "io.debezium.time.MicroTime")), [[], [0, 86400000000], None, [1], [], []],
                     ["[]", '["00:00:00","24:00:00"]', None, '["00:00:00.000001"]', "[]", "[]"]),
    "c_timetz_array": (array_of(named("string", "io.debezium.time.ZonedTime")), [[], ["11:51:02Z", None], None, [], [],
                                                                                 []],
                       ["[]", '["11:51:02Z",null]', None, "[]", "[]", "[]"]),
    "c_bytea_array": (array_of(named("bytes")), [[], [b64(b"\x00\x01\x02"), None], None, [b64(b"")], [], []],
                      ["[]", '["000102",null]', None, '[""]', "[]", "[]"]),
    "c_uuid_array": (array_of(named("string", "io.debezium.data.Uuid")), [[], [UUID, None], None, [], [], []],
                     ["[]", f'["{UUID}",null]', None, "[]", "[]", "[]"]),
    "c_jsonb_array": (array_of(named("string", "io.debezium.data.Json")), [[], ['{"a":1}', None], None, [], [], []],
                      ["[]", '["{\\"a\\": 1}",null]', None, "[]", "[]", "[]"]),
    "c_enum_array": (array_of(named("string", "io.debezium.data.Enum", allowed="sad,ok,happy")),
                     [[], ["sad", "happy"], None, [], [], []], ["[]", '["sad","happy"]', None, "[]", "[]", "[]"]),
    # MicroDuration: µs, a month 365.25 / 12 days (1 year 2 mons 3 days 04:05:06.789 here)
    "c_interval": (named("int64", "io.debezium.time.MicroDuration"),
                   [-86400000001, 37091106789000, None, 37091106789000, 0, -1],
                   ["-86400000001", "37091106789000", None, "37091106789000", "0", "-1"]),
    "c_date": (named("int32", "io.debezium.time.Date"),
               [-2440588, 2145042905, None, DAYS_2024_02_29, INF_DAYS, MINUS_INF_DAYS],
               ["-4713-11-24", "+5874897-12-31", None, "2024-02-29", "infinity", "-infinity"]),
    "c_time": (named("int64", "io.debezium.time.MicroTime"), [0, 86400000000, None, 47100120000, 1, 86399999999],
               ["00:00:00", "24:00:00", None, "13:05:00.12", "00:00:00.000001", "23:59:59.999999"]),
    "c_time3": (named("int32", "io.debezium.time.Time"), [0, 86400000, None, 47100120, 1, 86399999],
                ["00:00:00", "24:00:00", None, "13:05:00.12", "00:00:00.001", "23:59:59.999"]),
    "c_timetz": (named("string", "io.debezium.time.ZonedTime"),
                 ["08:01:00Z", "15:59:00Z", None, "07:35:00.5Z", "00:00:00Z", "00:29:59.999999Z"],
                 ["08:01:00Z", "15:59:00Z", None, "07:35:00.5Z", "00:00:00Z", "00:29:59.999999Z"]),
    "c_timestamp": (named("int64", "io.debezium.time.MicroTimestamp"),
                    [MIN_US, MAX_US, None, US_2024_02_29_13_05_00_12, INF_US, MINUS_INF_US],
                    ["-4713-11-24 00:00:00", "+294247-01-01 23:59:59.999999", None, "2024-02-29 13:05:00.12",
                     "infinity", "-infinity"]),
    "c_timestamp3": (named("int64", "io.debezium.time.Timestamp"),
                     [MIN_US // 1000, MAX_MS, None, US_2024_02_29_13_05_00_12 // 1000, INF_US // 1000,
                      MINUS_INF_US // 1000],
                     ["-4713-11-24 00:00:00", "+294276-12-31 23:59:59.999", None, "2024-02-29 13:05:00.12", "infinity",
                      "-infinity"]),
    "c_timestamptz": (named("string", "io.debezium.time.ZonedTimestamp"),
                      ["-4712-01-01T00:00:00.000000Z", "+294276-12-31T23:59:59.999999Z", None,
                       "2024-02-29T18:45:00.500000Z", "infinity", "-infinity"],
                      ["-4712-01-01 00:00:00", "+294276-12-31 23:59:59.999999", None, "2024-02-29 18:45:00.5",
                       "infinity", "-infinity"]),
    "c_bit1": (named("boolean"), [False, True, None, True, False, True], ["0", "1", None, "1", "0", "1"]),
    "c_bit": (named("bytes", "io.debezium.data.Bits", length="10"), [bits(0), bits(1023), None, bits(5), bits(1),
                                                                      bits(512)],
              ["0", "1023", None, "5", "1", "512"]),
    "c_varbit": (named("bytes", "io.debezium.data.Bits", length="2147483647"),
                 [bits(0), bits(2 ** 64 - 1), None, bits(5), bits(0), bits(5)],
                 ["0", str(2 ** 64 - 1), None, "5", "0", "5"]),
    "c_bit100": (named("bytes", "io.debezium.data.Bits", length="100"), [bits(0), bits(2 ** 100 - 1), None,
                                                                          bits(2 ** 99), bits(1), bits(2 ** 64)],
                 ["0", str(2 ** 100 - 1), None, str(2 ** 99), "1", str(2 ** 64)]),
    "c_inet": (named("string"),
               ["0.0.0.0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None, "192.168.0.1/24", "::", "::1"],
               ["0.0.0.0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None, "192.168.0.1/24", "::", "::1"]),
    "c_macaddr": (named("string"), ["00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff", None, "08:00:2b:01:02:03", "x", "x"],
                  ["00:00:00:00:00:00", "ff:ff:ff:ff:ff:ff", None, "08:00:2b:01:02:03", "x", "x"]),
    "c_enum": (named("string", "io.debezium.data.Enum", allowed="sad,ok,happy"), ["sad", "happy", None, "ok", "sad",
                                                                                    "happy"],
               ["sad", "happy", None, "ok", "sad", "happy"]),
    "c_ltree": (named("string", "io.debezium.data.Ltree"), ["a", "Top.Science.Astronomy", None, "x.y", "x", "x"],
                ["a", "Top.Science.Astronomy", None, "x.y", "x", "x"]),
    "c_tsrange": (named("string"), ['["2019-03-31 15:30:00",infinity)', "empty", None, "x", "x", "x"],
                  ['["2019-03-31 15:30:00",infinity)', "empty", None, "x", "x", "x"]),
    # a point: the geometry hex every format writes, SRID 0 and the WKB
    "c_point": (POINT_SCHEMA,
                [{"x": 0.0, "y": 0.0, "wkb": b64(wkb_point(0, 0)), "srid": None},
                 {"x": 1.5, "y": -2.0, "wkb": b64(wkb_point(1.5, -2.0)), "srid": None}, None,
                 {"x": 1.0, "y": 2.0, "wkb": b64(wkb_point(1, 2)), "srid": None},
                 {"x": 1.0, "y": 2.0, "wkb": b64(wkb_point(1, 2)), "srid": None},
                 {"x": 1.0, "y": 2.0, "wkb": b64(wkb_point(1, 2)), "srid": None}],
                [mysql_internal(0, 0, 0).hex(), mysql_internal(0, 1.5, -2.0).hex(), None]
                + [mysql_internal(0, 1, 2).hex()] * 3),
}

# The other modes: decimal.handling.mode=string (double for c_numeric_double), time.precision.mode=connect,
# interval.handling.mode=string, hstore.handling.mode=map
PG_MODES: dict[str, tuple[dict, list, list]] = {
    # string mode: BigDecimal.toPlainString, and PostgreSQL's special values as SpecialValueDecimal names
    "c_numeric": (named("string"), ["-999999999999999.99999", "999999999999999.99999", None, "12.50000", "NAN",
                                    "POSITIVE_INFINITY"],
                  ["-999999999999999.99999", "999999999999999.99999", None, "12.50000", "NAN", "POSITIVE_INFINITY"]),
    "c_money": (named("string"), ["-92233720368547758.08", "92233720368547758.07", None, "1234.50", "0.00", "-0.01"],
                ["-92233720368547758.08", "92233720368547758.07", None, "1234.50", "0.00", "-0.01"]),
    "c_numeric_double": (named("double"), [-1.0e20, 1.0e20, None, 12.5, "NaN", "-Infinity"],
                         ["-1.0E20", "1.0E20", None, "12.5", "NaN", "-Infinity"]),
    "c_interval": (named("string", "io.debezium.time.Interval"),
                   ["P-178000000Y0M0DT0H0M0S", "P178000000Y0M0DT0H0M0S", None, "P1Y2M3DT4H5M6.789S",
                    "P0Y0M0DT0H0M0S", "P0Y0M-1DT0H0M-0.000001S"],
                   ["P-178000000Y0M0DT0H0M0S", "P178000000Y0M0DT0H0M0S", None, "P1Y2M3DT4H5M6.789S",
                    "P0Y0M0DT0H0M0S", "P0Y0M-1DT0H0M-0.000001S"]),
    "c_date": (named("int32", "org.apache.kafka.connect.data.Date"),
               [-2440588, 2145042905, None, DAYS_2024_02_29, INF_DAYS, MINUS_INF_DAYS],
               ["-4713-11-24", "+5874897-12-31", None, "2024-02-29", "infinity", "-infinity"]),
    "c_time": (named("int32", "org.apache.kafka.connect.data.Time"), [0, 86400000, None, 47100120, 0, 86399999],
               ["00:00:00", "24:00:00", None, "13:05:00.12", "00:00:00", "23:59:59.999"]),
    "c_timestamp": (named("int64", "org.apache.kafka.connect.data.Timestamp"),
                    [MIN_US // 1000, MAX_MS, None, US_2024_02_29_13_05_00_12 // 1000, INF_US // 1000,
                     MINUS_INF_US // 1000],
                    ["-4713-11-24 00:00:00", "+294276-12-31 23:59:59.999", None, "2024-02-29 13:05:00.12", "infinity",
                     "-infinity"]),
    "c_hstore": ({"type": "map", "keys": {"type": "string", "optional": False},
                  "values": {"type": "string", "optional": True}},
                 [{}, {"a": "1", "b": None}, None, {"k": "v"}, {"": ""}, {}],
                 ["{}", '{"a": "1", "b": null}', None, '{"k": "v"}', '{"": ""}', "{}"]),
}

# One message each, with one value Debezium's schema cannot make canonical: the message is rejected
# with its column, never kept with a wrong value.
PG_BAD: list[tuple[str, dict, Any]] = [
    ("c_interval", named("int64", "io.debezium.time.MicroDuration"), 2 ** 63 - 1),  # saturated: '178000000 years'
    ("c_interval", named("int64", "io.debezium.time.MicroDuration"), -(2 ** 63)),
    ("c_timestamp", named("int64", "io.debezium.time.MicroTimestamp"), -9223372036853775810),  # 294276 AD overflowed
    ("c_date", named("int32", "io.debezium.time.Date"), -700000000),  # no source has such a date
    ("c_real", named("float"), "inf"),  # not Jackson's text for an infinity
    ("c_timetz", named("string", "io.debezium.time.ZonedTime"), "07:35:00+05:30"),  # Debezium writes UTC
    ("c_timestamptz", named("string", "io.debezium.time.ZonedTimestamp"), "2024-02-30"),
    ("c_interval_s", named("string", "io.debezium.time.Interval"), "1 year"),
    ("c_int_array", array_of(named("int32")), ["x"]),
    ("c_int_array", array_of(named("int32")), [[1, 2]]),
    ("c_numeric_array", array_of(named("bytes", DECIMAL_NAME, scale="2")), ["***"]),
    ("c_numeric_array", array_of(named("bytes", DECIMAL_NAME, scale="2")), [1.5]),  # a number read as a double
    ("c_wide_array", array_of(named("bytes", DECIMAL_NAME, scale="0")), [dec("1" * 30, 0)]),  # over 8 bytes
    ("c_bits", named("bytes", "io.debezium.data.Bits", length="3"), "not base64!"),
]

# column.propagate.source.type: PostgreSQL's own type names, with the JDBC size Debezium adds
PG_PROPAGATED: dict[str, tuple[dict, Any, str, str]] = {
    # column -> (field schema, value, column_types entry, Spark type of the typed views)
    "c_int4": ({**named("int32"), "parameters": {"__debezium.source.column.type": "INT4",
                                                  "__debezium.source.column.length": "10",
                                                  "__debezium.source.column.scale": "0"}}, 1, "integer", "int"),
    "c_int8": ({**named("int64"), "parameters": {"__debezium.source.column.type": "INT8",
                                                  "__debezium.source.column.length": "19",
                                                  "__debezium.source.column.scale": "0"}}, 1, "bigint", "bigint"),
    "c_float8": ({**named("double"), "parameters": {"__debezium.source.column.type": "FLOAT8",
                                                     "__debezium.source.column.length": "17",
                                                     "__debezium.source.column.scale": "17"}}, 1.5,
                 "double precision", "double"),
    "c_bool": ({**named("boolean"), "parameters": {"__debezium.source.column.type": "BOOL",
                                                    "__debezium.source.column.length": "1",
                                                    "__debezium.source.column.scale": "0"}}, True,
               "boolean", "boolean"),
    "c_timestamptz": ({**named("string", "io.debezium.time.ZonedTimestamp"),
                       "parameters": {"__debezium.source.column.type": "TIMESTAMPTZ",
                                      "__debezium.source.column.length": "35",
                                      "__debezium.source.column.scale": "6"}},
                      "2024-02-29T18:45:00.500000Z", "timestamp with time zone", "timestamp"),
    "c_bpchar": ({**named("string"), "parameters": {"__debezium.source.column.type": "BPCHAR",
                                                     "__debezium.source.column.length": "10"}}, "ab        ",
                 "char(10)", "string"),
    "c_numeric": ({**named("bytes", DECIMAL_NAME, scale="2", **{"connect.decimal.precision": "10"}),
                   "parameters": {"scale": "2", "connect.decimal.precision": "10",
                                  "__debezium.source.column.type": "NUMERIC", "__debezium.source.column.length": "10",
                                  "__debezium.source.column.scale": "2"}}, dec("12.50", 2), "numeric(10,2)",
                  "decimal(10,2)"),
    "c_int_array": ({**array_of(named("int32")), "parameters": {"__debezium.source.column.type": "_INT4",
                                                                 "__debezium.source.column.length": "10",
                                                                 "__debezium.source.column.scale": "0"}}, [1],
                    "_int4(10,0)", "string"),
}

# Spark types of the typed views for the default modes' columns (column_types as connect_column_type names them)
PG_SPARK_TYPES = {
    "c_smallint": ("int16", "int"), "c_int": ("int32", "int"), "c_bigint": ("int64", "bigint"),
    "c_numeric": ("decimal(20,5)", "decimal(20,5)"), "c_numeric_wide": ("decimal(60,20)", "string"),
    "c_numeric_free": ("decimal", "string"), "c_money": ("decimal(?,2)", "decimal(38,2)"),
    "c_real": ("float32", "float"), "c_double": ("float64", "double"), "c_bool": ("boolean", "boolean"),
    "c_text": ("string", "string"), "c_bytea": ("bytes", "binary"), "c_uuid": ("uuid", "string"),
    "c_json": ("json", "string"), "c_xml": ("xml", "string"), "c_int_array": ("array", "string"),
    "c_interval": ("interval", "string"), "c_date": ("date", "date"), "c_time": ("time", "string"),
    "c_timetz": ("timetz", "string"), "c_timestamp": ("datetime", "timestamp"),
    "c_timestamptz": ("timestamp", "timestamp"), "c_bit1": ("boolean", "boolean"),
    "c_bit": ("bit(10)", "decimal(20,0)"),
    "c_varbit": ("varbit(2147483647)", "string"), "c_bit100": ("varbit(100)", "string"),
    "c_enum": ("enum('sad','ok','happy')", "string"), "c_ltree": ("ltree", "string"), "c_point": ("geometry", "string"),
    # numeric(5,-2) holds integers of up to 7 digits
    "c_numeric_neg": ("decimal(7,0)", "decimal(7,0)"),
}


def pg_envelope(table: str, columns: dict[str, dict], row: dict[str, Any] | None, lsn: int, schemas: bool = True,
                op: str = "c", before: dict[str, Any] | None = None, optional: bool = True) -> str:
    """A Debezium PostgreSQL change event as the JSON converter writes it (schemas.enable=true: the
    envelope's schema with the row struct's fields, then the payload; false: the payload alone).
    `optional=False`: the columns are NOT NULL."""
    fields = [{"type": "int32", "optional": False, "field": "id"}] + [
        {**schema, "optional": optional, "field": name} for name, schema in columns.items()
    ]
    value_schema = {"type": "struct", "fields": fields, "optional": True, "name": f"{PG_SERVER}.public.{table}.Value"}
    source_schema = {
        "type": "struct", "optional": False, "name": "io.debezium.connector.postgresql.Source",
        "fields": [{"type": "string", "optional": False, "field": f} for f in ("version", "connector", "name")]
        + [{"type": "int64", "optional": False, "field": "ts_ms"},
           {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
            "parameters": {
                "allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},
            "default": "false", "field": "snapshot"},
           {"type": "string", "optional": False, "field": "db"},
           {"type": "string", "optional": True, "field": "sequence"},
           {"type": "string", "optional": False, "field": "schema"},
           {"type": "string", "optional": False, "field": "table"},
           {"type": "int64", "optional": True, "field": "txId"}, {"type": "int64", "optional": True, "field": "lsn"},
           {"type": "int64", "optional": True, "field": "xmin"}],
    }
    schema = {"type": "struct", "optional": False, "name": f"{PG_SERVER}.public.{table}.Envelope", "version": 2,
              "fields": [{**value_schema, "field": "before"}, {**value_schema, "field": "after"},
                         {**source_schema, "field": "source"}, {"type": "string", "optional": False, "field": "op"},
                         {"type": "int64", "optional": True, "field": "ts_ms"}]}
    payload = {
        "before": before, "after": row,
        "source": {"version": "3.5.0.Final", "connector": "postgresql", "name": PG_SERVER, "ts_ms": 1709211900000 + lsn,
                   "snapshot": "false", "db": PG_DB, "sequence": json.dumps([None, str(lsn)]), "schema": "public",
                   "table": table, "txId": 780 + lsn, "lsn": lsn, "xmin": None},
        "op": op, "ts_ms": 1709211900500 + lsn,
    }
    return json.dumps({"schema": schema, "payload": payload} if schemas else payload, ensure_ascii=False)


def pg_table_messages(table: str, columns: dict[str, tuple[dict, list, list]], lsn: int,
                      schemas: bool = True) -> tuple[list[str], list[str]]:
    schemas_by_column = {name: schema for name, (schema, _, _) in columns.items()}
    values, keys = [], []
    for i in range(6):
        row = {"id": i + 1, **{name: sent[i] for name, (_, sent, _) in columns.items()}}
        values.append(pg_envelope(table, schemas_by_column, row, lsn + i, schemas))
        keys.append(json.dumps({"id": i + 1}))
    return values, keys


# the real messages' topics, landed under names of this module's own (another module may land the file too)
SAMPLE = Path(__file__).parent / "fixtures" / "postgres" / "debezium_pg_sample.jsonl"
SAMPLE_TOPICS = {"pg_default.public.types": "pgsample_default", "pg_combined.public.types": "pgsample_combined"}


def sample_records() -> dict[str, list[dict]]:
    records: dict[str, list[dict]] = {}
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["topic"] in SAMPLE_TOPICS and record["payload"] is not None:
            records.setdefault(record["topic"], []).append(record)
    return records


def land_postgres_records(lake) -> None:
    values, keys = pg_table_messages("types", PG_TYPES, 1000)
    lake.land("debezium", kcat_lines(values, "pgtypes.public.types", keys=keys))
    values, keys = pg_table_messages("modes", PG_MODES, 2000)
    lake.land("debezium", kcat_lines(values, "pgtypes.public.modes", keys=keys))
    # schemas.enable=false: the JSON type alone decides, so every value stays as sent
    values, keys = pg_table_messages("types_noschema", PG_TYPES, 3000, schemas=False)
    lake.land("debezium", kcat_lines(values, "pgtypes.public.types_noschema", keys=keys))
    bad = [pg_envelope("bad", {column: schema}, {"id": i, column: value}, 4000 + i)
           for i, (column, schema, value) in enumerate(PG_BAD)]
    lake.land("debezium", kcat_lines(bad, "pgtypes.public.bad", keys=[json.dumps({"id": i}) for i in range(len(bad))]))
    row = {"id": 1, **{name: value for name, (_, value, _, _) in PG_PROPAGATED.items()}}
    schema_by_column = {name: schema for name, (schema, _, _, _) in PG_PROPAGATED.items()}
    lake.land("debezium", kcat_lines([pg_envelope("propagated", schema_by_column, row, 5000)],
                                     "pgtypes.public.propagated", keys=[json.dumps({"id": 1})]))
    for topic, records in sample_records().items():
        prefix = SAMPLE_TOPICS[topic]
        server = topic.split(".")[0]
        lake.land("debezium", kcat_lines(
            [r["payload"].replace(f'"name":"{server}"', f'"name":"{prefix}"') for r in records],
            f"{prefix}.public.types", keys=[r["key"] for r in records]))
    land_key_only_records(lake)


def pg_images(built, table: str, source_system: str = PG_SERVER) -> dict[int, dict]:
    rows = built.rows(
        "select row_key, after from {schema}.cdc_changelog "
        f"where source_system = '{source_system}' and table_name = '{table}' and op = 'c'"
    )
    return {int(r["row_key"]): r["after"] for r in rows}


@pytest.mark.parametrize(("table", "columns"), [("types", PG_TYPES), ("modes", PG_MODES)], ids=["default", "modes"])
def test_postgres_values_are_their_canonical_text(built, table, columns):
    actual = pg_images(built, table)
    expected = {i + 1: {"id": str(i + 1), **{name: texts[i] for name, (_, _, texts) in columns.items()}}
                for i in range(6)}
    assert sorted(actual) == sorted(expected)
    for key in expected:
        assert {c: v for c, v in actual[key].items()} == expected[key], f"id {key}"


def test_postgres_values_without_a_schema_are_kept_as_sent(built):
    """schemas.enable=false: no types, so each value is its JSON text (strings unquoted)."""
    actual = pg_images(built, "types_noschema")
    for i in range(6):
        for name, (_, sent, _) in PG_TYPES.items():
            value = sent[i]
            text = None if value is None else value if isinstance(value, str) else json.dumps(
                value, separators=(",", ":"), ensure_ascii=False)
            if isinstance(value, float):  # Spark re-writes a JSON number through a double: Java's text
                text = repr(value).upper().replace("E+", "E")
            assert actual[i + 1][name] == text, (i + 1, name)


def test_postgres_undecodable_values_are_rejected_with_their_column(built):
    rows = built.rows(
        "select kafka_offset, reject_reason from {schema}.cdc_rejected_messages "
        "where kafka_topic = 'pgtypes.public.bad'"
    )
    actual = {r["kafka_offset"]: r["reject_reason"] for r in rows}
    expected = {i: f"undecodable value in column {column} ({schema.get('name') or schema['type']})"
                for i, (column, schema, _) in enumerate(PG_BAD)}
    assert actual == expected


def test_postgres_column_types_name_a_fitting_spark_type(built):
    rows = built.rows(
        "select table_name, column_name, mysql_type, spark_type from {schema}.cdc_typed_columns "
        f"where database_name = '{PG_DB}.public' and table_name in ('types', 'propagated')"
    )
    actual = {(r["table_name"], r["column_name"]): (r["mysql_type"], r["spark_type"]) for r in rows}
    expected = {("types", c): types for c, types in PG_SPARK_TYPES.items()}
    expected |= {("propagated", c): (column_type, spark) for c, (_, _, column_type, spark) in PG_PROPAGATED.items()}
    assert {k: actual.get(k) for k in expected} == expected


def test_postgres_ordinary_values_cast_to_their_spark_types(built):
    """Every value of the ordinary row (id 4) reads as its typed column's Spark type (no null from
    try_cast), as the typed views read it (cast_canonical_text: unhex for binary)."""
    types = {r["column_name"]: r["spark_type"] for r in built.rows(
        "select column_name, spark_type from {schema}.cdc_typed_columns "
        f"where database_name = '{PG_DB}.public' and table_name = 'types'")}
    image = pg_images(built, "types")[4]
    lost = []
    for column, text in image.items():
        if text is None:
            continue
        spark_type = types[column]
        cast = "unhex(v)" if spark_type == "binary" else f"try_cast(v as {spark_type})"
        (row,) = built.spark.sql(f"select {cast} is null as lost from (select {sql_literal(text)} as v)").collect()
        if row["lost"]:
            lost.append((column, spark_type, text))
    assert lost == []


def sql_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# the real messages' values (PostgreSQL 15 -> Debezium 3.5.0.Final), default modes: ids 3 (NULLs),
# 4 (ordinary), 5 and 6 (special values) as inserted; ids 1 and 2 hold '-178000000 years' and
# '178000000 years', which Debezium's MicroDuration saturates to Long.MIN_VALUE / MAX_VALUE
SAMPLE_COMMON = {"c_smallint": "0", "c_int": "0", "c_bigint": "0", "c_bool": "0", "c_text": "x", "c_varchar": "x",
                 "c_char": "x         ", "c_bytea": "00", "c_xml": "<a/>"}
SAMPLE_EXPECTED = {
    3: {"id": "3", **{c: None for c in (
        "c_smallint c_int c_bigint c_numeric c_numeric_free c_money c_real c_double c_bool c_text c_varchar c_char "
        "c_bytea c_uuid c_json c_jsonb c_xml c_int_array c_text_array c_hstore c_interval c_date c_time c_timetz "
        "c_timestamp c_timestamptz c_bit1 c_bit c_varbit c_inet c_cidr c_macaddr c_enum").split()}},
    4: {"id": "4", "c_smallint": "-1", "c_int": "42", "c_bigint": "-5", "c_numeric": "12.50000",
        "c_numeric_free": "3.14159", "c_money": "1234.50", "c_real": "3.14", "c_double": "0.1", "c_bool": "1",
        "c_text": TEXT,
        "c_varchar": "Grüße ✓", "c_char": "ab        ", "c_bytea": "00ff10", "c_uuid": UUID,
        "c_json": '{"a": 1, "b": [1, 2]}', "c_jsonb": '{"a": 1.50, "z": {"y": [true, null]}}', "c_xml": "<doc>ü</doc>",
        "c_int_array": "[7]", "c_text_array": '["x,y","q\\"uote"]', "c_hstore": '{"k": "v"}',
        "c_interval": "37091106789000", "c_date": "2024-02-29", "c_time": "13:05:00.12", "c_timetz": "07:35:00.5Z",
        "c_timestamp": "2024-02-29 13:05:00.12", "c_timestamptz": "2024-02-29 18:45:00.5", "c_bit1": "1", "c_bit": "5",
        "c_varbit": "5", "c_inet": "192.168.0.1/24", "c_cidr": "10.0.0.0/8", "c_macaddr": "08:00:2b:01:02:03",
        "c_enum": "ok"},
    5: {"id": "5", **SAMPLE_COMMON, "c_numeric": "0.00000", "c_numeric_free": "0", "c_money": "0.00", "c_real": "NaN",
        "c_double": "Infinity", "c_uuid": "00000000-0000-0000-0000-000000000001", "c_json": "null", "c_jsonb": "null",
        "c_int_array": "[null]", "c_text_array": "[null]", "c_hstore": '{"": ""}', "c_interval": "0",
        "c_date": "infinity", "c_time": "00:00:00.000001", "c_timetz": "00:00:00Z", "c_timestamp": "infinity",
        "c_timestamptz": "infinity", "c_bit1": "0", "c_bit": "1", "c_varbit": "0", "c_inet": "::", "c_cidr": "::/0",
        "c_macaddr": "00:00:00:00:00:01", "c_enum": "sad"},
    6: {"id": "6", **SAMPLE_COMMON, "c_numeric": "-0.00001", "c_numeric_free": "-0.5", "c_money": "-0.01",
        "c_real": "-Infinity", "c_double": "NaN", "c_uuid": "00000000-0000-0000-0000-000000000002", "c_json": "0",
        "c_jsonb": "0", "c_int_array": "[null,null]", "c_text_array": "[null,null]", "c_hstore": "{}",
        "c_interval": "-86400000001", "c_date": "-infinity", "c_time": "23:59:59.999999",
        "c_timetz": "00:29:59.999999Z", "c_timestamp": "-infinity", "c_timestamptz": "-infinity", "c_bit1": "1",
        "c_bit": "512", "c_varbit": "5", "c_inet": "::1", "c_cidr": "2001:db8::/32", "c_macaddr": "01:02:03:04:05:06",
        "c_enum": "happy"},
}


def test_real_postgres_messages_decode_to_their_canonical_text(built):
    actual = pg_images(built, "types", source_system="pgsample_default")
    assert {key: actual.get(key) for key in SAMPLE_EXPECTED} == SAMPLE_EXPECTED


def test_real_postgres_saturated_intervals_are_rejected(built):
    """Debezium's snapshot of ids 1 and 2 and the update of id 2 carry a MicroDuration of ±2^63:
    the saturated cast of '∓178000000 years'; they are rejected with that column."""
    rows = built.rows(
        "select reject_reason from {schema}.cdc_rejected_messages where kafka_topic = 'pgsample_default.public.types'"
    )
    assert [r["reject_reason"] for r in rows] == [
        "undecodable value in column c_interval (io.debezium.time.MicroDuration)"] * 3


def test_real_postgres_messages_without_a_schema_are_kept_as_sent(built):
    """pg_combined: schemas.enable=false (and decimal.handling.mode=string, time.precision.mode=connect)."""
    (record,) = [json.loads(r["payload"]) for r in sample_records()["pg_combined.public.types"]
                 if json.loads(r["payload"])["op"] == "c" and json.loads(r["payload"])["after"]["id"] == 4]
    actual = pg_images(built, "types", source_system="pgsample_combined")[4]
    expected = {name: None if value is None else value if isinstance(value, str) else json.dumps(
        value, separators=(",", ":"), ensure_ascii=False) for name, value in record["after"].items()}
    expected["c_real"], expected["c_double"] = "3.14", "0.1"
    assert actual == expected


# Key-only deletes of NOT NULL columns (issue 76). Under REPLICA IDENTITY DEFAULT a delete's WAL
# record holds the key alone, and Debezium fills every other column of its before image from the
# column's Connect schema: the column's default where it has one, null where it is nullable, and
# otherwise its converter's fallback, a zero in the type's own encoding (timestamptz
# `1970-01-01T00:00:00Z`, timetz `00:00:00Z`, a point at 0,0, a variable-scale decimal, an interval
# `P0Y0M0DT0H0M0S`, ...). The records are real: fixtures/postgres/debezium_pg_key_only.jsonl
# (`python -m cdc_lake.testing.pg_key_only`: PostgreSQL 15, Debezium 3.5.0.Final, four connectors
# with different settings, one row per table inserted, then deleted). PostGIS, which the rig's
# server lacks, is written by hand from Debezium's source (PostgresValueConverter.convertGeometry).

KEY_ONLY = Path(__file__).parent / "fixtures" / "postgres" / "debezium_pg_key_only.jsonl"
KEY_ONLY_VARIANTS = ("ko_default", "ko_noschema", "ko_modes", "ko_modes2")
# Without a schema a column's default (here 'dflt', 7, true, ...) cannot be told from a value: the
# lake keeps that delete's before image as sent (docs/postgresql.md), so it is not checked here.
KEY_ONLY_CLOSED = [(variant, table) for variant in KEY_ONLY_VARIANTS for table in ("notnull_types", "notnull_defaults")
                   if (variant, table) != ("ko_noschema", "notnull_defaults")] + [("ko_postgis", "shapes")]
POSTGIS = {
    "g": {"type": "struct", "name": "io.debezium.data.geometry.Geometry", "version": 1,
          "fields": [{"type": "bytes", "optional": False, "field": "wkb"},
                     {"type": "int32", "optional": True, "field": "srid"}]},
    "gg": {"type": "struct", "name": "io.debezium.data.geometry.Geography", "version": 1,
           "fields": [{"type": "bytes", "optional": False, "field": "wkb"},
                      {"type": "int32", "optional": True, "field": "srid"}]},
}
# PostgisGeometry.createEmpty(): GEOMETRYCOLLECTION EMPTY, EWKB 010700000000000000, no SRID
POSTGIS_EMPTY = {"wkb": b64(bytes.fromhex("010700000000000000")), "srid": None}


def land_key_only_records(lake) -> None:
    lake.land("debezium", KEY_ONLY)
    row = {"id": 1, "g": {"wkb": b64(wkb_point(1.0, 2.0)), "srid": 4326},
           "gg": {"wkb": b64(wkb_point(-71.5, 42.25)), "srid": 4326}}
    records = [
        pg_envelope("shapes", POSTGIS, row, 6000, optional=False),
        pg_envelope("shapes", POSTGIS, None, 6001, op="d", optional=False,
                    before={"id": 1, "g": POSTGIS_EMPTY, "gg": POSTGIS_EMPTY}),
    ]
    lake.land("debezium", kcat_lines([r.replace(f'"name": "{PG_SERVER}"', '"name": "ko_postgis"') for r in records],
                                     "ko_postgis.public.shapes", keys=[json.dumps({"id": 1})] * 2))


def key_only_changes(built) -> dict[tuple[str, str, str], dict]:
    """(source system, table, op) -> the change of the row with id 1."""
    rows = built.rows(
        "select source_system, table_name, op, before, after, unavailable_columns from {schema}.cdc_changelog "
        "where source_system in ('ko_default', 'ko_noschema', 'ko_modes', 'ko_modes2', 'ko_postgis') "
        "and row_key = '1'"
    )
    return {(r["source_system"], r["table_name"], r["op"]): r for r in rows}


@pytest.mark.parametrize(("variant", "table"), KEY_ONLY_CLOSED, ids=[f"{v}-{t}" for v, t in KEY_ONLY_CLOSED])
def test_key_only_delete_of_not_null_columns_keeps_the_last_real_values(built, variant, table):
    """The deleted row's closing version (cdc_current, and the version the delete closes in
    cdc_history) holds the values the row was inserted with, not Debezium's fallbacks or defaults;
    the change log names every non-key column unavailable, as for a nullable one."""
    changes = key_only_changes(built)
    inserted = changes[(variant, table, "c")]["after"]
    assert None not in inserted.values() and len(inserted) > 2, inserted
    current = built.rows(
        "select image, is_deleted, op, unknown_columns from {schema}.cdc_current "
        f"where source_system = '{variant}' and table_name = '{table}' and row_key = '1'"
    )
    assert current == [{"image": inserted, "is_deleted": True, "op": "d", "unknown_columns": []}]
    history = built.rows(
        "select image, valid_to is not null as closed, closed_by_delete from {schema}.cdc_history "
        f"where source_system = '{variant}' and table_name = '{table}' and row_key = '1'"
    )
    assert history == [{"image": inserted, "closed": True, "closed_by_delete": True}]
    delete = changes[(variant, table, "d")]
    assert delete["unavailable_columns"] == sorted(c for c in inserted if c != "id")
    assert delete["before"] == {"id": "1", **{c: None for c in inserted if c != "id"}}


@pytest.mark.parametrize("variant", ["ko_default", "ko_modes", "ko_modes2"])
def test_a_full_delete_of_nullable_columns_is_as_sent_where_the_schema_says_so(built, variant):
    """REPLICA IDENTITY FULL: a delete whose before image holds 0, '', false and [] in nullable
    columns. With the schema those are values (Debezium sends null for a nullable column it was not
    sent), so nothing is unavailable; without one the image looks key-only, and the key's previous
    version gives the same values."""
    delete = key_only_changes(built)[(variant, "nullable_full", "d")]
    assert delete["unavailable_columns"] == []
    assert delete["before"] == {"id": "1", "f_int": "0", "f_text": "", "f_bool": "0", "f_int_array": "[]"}
