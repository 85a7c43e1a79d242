"""A complete snapshot re-baselines a table (issue 78, item 4), through the simulator.

`cdc-lake generate --snapshot-after-gap` (src/cdc_lake/generator/snapshots.py): a Debezium stream
loses records for a while (rows are deleted, inserted and updated meanwhile), the connector stops
inside a snapshot, snapshots every table at a later position and streams on; later a blocking
snapshot stops inside its second table. Landed in four batches with a build after each, beside the
other batched scenarios (conftest `batched_lake`), with records moved to later batches: the end
of the whole snapshot lands a batch after its first rows, some rows after their snapshot's end.

The lake must hold what the simulator's LakeView replays in source order (truth/lake_*.jsonl):
a complete snapshot closes, at its position, the live keys it did not read (op `a`), keeps the
open version of a key it read unchanged, opens one for a key it read changed; an incomplete one
closes nothing. Its live rows then equal the source's, and a full refresh gives the same tables.
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from cdc_lake.testing.harness import Lake
from cdc_lake.testing.truth import Truth, check_against_truth, generate, land_all, read_jsonl

# batches with a build after each, in the integration target's batched lake (docs/testing.md)
pytestmark = pytest.mark.integration

BATCHES = 4
_workloads = tempfile.TemporaryDirectory(prefix="cdc_lake_snapshot_gap_")


@functools.cache
def workload() -> Path:
    return generate(
        Path(_workloads.name), "--formats", "debezium", "--snapshot-after-gap", "--batches", str(BATCHES),
        "--out-of-order",
    )


@functools.cache
def summary() -> dict:
    return json.loads((workload() / "truth" / "summary.json").read_text())["snapshots"]


def land_batch(lake: Lake, batch: int) -> None:
    land_all(lake, workload(), batch)


def observe(part: Lake) -> dict:
    """After each build: what cdc_snapshots says of each snapshot of each table, and how many
    versions each closed because it did not read them."""
    return {
        "snapshots": {
            (r["table"], r["snapshot_position"]): (r["is_complete"], r["rebaselines"], r["outcome"])
            for r in part.rows(
                "select concat(database_name, '.', table_name) as table, snapshot_position, is_complete, "
                "rebaselines, outcome from {schema}.cdc_snapshots"
            )
        },
        "closed": {
            (r["table"], r["snapshot_position"]): r["n"]
            for r in part.rows(
                "select concat(s.database_name, '.', s.table_name) as table, s.snapshot_position, count(*) as n "
                "from {schema}.cdc_history as h join {schema}.cdc_snapshots as s "
                "on h.closing_change_id = s.snapshot_id where h.closing_op = 'a' group by 1, 2"
            )
        },
    }


def position(run: dict) -> str:
    return f"{run['file']}:{run['pos']}"


def test_the_lake_holds_what_a_replay_in_source_order_gives(batches):
    part, _ = batches
    assert summary()["closed_absent"] > 0, "the scenario should delete rows during the gap"
    check_against_truth(part, Truth(workload(), lake_view=True))


def test_its_live_rows_equal_the_source_where_a_complete_snapshot_read_the_table(batches):
    """What verify would find: every table a complete, placed snapshot read is equal to the source
    (a column that an ALTER TABLE lost in the gap added is NULL on both sides)."""
    part, _ = batches

    def live(rows: list[dict]) -> Counter:
        return Counter(
            (r["table"], json.dumps({k: v for k, v in (r["image"] or {}).items() if v is not None}, sort_keys=True))
            for r in rows
        )

    truth = Truth(workload())
    tables = {f"{t['database']}.{t['table']}" for t in truth.tables if "debezium" in t["formats"]}
    tables -= set(summary()["not_rebaselined"])
    source = live([
        {"table": table, "image": json.loads(truth.normal(r["database"], r["table"], r["image"]))}
        for r in read_jsonl(workload() / "truth" / "current.jsonl")
        for table in [f"{r['database']}.{r['table']}"] if table in tables
    ])
    lake = live([
        {"table": r["table"], "image": json.loads(truth.normal(*r["table"].split("."), r["image"]))}
        for r in part.rows(
            "select concat(database_name, '.', table_name) as table, image, row_count from {schema}.cdc_current "
            "where not is_deleted"
        )
        for _ in range(r["row_count"])
        if r["table"] in tables
    ])
    assert lake == source


def test_each_snapshot_says_whether_it_re_baselined_its_tables(batches):
    """cdc_snapshots, after the last build: the restarted connector's snapshot completed its first
    table only; the re-snapshot every table (the embedded engine's, with no binlog position, is
    complete but not placed); the late blocking snapshot none."""
    _, observed = batches
    expected = {}
    for run in summary()["runs"]:
        for table in run["tables"]:
            complete = table in run["complete_tables"]
            expected[(table, position(run) if run["placed"] else ":0")] = (complete, complete and run["placed"])
    found = {key: status[:2] for key, status in observed[-1]["snapshots"].items()}
    assert found == expected
    outcomes = {status[2].split(":")[0] for status in observed[-1]["snapshots"].values()}
    assert outcomes == {"complete", "complete, not placed", "incomplete"}


def test_a_table_whose_read_has_not_ended_closes_nothing_yet(batches):
    """After batch 3 the re-snapshot's first half has landed: a table whose read ended there
    (Debezium 2's last_in_data_collection) is complete, a table whose end is in batch 4 is
    incomplete and has closed nothing; after batch 4 every table of it is complete."""
    _, observed = batches
    [resnapshot] = [run for run in summary()["runs"] if run["name"] == "resnapshot" and run["placed"]]
    at = position(resnapshot)
    waiting = [key for key, (complete, _, _) in observed[2]["snapshots"].items() if key[1] == at and not complete]
    assert waiting, "the re-snapshot should end a batch after its first rows"
    assert all(not observed[2]["snapshots"][key][1] and key not in observed[2]["closed"] for key in waiting)
    assert all(observed[3]["snapshots"][key][:2] == (True, True) for key in waiting)
    assert sum(observed[3]["closed"].values()) > sum(observed[2]["closed"].values())


def test_a_key_absent_from_a_complete_snapshot_is_closed_by_it(batches):
    """cdc_history says why: closing_op `a`, closing_change_id the snapshot's id in cdc_snapshots,
    valid_to its time; cdc_current shows the key deleted with op `a`. No version is closed by the
    late blocking snapshot, which did not end."""
    part, _ = batches
    rows = part.rows(
        "select h.is_keyless, h.closed_by_delete, h.valid_to = s.snapshot_ts as at_snapshot, s.rebaselines, "
        "s.snapshot_position from {schema}.cdc_history as h "
        "left join {schema}.cdc_snapshots as s on h.closing_change_id = s.snapshot_id "
        "where h.closing_op = 'a'"
    )
    assert len([r for r in rows if not r["is_keyless"]]) == summary()["closed_absent"]
    assert all(r["closed_by_delete"] and r["at_snapshot"] and r["rebaselines"] for r in rows)
    [partial] = [run for run in summary()["runs"] if run["name"] == "partial"]
    assert position(partial) not in {r["snapshot_position"] for r in rows}
    current = part.rows(
        "select c.is_deleted, s.rebaselines from {schema}.cdc_current as c "
        "left join {schema}.cdc_snapshots as s on c.change_id = s.snapshot_id where c.op = 'a'"
    )
    assert current and all(r["is_deleted"] and r["rebaselines"] for r in current)


def test_the_build_warns_of_the_tables_whose_latest_snapshot_did_not_end(batches, batched_lake):
    """Data test latest_snapshot_complete (a warning): the late blocking snapshot's two tables; not
    the tables of the snapshot the connector stopped inside, which a complete one followed."""
    [partial] = [run for run in summary()["runs"] if run["name"] == "partial"]
    [result] = [r for r in batched_lake.last_build.result.results if r.node.name.startswith("latest_snapshot_complete")]
    assert (str(result.status), result.failures) == ("warn", len(partial["tables"]))


def test_the_lost_records_are_offset_gaps(batches):
    """Kafka's retention took them: offsets missing inside what was landed (those a partition lost
    at its end, with nothing landed after them, are not gaps)."""
    part, _ = batches
    gaps = part.rows("select sum(offset_gaps) as n from {schema}.cdc_reconciliation")[0]["n"]
    assert 0 < gaps <= summary()["lost_records"]


@pytest.mark.after_full_refresh
def test_full_refresh_gives_the_same_tables(batches, batched_lake):
    part, _ = batches
    incremental, refreshed = batched_lake.full_refresh(__name__)
    assert refreshed == incremental
    check_against_truth(part, Truth(workload(), lake_view=True))
