"""Debezium's PostgreSQL connector on PostgreSQL's default settings, across landing batches (issue 68).

Under REPLICA IDENTITY DEFAULT an update carries no before image and a delete only the key; an
unchanged TOASTed value arrives as the connector's placeholder; a TRUNCATE is one record `op: "t"`
per table; a logical decoding message is `op: "m"`. A scenario of such records (JSON converter
without schemas) is landed in batches beside the other batched scenarios, with a build after each:
placeholders resolved from the key's previous version (in an earlier batch, in the same batch, in
a chain of placeholders), a placeholder whose earlier version lands later (late data), a key-only
delete, an update under REPLICA IDENTITY FULL whose placeholder the before image answers, a
TRUNCATE, a message record, two schemas with a table of the same name, and incremental snapshot
reads (no `source.lsn`, ordered as LSN 0 at their `source.sequence`'s last commit LSN) landing
after the streamed changes that follow them. After every batch
cdc_current and cdc_history must equal an independent Python replay of the delivered records in
commit order (Debezium's `source.sequence`, then the LSN); at the end `dbt build --full-refresh`
must give the same tables, column by column.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from cdc_lake.testing.harness import Lake, kcat_lines

# batches with a build after each, in the integration target's batched lake (docs/testing.md)
pytestmark = pytest.mark.integration

TOPIC_PREFIX = "pgsrc"  # topics pgsrc.<schema>.<table>, as Debezium names them
DATABASE = "appdb"
T0 = 1_767_225_600_000  # 2026-01-01 00:00:00 UTC, in ms
PLACEHOLDER = "__debezium_unavailable_value"
BODY = {key: f"body {key} " + "x" * 40 for key in range(1, 8)}
KEYS = {"docs": "id", "items": "id", "tags": "id"}


def source(schema: str, table: str, commit_lsn: int | None, lsn: int) -> dict[str, Any]:
    return {
        "version": "3.6.1.Final", "connector": "postgresql", "name": TOPIC_PREFIX, "ts_ms": T0 + lsn,
        "snapshot": "false", "db": DATABASE, "schema": schema, "table": table, "txId": 700 + lsn // 100,
        "lsn": lsn, "xmin": None,
        "sequence": json.dumps([None if commit_lsn is None else str(commit_lsn), str(lsn)]),
    }


def change(op: str, table: str, commit_lsn: int | None, lsn: int, before: dict | None, after: dict | None,
           schema: str = "public") -> dict[str, Any]:
    return {"before": before, "after": after, "source": source(schema, table, commit_lsn, lsn), "op": op,
            "ts_ms": T0 + lsn + 5, "transaction": None}


def doc(key: int, title: str | None, body: str | None, n: int = 0) -> dict[str, Any]:
    return {"id": key, "title": title, "body": body, "n": n}


def incremental_read(table: str, commit_lsn: int, lsn: int, after: dict, ts_ms: int) -> dict[str, Any]:
    """An incremental snapshot's read: Debezium leaves `lsn`, `txId` and `xmin` out of its source,
    `sequence` is that of the WAL position where its window closed, `ts_ms` the time it was sent."""
    src = {k: v for k, v in source("public", table, commit_lsn, lsn).items() if k not in ("lsn", "txId", "xmin")}
    return {"before": None, "after": after, "source": {**src, "snapshot": "incremental", "ts_ms": ts_ms},
            "op": "r", "ts_ms": ts_ms + 5, "transaction": None}


def truncate(table: str, commit_lsn: int, lsn: int) -> dict[str, Any]:
    return {"before": None, "after": None, "source": source("public", table, commit_lsn, lsn), "op": "t",
            "ts_ms": T0 + lsn + 5, "transaction": None}


def message(commit_lsn: int, lsn: int) -> dict[str, Any]:
    record = {"op": "m", "ts_ms": T0 + lsn + 5, "source": source("", "", commit_lsn, lsn),
              "message": {"prefix": "audit", "content": "aGVsbG8="}}
    return record


# (record, batch), in no particular order: the lake orders by commit LSN, then LSN
SCENARIO: list[tuple[dict[str, Any], int]] = [
    (change("c", "docs", None, 100, None, doc(1, "t1", BODY[1], 1)), 1),
    (change("c", "docs", None, 110, None, doc(2, "t2", BODY[2], 2)), 1),
    (change("c", "docs", None, 120, None, doc(3, "t3", BODY[3], 3)), 1),
    (change("c", "tags", None, 130, None, {"id": 1, "label": "red"}), 1),
    (change("c", "tags", None, 140, None, {"id": 2, "label": "blue"}), 1),
    (change("c", "items", None, 150, None, {"id": 1, "v": "public one"}, schema="public"), 1),
    (change("c", "items", None, 160, None, {"id": 1, "v": "other one"}, schema="other"), 1),
    # default identity: no before image, the body unchanged (placeholder), twice in a row
    (change("u", "docs", 160, 200, None, doc(1, "t1b", PLACEHOLDER, 1)), 2),
    (change("u", "docs", 200, 210, None, doc(1, "t1c", PLACEHOLDER, 1)), 2),
    # a key-only delete: the other columns null or their type's zero
    (change("d", "docs", 210, 220, doc(2, None, None, 0), None), 2),
    # REPLICA IDENTITY FULL: the before image answers the after image's placeholder
    (change("u", "docs", 220, 230, doc(3, "t3", BODY[3], 3), doc(3, "t3b", PLACEHOLDER, 3)), 2),
    (message(230, 240), 2),
    # a placeholder whose key's insert (ordered before it) lands in the next batch
    (change("u", "docs", 300, 310, None, doc(4, "t4b", PLACEHOLDER, 4)), 3),
    (change("c", "docs", 250, 260, None, doc(4, "t4", BODY[4], 4)), 4),
    (truncate("tags", 320, 330), 3),
    (change("c", "tags", 330, 340, None, {"id": 3, "label": "green"}), 3),
    (change("u", "items", 340, 350, None, {"id": 1, "v": "other two"}, schema="other"), 3),
    # after an incremental snapshot's window closed at 390 (its read lands in batch 4), a change
    (change("u", "tags", 400, 400, None, {"id": 3, "label": "teal"}), 3),
    # read.only=true: a window closes at the first change its chunk could not see, and the reads
    # come before it with its sequence (here one landing later, its send time equal to the commit's)
    (change("u", "tags", 410, 420, None, {"id": 3, "label": "olive"}), 3),
    # a placeholder with no earlier version of its key anywhere: unknown
    (change("u", "docs", 350, 360, None, doc(5, "t5", PLACEHOLDER, 5)), 4),
    # the body changes, then stays unchanged again
    (change("u", "docs", 360, 370, None, doc(1, "t1d", "new body", 1)), 4),
    (change("u", "docs", 370, 380, None, doc(1, "t1e", PLACEHOLDER, 1)), 4),
    (incremental_read("tags", 390, 390, {"id": 3, "label": "green"}, T0 + 390), 4),
    (incremental_read("tags", 410, 420, {"id": 3, "label": "teal"}, T0 + 420), 4),
]
BATCHES = 4


def batch_records(batch: int) -> list[dict[str, Any]]:
    return [record for record, b in SCENARIO if b == batch]


def topic(record: dict[str, Any]) -> str:
    if record["op"] == "m":
        return f"{TOPIC_PREFIX}.message"  # Debezium's topic for logical decoding messages
    return f"{TOPIC_PREFIX}.{record['source']['schema']}.{record['source']['table']}"


def kafka_key(record: dict[str, Any]) -> str | None:
    if record["op"] in ("t", "m"):
        return None  # a truncate or a message has no key
    image = record["after"] if record["op"] != "d" else record["before"]
    key = KEYS[record["source"]["table"]]
    return json.dumps({key: image[key]})


def land_batch(lake: Lake, batch: int) -> None:
    # each topic's offsets run on from the batches before (no gap for the reconciliation to see)
    offsets: dict[str, int] = {}
    for earlier in range(1, batch):
        for record in batch_records(earlier):
            offsets[topic(record)] = offsets.get(topic(record), 0) + 1
    lines = []
    for record in batch_records(batch):
        name = topic(record)
        lines += kcat_lines([json.dumps(record)], topic=name, start_offset=offsets.get(name, 0),
                            keys=[kafka_key(record)])
        offsets[name] = offsets.get(name, 0) + 1
    lake.land("debezium", lines)


def ts(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).replace(tzinfo=None)


def text_image(image: dict[str, Any]) -> dict[str, str | None]:
    return {k: None if v is None else str(v) for k, v in image.items()}


def oracle(records: list[dict[str, Any]]) -> tuple[dict, list[tuple]]:
    """Replay records in commit order: current rows by (database, table, key) as (image, unknown
    columns, is_deleted), and history versions as (database, table, key, image, valid_from,
    valid_to)."""
    def order(record: dict[str, Any]) -> tuple[int, int]:
        sequence = json.loads(record["source"]["sequence"])
        return int(sequence[0] or 0), record["source"].get("lsn") or 0

    current: dict[tuple, list] = {}  # key -> [image, unknown, live]
    versions: list[list] = []
    open_version: dict[tuple, list] = {}

    def close(identity: tuple, at: dt.datetime) -> None:
        if identity in open_version:
            open_version.pop(identity)[5] = at

    for record in sorted(records, key=order):
        src = record["source"]
        at = ts(src["ts_ms"])
        database, table = f"{DATABASE}.{src['schema']}", src["table"]
        if record["op"] == "m":
            continue
        if record["op"] == "t":
            for identity, state in current.items():
                if identity[:2] == (database, table) and state[2]:
                    state[2] = False
                    close(identity, at)
            continue
        key_column = KEYS[table]
        if record["op"] == "d":
            identity = (database, table, str(record["before"][key_column]))
            if identity in current and current[identity][2]:
                current[identity][2] = False
                close(identity, at)
            continue
        identity = (database, table, str(record["after"][key_column]))
        previous = current.get(identity)
        image, unknown = text_image(record["after"]), []
        for column, value in record["after"].items():
            if value == PLACEHOLDER:
                before = record["before"] or {}
                if column in before and before[column] != PLACEHOLDER:
                    image[column] = str(before[column])
                elif previous is not None and column not in previous[1]:
                    image[column] = previous[0][column]
                else:
                    image[column], unknown = None, [*unknown, column]
        if previous is not None and previous[2] and previous[0] == image:
            continue
        close(identity, at)
        current[identity] = [image, sorted(unknown), True]
        version = [database, table, identity[2], json.dumps(image, sort_keys=True), at, None]
        versions.append(version)
        open_version[identity] = version
    expected_current = {k: (json.dumps(img, sort_keys=True), unknown, not live)
                        for k, (img, unknown, live) in current.items()}
    return expected_current, sorted(tuple(v) for v in versions)


def observe(part: Lake) -> tuple[dict, list[tuple]]:
    current = {
        (r["database_name"], r["table_name"], r["row_key"]):
            (json.dumps(r["image"], sort_keys=True), sorted(r["unknown_columns"] or []), r["is_deleted"])
        for r in part.rows(
            "select database_name, table_name, row_key, image, unknown_columns, is_deleted from {schema}.cdc_current"
        )
    }
    history = sorted(
        (r["database_name"], r["table_name"], r["row_key"], json.dumps(r["image"], sort_keys=True),
         r["valid_from"], r["valid_to"])
        for r in part.rows(
            "select database_name, table_name, row_key, image, valid_from, valid_to from {schema}.cdc_history"
        )
    )
    return current, history


def test_every_batch_equals_the_replay(batches):
    _, observed = batches
    assert len(observed) == BATCHES
    for batch, found in enumerate(observed, start=1):
        delivered = [record for b in range(1, batch + 1) for record in batch_records(b)]
        expected = oracle(delivered)
        assert found[0] == expected[0], f"cdc_current after batch {batch}"
        assert found[1] == expected[1], f"cdc_history after batch {batch}"


def test_placeholders_never_become_values(batches):
    part, _ = batches
    rows = part.rows(
        "select count(*) as n from {schema}.cdc_history "
        f"where exists(map_values(image), v -> v = '{PLACEHOLDER}')"
    )
    assert rows == [{"n": 0}]
    unknown = part.rows(
        "select row_key, image['body'] as body, unknown_columns from {schema}.cdc_current where row_key = '5'"
    )
    assert unknown == [{"row_key": "5", "body": None, "unknown_columns": ["body"]}]


def test_key_only_delete_keeps_the_last_real_values(batches):
    part, _ = batches
    rows = part.rows(
        "select image, is_deleted, op from {schema}.cdc_current where table_name = 'docs' and row_key = '2'"
    )
    assert rows == [{"image": {"id": "2", "title": "t2", "body": BODY[2], "n": "2"}, "is_deleted": True, "op": "d"}]


def test_truncate_and_messages_are_not_rows(batches):
    part, _ = batches
    tags = part.rows(
        "select row_key, is_deleted, op from {schema}.cdc_current where table_name = 'tags' order by row_key"
    )
    assert tags == [
        {"row_key": "1", "is_deleted": True, "op": "t"},
        {"row_key": "2", "is_deleted": True, "op": "t"},
        {"row_key": "3", "is_deleted": False, "op": "u"},
    ]
    assert part.rows("select count(*) as n from {schema}.cdc_rejected_messages") == [{"n": 0}]
    kinds = part.rows(
        "select record_kind, count(*) as n from {schema}.base_debezium__messages group by record_kind "
        "order by record_kind"
    )
    assert {r["record_kind"]: r["n"] for r in kinds} == {"control": 1, "ddl": 1, "dml": len(SCENARIO) - 2}


def test_schemas_with_tables_of_one_name_stay_apart(batches):
    part, _ = batches
    rows = part.rows(
        "select database_name, image['v'] as v from {schema}.cdc_current where table_name = 'items' "
        "order by database_name"
    )
    assert rows == [{"database_name": "appdb.other", "v": "other two"},
                    {"database_name": "appdb.public", "v": "public one"}]


@pytest.mark.after_full_refresh
def test_full_refresh_gives_the_same_tables(batches, batched_lake):
    part, observed = batches
    incremental, refreshed = batched_lake.full_refresh(__name__)
    for table in incremental:
        rows = {
            side: sorted((json.loads(r) for r in found[table]), key=lambda v: v.get("version_id") or v.get("change_id"))
            for side, found in (("incremental", incremental), ("refreshed", refreshed))
        }
        differences = [
            {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
            for a, b in zip(rows["incremental"], rows["refreshed"], strict=False) if a != b
        ]
        assert (len(rows["incremental"]), differences) == (len(rows["refreshed"]), []), table
    assert observe(part) == observed[-1]
