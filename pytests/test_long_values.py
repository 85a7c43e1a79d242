"""Long values and large shapes through the per-record path (issue 76, items 1 and 3).

A PostgreSQL `text[]` with one element of 10,000 characters made Spark's JVM exit in a regex of
the array decoder (a StackOverflowError), and every later build failed. Debezium PostgreSQL
records with values of 100,000 characters in every value kind the array and document decoders meet
(text, arrays with long elements and long runs of escapes, bytea, JSON documents, hstore), JSON
nested 100 levels, an array of 100,000 elements: each must come out as its canonical text, in the
shared lake's one build (1 MB and 10 MB values are in the integration target; every pattern of
the SQL meets 1 MB inputs in test_regex_safety).
"""

from __future__ import annotations

import json

from test_connect_decoding import PG_SERVER, array_of, b64, named, pg_envelope

from cdc_lake.testing.harness import kcat_lines

SIZE = 100_000  # characters: ten times the element that ended the JVM; 1 MB and 10 MB values of
# every format are in the integration target (test_large_values_lake, test_kafka_landing)
TABLE = "long_values"
JSON_NAME = "io.debezium.data.Json"
LONG = ("O'Brien \"x\" \\ 😀 日本語 " * 5_000)[:SIZE]  # quotes, backslashes and 4-byte characters
ESCAPES = '\\"' * (SIZE // 2)  # a long run of escapes, as JSON writes them in a string
NESTED = "[" * 100 + "1" + "]" * 100


def compact(value: object) -> str:
    """A JSON array as the lake writes it (`to_json`): compact, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# column -> (field schema, [value sent for ids 1..3], [canonical text for ids 1..3])
COLUMNS: dict[str, tuple[dict, list, list]] = {
    # the reported record: one element of 10,000 characters; then a megabyte, and a run of escapes
    "c_text_array": (array_of(named("string")),
                     [["x" * 10_000], [LONG, "b"], [ESCAPES]],
                     [compact(["x" * 10_000]), compact([LONG, "b"]), compact([ESCAPES])]),
    "c_text": (named("string"), [LONG, ESCAPES, "x" * 10_000], [LONG, ESCAPES, "x" * 10_000]),
    "c_bytea": (named("bytes"), [b64(bytes(range(256)) * (SIZE // 256)), b64(b"\x00" * 1000), b64(b"\xff")],
                [bytes(range(256)).hex() * (SIZE // 256), "00" * 1000, "ff"]),
    "c_int_array": (array_of(named("int32")), [list(range(100_000)), [], [1]],
                    [compact(list(range(100_000))), "[]", "[1]"]),
    # JSON as MySQL prints it: one blank after every `:` and `,` outside strings
    "c_jsonb": (named("string", JSON_NAME),
                [json.dumps({"doc": LONG}, ensure_ascii=False), NESTED, json.dumps({"s": ESCAPES})],
                [json.dumps({"doc": LONG}, ensure_ascii=False), NESTED, json.dumps({"s": ESCAPES})]),
    "c_hstore": (named("string", JSON_NAME),
                 [json.dumps({"k": LONG}, ensure_ascii=False), '{"a":"1"}', json.dumps({"q": ESCAPES})],
                 [json.dumps({"k": LONG}, ensure_ascii=False), '{"a": "1"}', json.dumps({"q": ESCAPES})]),
}


def land_records(lake) -> None:
    """Three records of a few hundred kilobytes each; one build of the shared lake (conftest) makes `built`."""
    schemas = {name: schema for name, (schema, _, _) in COLUMNS.items()}
    values = [pg_envelope(TABLE, schemas, {"id": i + 1, **{name: sent[i] for name, (_, sent, _) in COLUMNS.items()}},
                          9000 + i) for i in range(3)]
    lake.land("debezium", kcat_lines(values, f"{PG_SERVER}.public.{TABLE}",
                                     keys=[json.dumps({"id": i + 1}) for i in range(3)]))


def test_long_values_are_their_canonical_text(built) -> None:
    rows = built.rows(
        "select row_key, after from {schema}.cdc_changelog "
        f"where source_system = '{PG_SERVER}' and table_name = '{TABLE}' and op = 'c'"
    )
    actual = {int(r["row_key"]): r["after"] for r in rows}
    assert sorted(actual) == [1, 2, 3]
    for key in (1, 2, 3):
        for column, (_, _, expected) in COLUMNS.items():
            got = actual[key][column]
            assert got == expected[key - 1], f"id {key} {column}: {len(got or '')} characters, {(got or '')[:80]!r}"


def test_nothing_of_them_is_rejected(built) -> None:
    rejected = built.rows(
        f"select kafka_offset, reject_reason from {{schema}}.cdc_rejected_messages "
        f"where kafka_topic = '{PG_SERVER}.public.{TABLE}'"
    )
    assert rejected == []
