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

import pytest

from cdc_lake.harness import kcat_lines

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


@pytest.fixture(scope="module")
def built(lake):
    values, keys = messages()
    lake.land("debezium", kcat_lines(values, "numbers", keys=keys))
    lake.build()
    return lake


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
