"""dtle conformance: the key, value, schema-change and tombstone samples of dtle's documentation.

dtle-messages.jsonl holds, one per line, a DML Kafka key, its value, a schema-change value (Kafka
key null, on dtle's SchemaChangeTopic) and the value dtle writes as a delete tombstone
(`{"schema":null,"payload":null}`, text, not a Kafka null). They are landed as the Kafka records
dtle produces: (key 1, value 2) and (key 1, value 4) on the table's topic, (null, value 3) on the
schema-change topic. The documentation's own key block is not valid JSON (a missing comma); landed
as the key of the same value it cannot name the key, so that record is rejected with a reason that
says what to change (a missing key would make a keyless table; a broken one is an error).
"""

from __future__ import annotations

import datetime as dt

from cdc_lake.testing.conformance import CONFORMANCE
from cdc_lake.testing.harness import kcat_lines

DTLE = CONFORMANCE / "dtle"
# dtle names a table's topic `<job topic>.<database>.<table>`; its job topic here is `dtle` (the
# Debezium documentation's own `dbserver1.inventory.customers` is test_conformance_debezium's)
DML_TOPIC = "dtle.inventory.customers"
DDL_TOPIC = "dtle_schema_changes"
DOC_KEY_TOPIC = "dtle_doc_key"


def land_records(lake):
    """This module's records; one build of the shared lake (conftest.shared_lake) makes `built`."""
    key, value, ddl, tombstone = (DTLE / "dtle-messages.jsonl").read_text(encoding="utf-8").splitlines()
    lake.land("debezium", kcat_lines([value, tombstone], DML_TOPIC, keys=[key, key]))
    lake.land("debezium", kcat_lines([ddl], DDL_TOPIC, keys=[None]))
    doc_key = (DTLE / "dtle-dml-key.doc.json").read_text(encoding="utf-8")
    lake.land("debezium", kcat_lines([value], DOC_KEY_TOPIC, keys=[doc_key]))


def test_snapshot_insert_is_one_change(built):
    changes = built.rows("select * from {schema}.cdc_changelog")
    assert len(changes) == 1
    change = changes[0]
    # dtle sends full-copy rows as op "c" with source.snapshot=true: kept as c, noted in the position
    assert change["op"] == "c"
    assert change["after"] == {
        "id": "1004", "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org",
    }
    assert change["before"] is None
    assert (change["row_key"], change["primary_key"]) == ("1004", {"id": "1004"})
    assert (change["source_format"], change["source_system"], change["database_name"], change["table_name"]) == (
        "debezium", "dbserver1", "inventory", "customers",
    )
    assert change["source_position"] == "mysql-bin.000003:154 row 0 snapshot true"
    assert change["column_types"] == {"id": "int32", "first_name": "string", "last_name": "string", "email": "string"}
    # dtle DML carries no commit time (ts_sec 0): the time dtle processed the row stands in
    assert change["commit_ts"] == change["capture_ts"] == dt.datetime(2017, 2, 7, 20, 49, 37, 691000)


def test_schema_change_record(built):
    ddl = built.rows("select * from {schema}.cdc_schema_changes")
    assert len(ddl) == 1
    assert {k: ddl[0][k] for k in (
        "source_format", "source_system", "database_name", "table_name", "ddl_type", "source_position", "gtid",
        "commit_ts", "kafka_topic",
    )} == {
        "source_format": "debezium",
        "source_system": "mysql2",
        "database_name": "a",
        "table_name": "a",
        "ddl_type": "CREATE",
        "source_position": "bin.000022:439 snapshot",
        "gtid": "acd7d195-06cd-11e9-928f-02000aba3e28:1-175",
        "commit_ts": dt.datetime(2022, 1, 10, 9, 46, 16),
        "kafka_topic": DDL_TOPIC,
    }
    assert ddl[0]["ddl_statement"].startswith("CREATE TABLE `a` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,")


def test_every_record_is_accounted_for(built):
    kinds = built.rows(
        "select kafka_topic, kafka_offset, record_kind, reject_reason from {schema}.base_debezium__messages "
        "order by kafka_topic, kafka_offset"
    )
    assert [(k["kafka_topic"], k["kafka_offset"], k["record_kind"]) for k in kinds] == [
        (DML_TOPIC, 0, "dml"),
        (DML_TOPIC, 1, "control"),  # dtle's tombstone text
        (DOC_KEY_TOPIC, 0, "rejected"),
        (DDL_TOPIC, 0, "ddl"),
    ]
    assert kinds[2]["reject_reason"].startswith("the Kafka key is not a JSON object")
    reconciliation = built.rows(
        "select sum(unaccounted_records) as lost from {schema}.cdc_reconciliation where source_format = 'debezium'"
    )
    assert reconciliation == [{"lost": 0}]
