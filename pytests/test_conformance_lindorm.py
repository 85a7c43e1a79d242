"""Lindorm conformance: the examples of Alibaba Cloud's data-subscription format page.

lindorm-debezium-v2-doc-examples.jsonl: (1) the definition example with a full schema, (2-5) a SQL
table's insert, update, delete and column-deleting update, (6) an HBase table's insert. The
examples carry no Kafka key, so the SQL table's key (`id`, from its DDL) comes from the
`cdc_primary_keys` var; the HBase row's key is its `ROW` column. All examples share one
timestamp, so their order is the Kafka offset order (the last tie-break).

The same insert is also landed (a) with a Kafka key `{"id": "1004"}` under another namespace, and
(b) with no key under a namespace the var does not list: (a) becomes a change keyed by the Kafka
key, (b) a change of a keyless table, identified by its full image.
"""

from __future__ import annotations

import datetime as dt

from cdc_lake.testing.conformance import CONFORMANCE, replay
from cdc_lake.testing.harness import kcat_lines

EXAMPLES = CONFORMANCE / "lindorm" / "lindorm-debezium-v2-doc-examples.jsonl"
TOPIC = "lindorm_examples"


BUILD_VARS = {"cdc_primary_keys": {"default.customers": ["id"]}}


def land_records(lake):
    """This module's records; one build of the shared lake (conftest.shared_lake) makes `built`."""
    lines = EXAMPLES.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6
    lake.land("lindorm", kcat_lines(lines, TOPIC))
    insert = lines[1]
    keyed = insert.replace('"namespace":"default"', '"namespace":"keyed"')
    unkeyed = insert.replace('"namespace":"default"', '"namespace":"unkeyed"')
    lake.land("lindorm", kcat_lines([keyed, unkeyed], "lindorm_keys", keys=['{"id":"1004"}', None]))


def changes(lake, where: str) -> list[dict]:
    return lake.rows(
        f"select * from {{schema}}.cdc_changelog where {where} order by change_order, change_id"
    )


def test_sql_table_examples_replay_to_expected_rows(built):
    sql_changes = changes(built, f"kafka_topic = '{TOPIC}' and kafka_offset between 1 and 4")
    # the expected file states these in prose; "<last_name deleted>" is a column absent from the
    # after image, printed like NULL
    assert replay(sql_changes, ["id", "first_name", "last_name"]) == [
        "+I(1004,Anne,Kretchmar)",
        "-U(1004,Anne Marie,Kretchmar)",
        "+U(1004,Anne,Kretchmar)",
        "-D(1004,Anne Marie,Kretchmar)",
        "-U(1004,Anne Marie,Kretchmar)",
        "+U(1004,Anne Marie,null)",
    ]
    deleting = sql_changes[-1]
    assert deleting["after"] == {"id": "1004", "first_name": "Anne Marie"}
    assert deleting["changed_columns"] == ["last_name"]
    first = sql_changes[0]
    assert (first["source_format"], first["source_system"], first["database_name"], first["table_name"]) == (
        "lindorm", "ld-xxxx", "default", "customers",
    )
    assert first["commit_ts"] == dt.datetime(2016, 6, 9, 16, 56, 51, 807000)
    assert first["capture_ts"] == dt.datetime(2016, 6, 9, 16, 56, 51, 815000)
    assert first["column_types"] is None  # "schema": {} in the examples


def test_definition_example_with_schema(built):
    change = changes(built, f"kafka_topic = '{TOPIC}' and kafka_offset = 0")
    assert replay(change, ["id", "name"]) == ["-U(1004,Jane)", "+U(1004,Anne)"]
    assert change[0]["column_types"] == {"id": "int32", "name": "string"}


def test_hbase_insert(built):
    change = changes(built, f"kafka_topic = '{TOPIC}' and kafka_offset = 5")
    assert len(change) == 1
    # expected: ROW=b'user1', f:name=b'lucky' (base64 cells; bytes that are UTF-8 text become text)
    assert change[0]["after"] == {"ROW": "user1", "f_name": "lucky"}
    assert (change[0]["row_key"], change[0]["primary_key"]) == ("user1", {"ROW": "user1"})
    assert change[0]["column_types"] == {"ROW": "varchar", "f_name": "varchar"}


def test_keys_from_kafka_key_or_the_image(built):
    keyed = changes(built, "database_name = 'keyed'")
    assert [(c["row_key"], c["primary_key"], c["is_keyless"]) for c in keyed] == [("1004", {"id": "1004"}, False)]
    [keyless] = changes(built, "database_name = 'unkeyed'")
    assert (keyless["primary_key"], keyless["is_keyless"], len(keyless["row_key"])) == ({}, True, 64)
    rejected = built.rows("select reject_reason from {schema}.cdc_rejected_messages where source_format = 'lindorm'")
    assert rejected == []
