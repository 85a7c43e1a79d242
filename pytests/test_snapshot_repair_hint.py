"""What `cdc-lake verify` says of a `different` table: whether a complete snapshot of it would
repair the lake (issue 78, item 4; docs/snapshots.md). No lake, no source: the hint and its line
in the report."""

from __future__ import annotations

from types import SimpleNamespace

from cdc_lake.formats import formats_carrying
from cdc_lake.verify.compare import DIFFERENT, EQUAL, TableResult, snapshot_repair
from cdc_lake.verify.report import Verification

MYSQL = SimpleNamespace(snapshots_rebaseline=True)
POSTGRES = SimpleNamespace(snapshots_rebaseline=False)


def test_the_formats_that_mark_a_snapshots_end():
    assert formats_carrying("snapshot_markers") == ("debezium",)
    assert "debezium" in formats_carrying("schema_changes")


def test_a_debezium_table_of_mysql_is_repaired_by_a_complete_snapshot():
    assert snapshot_repair(MYSQL, ["debezium"]).startswith("a complete snapshot of the table repairs it")


def test_a_format_without_snapshot_markers_is_not():
    hint = snapshot_repair(MYSQL, ["canal_flat"])
    assert "close none" in hint and "canal_flat" in hint


def test_postgresql_snapshots_are_not_placed_yet():
    assert snapshot_repair(POSTGRES, ["debezium"]).startswith("no snapshot repairs it yet")


def test_the_report_prints_the_hint_under_a_different_table_only():
    different = TableResult("s", "shop", "orders", False, source_rows=3, lake_rows=4, differing_keys=1,
                            repair=snapshot_repair(MYSQL, ["debezium"]))
    equal = TableResult("s", "shop", "items", False, source_rows=2, lake_rows=2)
    assert different.status == DIFFERENT and equal.status == EQUAL
    report = Verification("v", "mysql://x/shop", "cdc_lake.cdc_current", "s", [different, equal], 1.0)
    lines = report.as_text().splitlines()
    assert sum("complete snapshot" in line for line in lines) == 1
    assert different.as_json()["repair"] == different.repair and equal.as_json()["repair"] is None
