"""Row identity on real producers' shapes (issue 16): key-changing updates, keyless tables, and
Debezium records whose position fields are empty (one build).

The expected results are what MySQL holds after the statements each block stands for, written
next to it; they do not come from the project's own code:

- `UPDATE t SET id = 5 WHERE id = 1; DELETE FROM t WHERE id = 5;` leaves no row. Canal,
  KafkaRiverCanal and Tencent DTS send the update as one event whose before image holds the old
  key; Debezium sends a delete of the old key, a tombstone and a create of the new key.
- A table without a primary key holds a multiset: two identical rows inserted and one deleted
  leave one; an update of one row retracts its old image and adds the new one.
- Flink CDC and other embedded engines write `file: ""`, `pos: 0`, `row: 0` on every record: three
  updates of one key must stay three changes, and an exact re-delivery must still collapse.
"""

from __future__ import annotations

import json

import pytest

from cdc_lake.testing.harness import kcat_lines

ES = 1_700_000_000_000
VARS = {"cdc_primary_keys": {"ids.configured": ["code"]}}


def canal(type_: str, table: str, data: list[dict], old: list[dict] | None = None, *, msg_id: int,
          pk: list[str] | None = ("id",)) -> str:
    types = {column: "varchar(10)" if column != "id" else "int(11)" for column in data[0]}
    return json.dumps({
        "data": data, "database": "ids", "es": ES + msg_id * 1000, "id": msg_id, "isDdl": False,
        "mysqlType": types, "old": old, "pkNames": list(pk) if pk is not None else None, "sql": "",
        "table": table, "ts": ES + msg_id * 1000 + 5, "type": type_,
    })


CANAL = [
    # the key change, then the new key deleted
    canal("INSERT", "moved", [{"id": "1", "v": "a"}], msg_id=1),
    canal("UPDATE", "moved", [{"id": "5", "v": "a"}], [{"id": "1"}], msg_id=2),
    canal("DELETE", "moved", [{"id": "5", "v": "a"}], msg_id=3),
    # a keyless table: two identical rows, a third, one of the twins deleted, the third updated
    canal("INSERT", "log", [{"msg": "x", "n": None}, {"msg": "x", "n": None}], msg_id=4, pk=None),
    canal("INSERT", "log", [{"msg": "y", "n": "1"}], msg_id=5, pk=[]),
    canal("DELETE", "log", [{"msg": "x", "n": None}], msg_id=6, pk=None),
    canal("UPDATE", "log", [{"msg": "z", "n": "1"}], [{"msg": "y"}], msg_id=7, pk=None),
    # no pkNames, but the cdc_primary_keys var names the key
    canal("INSERT", "configured", [{"code": "k1", "v": "a"}], msg_id=8, pk=None),
    canal("UPDATE", "configured", [{"code": "k1", "v": "b"}], [{"v": "a"}], msg_id=9, pk=None),
]


def krc(event: str, columns: list[dict], pos: int) -> str:
    return json.dumps({"binlog": f"{pos}@mysql-bin.000001", "time": ES + pos, "canalTime": ES + pos + 5,
                       "db": "ids", "table": "moved_krc", "event": event, "columns": columns, "keys": ["id"]})


KRC = [
    krc("i", [{"n": "id", "t": "int(11)", "v": "1"}, {"n": "v", "t": "varchar(5)", "v": "a"}], 100),
    krc("u", [{"n": "id", "t": "int(11)", "v": "5", "origin_val": "1", "updated": True},
              {"n": "v", "t": "varchar(5)", "v": "a"}], 200),
    krc("d", [{"n": "id", "t": "int(11)", "v": "5"}, {"n": "v", "t": "varchar(5)", "v": "a"}], 300),
]

DTS_COLUMNS = [{"name": "id", "dataTypeNumber": 3, "isKey": True, "originalType": "int(11)"},
               {"name": "v", "dataTypeNumber": 253, "isKey": False, "originalType": "varchar(5)"}]


def dts(record_id: int, message_type: str, old: list | None, new: list | None) -> str:
    return json.dumps({
        "id": record_id, "version": 1, "messageType": message_type, "fileName": "mysql-bin.000004",
        "position": f"{record_id * 100}@4", "timestamp": 1_700_000_000 + record_id, "serverId": 7001,
        "readerTimestamp": ES + record_id * 1000, "schemaName": "ids", "tableName": "moved_dts",
        "objectName": "ids.moved_dts", "columns": DTS_COLUMNS, "pkNames": ["id"],
        "oldColumns": old, "newColumns": new,
    })


DTS = [
    dts(1, "INSERT", None, ["1", "a"]),
    dts(2, "UPDATE", ["1", "a"], ["5", "a"]),
    dts(3, "DELETE", ["5", "a"], None),
]

FIELDS = [{"type": "int32", "optional": False, "field": "id"}, {"type": "string", "optional": True, "field": "v"}]


def debezium(op: str, before: dict | None, after: dict | None, *, table: str, ts: int, file: str = "mysql-bin.000001",
             pos: int = 0, row: int = 0) -> str:
    row_schema = {"type": "struct", "fields": FIELDS, "optional": True, "name": f"ids.{table}.Value"}
    schema = {"type": "struct", "fields": [{**row_schema, "field": "before"}, {**row_schema, "field": "after"},
                                           {"type": "struct", "fields": [], "field": "source"}]}
    payload = {"before": before, "after": after, "op": op, "ts_ms": ts + 7,
               "source": {"connector": "mysql", "name": "srv", "ts_ms": ts, "snapshot": "false", "db": "ids",
                          "table": table, "file": file, "pos": pos, "row": row}}
    return json.dumps({"schema": schema, "payload": payload})


def key(id_: int) -> str:
    return json.dumps({"schema": {"type": "struct", "fields": [FIELDS[0]]}, "payload": {"id": id_}})


# (value, key) in offset order
DEBEZIUM = [
    # Debezium's own shape of `UPDATE ... SET id = 5 WHERE id = 1`: delete, tombstone, create (one position)
    (debezium("c", None, {"id": 1, "v": "a"}, table="moved_dbz", ts=ES, pos=100), key(1)),
    (debezium("d", {"id": 1, "v": "a"}, None, table="moved_dbz", ts=ES + 1000, pos=200), key(1)),
    (None, key(1)),
    (debezium("c", None, {"id": 5, "v": "a"}, table="moved_dbz", ts=ES + 1000, pos=200), key(5)),
    (debezium("d", {"id": 5, "v": "a"}, None, table="moved_dbz", ts=ES + 2000, pos=300), key(5)),
    # an embedded engine: no position; a -> b -> c at distinct times, the last one delivered twice
    (debezium("c", None, {"id": 1, "v": "a"}, table="flink", ts=ES, file=""), key(1)),
    (debezium("u", {"id": 1, "v": "a"}, {"id": 1, "v": "b"}, table="flink", ts=ES + 1000, file=""), key(1)),
    (debezium("u", {"id": 1, "v": "b"}, {"id": 1, "v": "c"}, table="flink", ts=ES + 2000, file=""), key(1)),
    (debezium("u", {"id": 1, "v": "b"}, {"id": 1, "v": "c"}, table="flink", ts=ES + 2000, file=""), key(1)),
    # no Kafka key: a keyless table; two identical rows of one event, then one of them deleted
    (debezium("c", None, {"id": 7, "v": "dup"}, table="nokey", ts=ES, pos=400, row=0), None),
    (debezium("c", None, {"id": 7, "v": "dup"}, table="nokey", ts=ES, pos=400, row=1), None),
    (debezium("d", {"id": 7, "v": "dup"}, None, table="nokey", ts=ES + 1000, pos=500), None),
]


BUILD_VARS = VARS


def land_records(lake):
    """This module's records; one build of the shared lake (conftest.shared_lake) makes `built`."""
    lake.land("canal_flat", kcat_lines(CANAL, "canal-ids"))
    lake.land("kafka_river_canal", kcat_lines(KRC, "krc-ids"))
    lake.land("tencent_dts", kcat_lines(DTS, "dts-ids"))
    values, keys = zip(*DEBEZIUM, strict=True)
    lake.land("debezium", kcat_lines(values, "dbz-ids", keys=keys))


def live(lake, table: str) -> dict[tuple, int]:
    """Live rows of a table in cdc_current: image (as sorted items) -> how many."""
    rows = lake.rows(
        f"select image, row_count from {{schema}}.cdc_current where table_name = '{table}' and not is_deleted"
    )
    return {tuple(sorted(r["image"].items())): r["row_count"] for r in rows}


@pytest.mark.parametrize("table", ["moved", "moved_krc", "moved_dts", "moved_dbz"])
def test_a_key_change_then_delete_leaves_no_row(built, table):
    assert live(built, table) == {}
    ops = built.rows(
        f"select op, row_key from {{schema}}.cdc_changelog where table_name = '{table}' "
        "order by row_key, change_order"
    )
    # the update is a delete of the old key and an insert of the new one
    assert [(o["row_key"], o["op"]) for o in ops] == [("1", "c"), ("1", "d"), ("5", "c"), ("5", "d")]
    history = built.rows(
        "select row_key, valid_to is not null as closed, closed_by_delete, is_current "
        f"from {{schema}}.cdc_history where table_name = '{table}' order by row_key"
    )
    assert history == [
        {"row_key": "1", "closed": True, "closed_by_delete": True, "is_current": False},
        {"row_key": "5", "closed": True, "closed_by_delete": True, "is_current": False},
    ]


def test_keyless_table_is_a_multiset(built):
    assert live(built, "log") == {(("msg", "x"), ("n", None)): 1, (("msg", "z"), ("n", "1")): 1}
    changes = built.rows(
        "select op, is_keyless, primary_key, length(row_key) as key_length from {schema}.cdc_changelog "
        "where table_name = 'log'"
    )
    # 3 inserts, 1 delete, and the update as a retraction plus an insert
    assert sorted(c["op"] for c in changes) == ["c", "c", "c", "c", "d", "d"]
    assert {(c["is_keyless"], len(c["primary_key"]), c["key_length"]) for c in changes} == {(True, 0, 64)}
    rejected = built.rows("select reject_reason from {schema}.cdc_rejected_messages")
    assert rejected == []


def test_keyless_history_counts_identical_rows(built):
    versions = built.rows(
        "select image['msg'] as msg, row_count, valid_from, valid_to, closed_by_delete from {schema}.cdc_history "
        "where table_name = 'log' order by msg, valid_from, change_order"
    )
    summary = [(v["msg"], v["row_count"], v["valid_to"] is None, v["closed_by_delete"]) for v in versions]
    assert summary == [
        ("x", 1, False, False),  # the first twin, for no time: the second came in the same statement
        ("x", 2, False, False),  # two twins, until one is deleted
        ("x", 1, True, False),  # one left
        ("y", 1, False, True),  # retracted by the update
        ("z", 1, True, False),
    ]
    assert versions[0]["valid_to"] == versions[1]["valid_from"] == versions[0]["valid_from"]
    assert versions[1]["valid_to"] == versions[2]["valid_from"]


def test_debezium_keyless_duplicates_and_a_delete(built):
    assert live(built, "nokey") == {(("id", "7"), ("v", "dup")): 1}


def test_primary_key_from_the_var_for_canal(built):
    rows = built.rows(
        "select row_key, primary_key, image, is_keyless from {schema}.cdc_current where table_name = 'configured'"
    )
    assert rows == [{"row_key": "k1", "primary_key": {"code": "k1"}, "image": {"code": "k1", "v": "b"},
                     "is_keyless": False}]


def test_changes_without_position_are_told_apart(built):
    changes = built.rows(
        "select op, after['v'] as v from {schema}.cdc_changelog where table_name = 'flink' order by change_order"
    )
    assert [(c["op"], c["v"]) for c in changes] == [("c", "a"), ("u", "b"), ("u", "c")]
    assert live(built, "flink") == {(("id", "1"), ("v", "c")): 1}
    versions = built.rows(
        "select image['v'] as v from {schema}.cdc_history where table_name = 'flink' order by valid_from"
    )
    assert [v["v"] for v in versions] == ["a", "b", "c"]
