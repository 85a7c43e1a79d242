"""Debezium conformance: Flink's debezium-json test data and the Debezium documentation samples.

All inputs are landed into one lake (one build) and told apart by topic and, where two files carry
the same logical changes from the same server, by their database name: the schema-exclude and
PostgreSQL files repeat the changes of the schema-include file, and the change log would rightly
collapse them as re-deliveries (same server, table, position and key), so their `source.db` is
renamed in the test input (nothing else is touched).

The Flink files carry no Kafka key (Flink's test feeds bare values): the key of `products` comes
from the `cdc_primary_keys` var, as the table's DDL states `id` is the primary key.

FLOAT: the MySQL column `weight` is FLOAT, but Debezium 1.1 sends it as a Connect `double`
(3.140000104904175), and the change log keeps the double's text. Flink decodes it into its FLOAT
physical type; the test does the same by reading the value as Spark does `cast(cast(v as float) as
string)` (Java `Float.toString`), which prints 3.14. Values are compared exactly otherwise.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from cdc_lake.testing.conformance import CONFORMANCE, expected_rows, replay
from cdc_lake.testing.harness import kcat_lines

FLINK = CONFORMANCE / "flink"
DEBEZIUM = CONFORMANCE / "debezium"
COLUMNS = ["id", "name", "description", "weight"]

# topic -> (file, renamed source.db or None, expected file)
FLINK_INPUTS = {
    "flink_mysql_include": ("debezium-data-schema-include.txt", None, "debezium-data-schema-include"),
    "flink_mysql_exclude": ("debezium-data-schema-exclude.txt", "inventory_exclude", "debezium-data-schema-exclude"),
    "flink_pg_include": ("debezium-postgres-data-schema-include.txt", None, "debezium-postgres-data-schema-include"),
    "flink_pg_exclude": (
        "debezium-postgres-data-schema-exclude.txt", "postgres_exclude", "debezium-postgres-data-schema-exclude",
    ),
}
REPLICA_TOPIC = "flink_pg_replica_identity"
DOC_TOPIC = "dbserver1.inventory.customers"
PRIMARY_KEYS = {
    "inventory.products": ["id"],
    "inventory_exclude.products": ["id"],
    "postgres.inventory.products": ["id"],
    "postgres_exclude.inventory.products": ["id"],
    "postgres_ri.inventory.products": ["id"],
}


def values_of(path, renamed_db: str | None) -> list[str]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if renamed_db is None:
        return lines
    old = '"db":"postgres"' if "postgres" in path.name else '"db":"inventory"'
    renamed = [line.replace(old, f'"db":"{renamed_db}"') for line in lines]
    assert all(old not in line and renamed_db in line for line in renamed)
    return renamed


BUILD_VARS = {"cdc_primary_keys": PRIMARY_KEYS}


def land_records(lake):
    """This module's records; one build of the shared lake (conftest.shared_lake) makes `built`."""
    for topic, (name, renamed_db, _) in FLINK_INPUTS.items():
        lake.land("debezium", kcat_lines(values_of(FLINK / name, renamed_db), topic))
    replica = values_of(FLINK / "debezium-postgres-data-replica-identity.txt", "postgres_ri")
    lake.land("debezium", kcat_lines(replica, REPLICA_TOPIC))
    # the documentation's create event (pretty-printed: one Kafka value is one line) with the
    # tutorial's key line as its Kafka key
    value = json.dumps(json.loads((DEBEZIUM / "debezium-docs-mysql-create-event.json").read_text()))
    key = (DEBEZIUM / "debezium-tutorial-key.json").read_text().strip()
    lake.land("debezium", kcat_lines([value], DOC_TOPIC, keys=[key]))


def as_flink_float(lake, changes: list[dict]) -> list[dict]:
    """Read `weight` as a FLOAT, the way Flink's physical row type does (see module docstring)."""
    texts = sorted({img["weight"] for c in changes for img in (c["before"], c["after"]) if img and img["weight"]})
    query = " union all ".join(f"select '{t}' as t, cast(cast('{t}' as float) as string) as f" for t in texts)
    floats = {r["t"]: r["f"] for r in lake.rows(query)}
    for change in changes:
        for image in (change["before"], change["after"]):
            if image and image["weight"] is not None:
                image["weight"] = floats[image["weight"]]
    return changes


def changelog(lake, topic: str) -> list[dict]:
    return lake.rows(
        "select op, before, after, row_key, change_order from {schema}.cdc_changelog "
        f"where kafka_topic = '{topic}' order by change_order, change_id"
    )


@pytest.mark.parametrize("topic", list(FLINK_INPUTS))
def test_flink_file_replays_to_expected_rows(built, topic):
    expected = expected_rows(FLINK / f"{FLINK_INPUTS[topic][2]}.expected.txt")
    assert len(expected) == 20
    assert replay(as_flink_float(built, changelog(built, topic)), COLUMNS) == expected


def test_schema_include_keeps_the_double_text_and_types(built):
    first = built.rows(
        "select after, column_types, source_position, commit_ts, capture_ts, source_system, database_name "
        "from {schema}.cdc_changelog where kafka_topic = 'flink_mysql_include' and row_key = '101'"
    )[0]
    assert first["after"] == {
        "id": "101", "name": "scooter", "description": "Small 2-wheel scooter", "weight": "3.140000104904175",
    }
    assert first["column_types"] == {"id": "int32", "name": "string", "description": "string", "weight": "float64"}
    # snapshot rows: op "c" (Debezium 1.1) kept, snapshot noted in the position; source.ts_ms is 0,
    # so the commit time falls back to the time Debezium read the row
    assert first["source_position"] == "mysql-bin.000003:154 row 0 snapshot true"
    assert first["commit_ts"] == first["capture_ts"] == dt.datetime(2020, 5, 13, 7, 40, 6, 100000)
    assert (first["source_system"], first["database_name"]) == ("dbserver1", "inventory")
    update = built.rows(
        "select commit_ts, source_position from {schema}.cdc_changelog "
        "where kafka_topic = 'flink_mysql_include' and op = 'u' and row_key = '106'"
    )[0]
    assert update == {"commit_ts": dt.datetime(2020, 5, 13, 9, 26, 27), "source_position": "mysql-bin.000003:362 row 0"}


def test_postgres_positions_are_lsns(built):
    rows = built.rows(
        "select database_name, source_position from {schema}.cdc_changelog "
        "where kafka_topic = 'flink_pg_include' and op = 'd'"
    )
    assert rows == [{"database_name": "postgres.inventory", "source_position": "lsn 34133800 row 0"}]


def test_replica_identity_default_updates_apply_their_after_image(built):
    # Flink fails on an update whose "before" is null (REPLICA IDENTITY DEFAULT); here it is applied
    # as its after image, in its place in the change log. The one delete without any before image
    # (REPLICA IDENTITY NOTHING) names no row and goes to the quarantine with the reason.
    changes = built.rows(
        f"select op, before, after, row_key from {{schema}}.cdc_changelog where kafka_topic = '{REPLICA_TOPIC}'"
    )
    assert sorted(c["op"] for c in changes) == ["c", "c"] + ["r"] * 9 + ["u"] * 4
    updates = [c for c in changes if c["op"] == "u"]
    assert all(c["before"] is None and c["after"] for c in updates)
    # a key whose last change is such an update holds that update's after image
    mismatched = built.rows(
        "select last.row_key from (select source_system, database_name, table_name, row_key, "
        "max_by(struct(op, after), change_order) as change from {schema}.cdc_changelog "
        f"where kafka_topic = '{REPLICA_TOPIC}' group by source_system, database_name, table_name, row_key) as last "
        "join {schema}.cdc_current as c on c.source_system = last.source_system "
        "and c.database_name = last.database_name and c.table_name = last.table_name and c.row_key = last.row_key "
        "where last.change.op = 'u' and (c.is_deleted or to_json(array_sort(map_entries(c.image))) "
        "!= to_json(array_sort(map_entries(last.change.after))))"
    )
    assert mismatched == []
    assert built.rows(
        "select count(*) as n from (select row_key, max_by(op, change_order) as op from {schema}.cdc_changelog "
        f"where kafka_topic = '{REPLICA_TOPIC}' group by row_key) where op = 'u'"
    )[0]["n"] > 0
    rejected = built.rows(
        "select reject_reason, count(*) as n from {schema}.cdc_rejected_messages "
        f"where kafka_topic = '{REPLICA_TOPIC}' group by reject_reason order by reject_reason"
    )
    assert rejected == [
        {"reject_reason": "delete without before image (PostgreSQL: REPLICA IDENTITY NOTHING)", "n": 1},
    ]


def test_documentation_create_event(built):
    rows = built.rows(
        "select * from {schema}.cdc_changelog where kafka_topic = '" + DOC_TOPIC + "'"
    )
    assert len(rows) == 1
    change = rows[0]
    assert change["op"] == "c"
    assert change["before"] is None
    assert change["after"] == {
        "id": "1004", "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org",
    }
    # key column names from the Kafka key (the tutorial's key, id 1001); values from the row image
    assert (change["row_key"], change["primary_key"]) == ("1004", {"id": "1004"})
    assert (change["source_system"], change["database_name"], change["table_name"]) == (
        "{context}-server-1", "inventory", "customers",
    )
    assert change["source_position"] == "{context}-bin.000003:154 row 0"
    # source.ts_ms is 0 in the sample: commit time falls back to payload ts_ms
    assert change["commit_ts"] == change["capture_ts"] == dt.datetime(2016, 6, 9, 16, 56, 51, 815000)
    assert change["changed_columns"] == ["email", "first_name", "id", "last_name"]


def test_nothing_is_lost(built):
    rows = built.rows(
        "select kafka_topic, raw_records, dml_messages, control_messages, rejected_messages, "
        "unaccounted_records from {schema}.cdc_reconciliation where source_format = 'debezium'"
    )
    by_topic = {r.pop("kafka_topic"): r for r in rows}
    assert by_topic[REPLICA_TOPIC] == {
        "raw_records": 16, "dml_messages": 15, "control_messages": 0, "rejected_messages": 1,
        "unaccounted_records": 0,
    }
    for topic in FLINK_INPUTS:
        assert by_topic[topic]["raw_records"] == by_topic[topic]["dml_messages"] == 16
        assert by_topic[topic]["unaccounted_records"] == 0
