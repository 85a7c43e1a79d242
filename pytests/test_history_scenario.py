"""Current state and SCD2 history across landing batches (issue 4).

A hand-made Canal FlatMessage scenario is landed in batches with a build after each: inserts,
updates, deletes, a re-insert, three updates of one row in one batch, two changes in one
commit-time tick, a no-op update, a duplicate delivery and a change that lands a batch late.
After every batch both tables must equal an independent Python replay of the changes delivered so
far; at the end they must equal `dbt build --full-refresh`, and a shuffled landing order must give
the same tables. Finally a corrupted history must make the attached dbt tests fail.
"""

from __future__ import annotations

import datetime as dt
import json
import random

import pytest

from cdc_lake.testing.harness import Lake, land_messages

# batches with a build after each, in the integration target's batched lake (docs/testing.md)
pytestmark = pytest.mark.integration

T0 = 1_767_225_600_000  # 2026-01-01 00:00:00 UTC, in ms
TYPES = {"id": "int(11)", "v": "varchar(32)"}


def message(msg_id: int, es_s: float, op: str, rows: list[dict], old: list[dict] | None = None) -> dict:
    return {
        "data": rows, "database": "shop", "es": T0 + int(es_s * 1000), "id": msg_id, "isDdl": False,
        "mysqlType": TYPES, "old": old, "pkNames": ["id"], "sql": "", "sqlType": {"id": 4, "v": 12},
        "table": "items", "ts": T0 + int(es_s * 1000) + 5, "type": op,
    }


def row(key: int, v: str | None) -> dict:
    return {"id": str(key), "v": v}


# (message, batch) in source order; message ids and es follow the binlog.
SCENARIO = [
    (message(1, 1, "INSERT", [row(1, "a"), row(2, "b"), row(3, "c")]), 1),
    (message(2, 2, "UPDATE", [row(1, "a2")], [{"v": "a"}]), 2),
    (message(3, 3, "DELETE", [row(2, "b")]), 2),
    (message(4, 10, "UPDATE", [row(3, "c1")], [{"v": "c"}]), 2),
    # lands late (batch 4), between c1 and c2 of key 3
    (message(5, 10.5, "UPDATE", [row(3, "cL")], [{"v": "c1"}]), 4),
    (message(6, 11, "UPDATE", [row(3, "c2")], [{"v": "cL"}]), 2),
    (message(7, 12, "UPDATE", [row(3, "c3")], [{"v": "c2"}]), 2),
    (message(8, 13, "UPDATE", [row(1, "a2")], [{}]), 2),  # changes nothing
    (message(9, 20, "INSERT", [row(2, "b2")]), 3),  # re-insert after delete
    (message(10, 21, "INSERT", [row(4, None)]), 3),
    (message(11, 21, "UPDATE", [row(4, "d")], [{"v": None}]), 3),  # same second as its insert
    (message(12, 22, "DELETE", [row(1, "a2")]), 4),
]
DUPLICATE = (3, 3)  # message index 3 (id 4) is delivered again in batch 3


def records_for(batch: int) -> list[dict]:
    chosen = [msg for msg, b in SCENARIO if b == batch]
    if batch == DUPLICATE[1]:
        chosen.append(SCENARIO[DUPLICATE[0]][0])
    return chosen


def ts(es_ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(es_ms / 1000, dt.timezone.utc).replace(tzinfo=None)


def oracle(messages: list[dict]) -> tuple[dict, list[tuple]]:
    """Replay delivered changes in source order: the expected current rows and history versions."""
    changes = []
    for msg in {m["id"]: m for m in messages}.values():
        for i, data in enumerate(msg["data"]):
            changes.append(((msg["es"], msg["id"], i), msg["type"], data["id"], dict(data)))
    changes.sort()
    current: dict[str, tuple] = {}
    history: list[tuple] = []
    open_version: dict[str, list] = {}
    for (es, _, _), op, key, image in changes:
        gone = key not in current or current[key][1]
        if op == "DELETE":
            current[key] = (image, True)
            if key in open_version:
                open_version.pop(key)[3:5] = [ts(es), True]
            continue
        if not gone and current[key][0] == image:
            continue  # no-op update: no new version
        current[key] = (image, False)
        if key in open_version:
            open_version[key][3] = ts(es)
        version = [key, json.dumps(image, sort_keys=True), ts(es), None, False, "c" if op == "INSERT" else "u"]
        history.append(version)
        open_version[key] = version
    expected_current = {k: (json.dumps(img, sort_keys=True), deleted) for k, (img, deleted) in current.items()}
    expected_history = sorted(tuple(v) for v in history)
    return expected_current, expected_history


def actual(lake: Lake, database: str = "shop") -> tuple[dict, list[tuple]]:
    """The current rows and history versions of `database`.items, in the oracle's shape."""
    mine = f"where database_name = '{database}' and table_name = 'items'"
    current = {
        r["row_key"]: (json.dumps(r["image"], sort_keys=True), r["is_deleted"])
        for r in lake.rows(f"select row_key, image, is_deleted from {{schema}}.cdc_current {mine}")
    }
    history = sorted(
        (r["row_key"], json.dumps(r["image"], sort_keys=True), r["valid_from"], r["valid_to"],
         r["closed_by_delete"], r["op"])
        for r in lake.rows(
            f"select row_key, image, valid_from, valid_to, closed_by_delete, op from {{schema}}.cdc_history {mine}"
        )
    )
    return current, history


# The scenario in the batched lake (conftest `batched_lake`): its batches land beside the other
# batched scenarios' (test_table_resets, test_differential's faults), with one build after each.
BATCHES = 4

# The same messages again, all of them shuffled, as a table of their own (database shop_shuffled,
# own topic), landed in two halves by the first two batches' builds.
SHUFFLED = "shop_shuffled"


def shuffled_messages() -> list[dict]:
    messages = [{**m, "database": SHUFFLED} for b in range(1, BATCHES + 1) for m in records_for(b)]
    random.Random(42).shuffle(messages)
    return messages


def land_batch(lake: Lake, batch: int) -> None:
    land_messages(lake, records_for(batch), offset=sum(len(records_for(b)) for b in range(1, batch)))
    shuffled = shuffled_messages()
    half = len(shuffled) // 2
    if batch == 1:
        land_messages(lake, shuffled[:half], 0, topic=SHUFFLED)
    elif batch == 2:
        land_messages(lake, shuffled[half:], half, topic=SHUFFLED)


def observe(part: Lake) -> tuple[dict, list[tuple]]:
    return actual(part)


def delivered_through(batch: int) -> list[dict]:
    return [msg for b in range(1, batch + 1) for msg in records_for(b)]


def test_every_batch_equals_the_replay(batches):
    _, observed = batches
    assert len(observed) == BATCHES
    for batch, found in enumerate(observed, start=1):
        assert found == oracle(delivered_through(batch)), f"after batch {batch}"


def test_expected_shape_of_the_final_history(batches):
    _, observed = batches
    _, history = observed[-1]
    by_key: dict[str, list] = {}
    for version in sorted(history, key=lambda v: (v[0], v[2], v[3] is None, v[3])):
        by_key.setdefault(version[0], []).append(version)
    # key 3: c, c1, the late cL, c2, c3 — the late change re-sliced c1's interval
    assert [json.loads(v[1])["v"] for v in by_key["3"]] == ["c", "c1", "cL", "c2", "c3"]
    assert by_key["3"][1][3] == ts(T0 + 10_500)
    # key 1: the no-op update opened nothing; the final delete closed a2
    assert [(json.loads(v[1])["v"], v[4]) for v in by_key["1"]] == [("a", False), ("a2", True)]
    # key 2: deleted then re-inserted: two versions with a gap between them
    assert [(json.loads(v[1])["v"], v[4]) for v in by_key["2"]] == [("b", True), ("b2", False)]
    # key 4: insert and update in the same second: a zero-length first version
    assert by_key["4"][0][2] == by_key["4"][0][3]


def test_history_as_of_a_point_in_time(batches):
    """The analyst's point-in-time read, macro history_as_of (README "Point in time"), compiled
    by dbt as a user's query would be: the rows live at 00:00:10.7, each with the image it had."""
    part, _ = batches
    inline = (
        "select row_key, image['v'] as v from "
        "({{ history_as_of(\"timestamp'2026-01-01 00:00:10.7'\", history='{schema}.cdc_history') }}) as state "
        "where database_name = 'shop'"
    )
    [compiled] = part.dbt("compile", "--inline", inline).result.results
    rows = part.rows(compiled.node.compiled_code)
    assert sorted((r["row_key"], r["v"]) for r in rows) == [("1", "a2"), ("3", "cL")]


def live_delete_files(lake: Lake, table: str) -> int:
    return lake.count(f"{table}.delete_files")


def test_the_latest_versions_are_compacted_alone(batches, batched_lake):
    """`cdc_compact_latest` rewrites the partition cdc_current reads (`is_latest`) once it holds
    more than `max_files` files, and the table's manifests once more than `max_manifests` list
    files of it; leaves the older versions' files as they are, and changes no row."""
    part, _ = batches
    before = {table: part.every_column(table) for table in ("cdc_current", "cdc_history")}
    lake = batched_lake.lake
    latest_data_files = "cdc_history.data_files where partition.is_latest"
    latest_manifests = "cdc_history.manifests where exists(partition_summaries, p -> p.upper_bound = 'true')"
    older_files = sorted(row["file_path"] for row in lake.rows(
        "select file_path from {schema}.cdc_history.files where not partition.is_latest"))
    assert lake.count(latest_data_files) > 1
    assert lake.count(latest_manifests) > 1
    lake.dbt("run-operation", "cdc_compact_latest", "--args", "{max_files: 100000, max_manifests: 100000}")
    assert lake.count(latest_data_files) > 1  # under the limits: nothing rewritten
    manifests = lake.count(latest_manifests)
    assert manifests > 1
    lake.dbt("run-operation", "cdc_compact_latest", "--args", "{max_files: 1, max_manifests: 1}")
    assert lake.count(latest_data_files) == 1
    assert lake.count(latest_manifests) == 1, manifests
    assert sorted(row["file_path"] for row in lake.rows(
        "select file_path from {schema}.cdc_history.files where not partition.is_latest")) == older_files
    for table, rows in before.items():
        assert part.every_column(table) == rows, table


def test_merges_write_delete_files_and_compaction_folds_them_in(batches, batched_lake):
    """cdc_history is merge-on-read: the incremental MERGEs changed rows by writing delete files,
    not by rewriting data files; `cdc_compact` folds them in and changes no row, neither of the
    history nor of cdc_current (a view of its latest versions)."""
    part, _ = batches
    before = {table: part.every_column(table) for table in ("cdc_current", "cdc_history")}
    lake = batched_lake.lake  # the whole tables: compaction and their metadata tables
    assert live_delete_files(lake, "cdc_history") > 0
    # the raw tables too: each batch landed its own files (a following consumer's micro-batches)
    raw_tables = [row["tableName"] for row in lake.rows("show tables in {raw_schema}")
                  if row["tableName"].startswith("raw_")]
    raw_files = {table: raw_count(lake, f"{table}.files") for table in raw_tables}
    raw_rows = {table: raw_count(lake, table) for table in raw_tables}
    assert max(raw_files.values()) > 1
    lake.dbt("run-operation", "cdc_compact")
    assert live_delete_files(lake, "cdc_history") == 0
    assert {table: raw_count(lake, f"{table}.files") for table in raw_tables} == {
        table: min(n, 1) for table, n in raw_files.items()}
    assert {table: raw_count(lake, table) for table in raw_tables} == raw_rows
    for table, rows in before.items():
        assert part.every_column(table) == rows, table


def raw_count(lake: Lake, relation: str) -> int:
    """count(*) of a relation in the lake's raw schema (a table, or one of its metadata tables)."""
    return int(lake.rows(f"select count(*) as n from {{raw_schema}}.{relation}")[0]["n"])


def test_snapshot_expiry_keeps_the_rows(batches, batched_lake):
    """`cdc_expire_snapshots` with no age limit leaves each table (models, raw tables)
    one snapshot, its files and no orphan, and changes no row; the builds after it (the full
    refresh below) go on as before."""
    part, _ = batches
    before = {table: part.every_column(table) for table in ("cdc_current", "cdc_history")}
    lake = batched_lake.lake
    tables = ("cdc_history", "cdc_changelog", "base_canal_flat__messages")
    assert {table: lake.count(f"{table}.snapshots") > 1 for table in tables} == dict.fromkeys(tables, True)
    raw = f"{lake.raw_schema}.raw_canal_flat"
    assert lake.spark.sql(f"select count(*) from {raw}.snapshots").first()[0] > 1
    lake.dbt("run-operation", "cdc_expire_snapshots", "--args",
             "{older_than_hours: 0, retain_last: 1}")
    assert {table: lake.count(f"{table}.snapshots") for table in tables} == dict.fromkeys(tables, 1)
    assert lake.spark.sql(f"select count(*) from {raw}.snapshots").first()[0] == 1
    for table, rows in before.items():
        assert part.every_column(table) == rows, table


@pytest.mark.after_full_refresh
def test_full_refresh_gives_the_same_tables(batches, batched_lake):
    part, observed = batches
    # beyond the oracle's columns: version ids, closing changes, change orders, types, ...
    incremental, refreshed = batched_lake.full_refresh(__name__)
    assert refreshed == incremental
    assert actual(part) == observed[-1]


def test_shuffled_landing_order_gives_the_same_tables(batches):
    # every message (the duplicate too) landed in a shuffled order, in two builds, as shop_shuffled
    part, observed = batches
    assert actual(part, SHUFFLED) == observed[-1]


# the data tests of the two tables (their unit tests read fixed inputs, not the lake)
DATA_TESTS = ("test", "--select", "cdc_history cdc_current", "--exclude", "test_type:unit")
EXPECTED_FAILURES = {"contiguous_versions", "current_matches_replay"}


@pytest.mark.damages_batched_lake
def test_dbt_tests_catch_a_corrupted_history(batches, batched_lake):
    """Runs last in the batched lake's life (the mark), on the tables of the full refresh if a
    test asked for one."""
    lake = batched_lake.lake
    # the same tests passed on the last batch's build (which ran every data test of the lake)
    tests = {r.node.name.split("_cdc_")[0]: str(r.status) for r in batched_lake.last_build.result.results
             if r.node.resource_type == "test"}
    assert {tests[name] for name in EXPECTED_FAILURES} == {"pass"}
    # open a gap in key 3's history and make key 1 (deleted) current again, in this module's table
    mine = "database_name = 'shop' and table_name = 'items'"
    lake.spark.sql(
        f"update {lake.schema}.cdc_history set valid_to = valid_to - interval 1 second "
        f"where {mine} and row_key = '3' and image['v'] = 'c1'"
    )
    lake.spark.sql(
        f"update {lake.schema}.cdc_history set is_current = true, valid_to = null, closed_by_delete = false "
        f"where {mine} and row_key = '1' and image['v'] = 'a2'"
    )
    result = lake.dbt(*DATA_TESTS, expect_success=False)
    failed = {r.node.name.split("_cdc_")[0] for r in result.result.results if str(r.status) == "fail"}
    assert EXPECTED_FAILURES <= failed
