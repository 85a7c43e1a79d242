"""KafkaRiverCanal against the protocol examples (conformance/kafkarivercanal/canalx-protocol-examples).

The expected file is derived (no upstream test states a result): an insert, an update whose before
image comes from `origin_val` of the one updated column, and a delete whose `v` is the before
image. The same three messages are also landed in reverse Kafka order on a second topic: the
order must come from the binlog position compared as numbers ("6816" < "25521" although it is
larger as text), not from landing.
"""

from __future__ import annotations

import json

from cdc_lake.testing.conformance import CONFORMANCE
from cdc_lake.testing.harness import kcat_lines

EXAMPLES = CONFORMANCE / "kafkarivercanal" / "canalx-protocol-examples.jsonl"
TOPIC = "canalx-protocol-examples"
REVERSED_TOPIC = "canalx-reversed"


def messages() -> list[str]:
    return [line for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]


def land_records(lake):
    """This module's records; one build of the shared lake (conftest.shared_lake) makes `built`."""
    lake.land("kafka_river_canal", EXAMPLES, raw_values=True, topic=TOPIC)
    lake.land("kafka_river_canal", kcat_lines(list(reversed(messages())), REVERSED_TOPIC))


def changelog(lake, topic: str) -> list[dict]:
    return lake.rows(
        "select op, row_key, primary_key, before, after, column_types, commit_ts, capture_ts, "
        "source_position, change_order, source_system, database_name, table_name "
        f"from {{schema}}.cdc_changelog where kafka_topic = '{topic}' order by change_order"
    )


def test_three_changes_with_expected_images(built):
    rows = changelog(built, TOPIC)
    assert [r["op"] for r in rows] == ["c", "u", "d"]
    assert {(r["database_name"], r["table_name"], r["row_key"]) for r in rows} == {
        ("TestCanal", "g_order_010", "126")
    }
    assert all(r["primary_key"] == {"order_id": "126"} for r in rows)
    insert, update, delete = rows
    assert insert["before"] is None
    assert insert["after"] == {
        "order_id": "126", "x_id": "123456", "phone": "13264494028", "time": "2015-08-10 13:08:13",
    }
    assert update["before"] == {"order_id": "126", "x_id": "123456", "name": "小明"}
    assert update["after"] == {"order_id": "126", "x_id": "123456", "name": "小春"}
    assert delete["before"] == {"order_id": "126", "x_id": "123456", "phone": "13264494028"}
    assert delete["after"] is None
    assert insert["column_types"]["time"] == "timestamp"
    assert insert["column_types"]["order_id"] == "bigint(20)"


def test_positions_and_times(built):
    rows = changelog(built, TOPIC)
    assert [r["source_position"] for r in rows] == [
        "6816@mysql-bin.000070", "25521@mysql-bin.000070", "58851@mysql-bin.000070",
    ]
    # change_order starts with binlog file number and position, zero-padded numbers
    assert [r["change_order"].split(".")[:2] for r in rows] == [
        ["0000000000000000070", "0000000000000006816"],
        ["0000000000000000070", "0000000000000025521"],
        ["0000000000000000070", "0000000000000058851"],
    ]
    assert [r["commit_ts"].isoformat() for r in rows] == [
        "2015-12-16T03:04:52", "2015-12-16T03:25:07", "2015-12-16T03:37:14",
    ]
    assert rows[0]["capture_ts"].isoformat() == "2015-12-16T03:04:53.370000"


def test_order_comes_from_the_position_not_from_landing(built):
    forward = changelog(built, TOPIC)
    backward = changelog(built, REVERSED_TOPIC)
    assert [(r["op"], r["before"], r["after"]) for r in backward] == [
        (r["op"], r["before"], r["after"]) for r in forward
    ]
    current = built.rows(
        "select source_system, row_key, is_deleted, op, image from {schema}.cdc_current "
        "order by source_system"
    )
    assert [(r["source_system"], r["row_key"], r["is_deleted"], r["op"]) for r in current] == [
        (TOPIC, "126", True, "d"),
        (REVERSED_TOPIC, "126", True, "d"),
    ]
    assert current[0]["image"] == current[1]["image"]
    assert current[0]["image"] == {"order_id": "126", "x_id": "123456", "phone": "13264494028"}


def test_history_has_two_versions_closed_by_the_delete(built):
    rows = built.rows(
        "select op, image, is_current, closed_by_delete, valid_from, valid_to from {schema}.cdc_history "
        f"where source_system = '{TOPIC}' order by valid_from"
    )
    assert [(r["op"], r["is_current"], r["closed_by_delete"]) for r in rows] == [
        ("c", False, False),
        ("u", False, True),
    ]
    assert rows[0]["valid_to"] == rows[1]["valid_from"]
    assert json.dumps(rows[1]["image"], ensure_ascii=False, sort_keys=True) == json.dumps(
        {"order_id": "126", "x_id": "123456", "name": "小春"}, ensure_ascii=False, sort_keys=True
    )


def test_nothing_rejected(built):
    assert built.rows(
        "select record_kind, count(*) as n from {schema}.int_raw_records_unioned group by record_kind"
    ) == [{"record_kind": "dml", "n": 6}]
