"""Foundation slice (issue 2): Canal FlatMessage raw -> change log -> current -> history.

Flink's canal-json decoder test file is the input. The change log and current state against
Flink's expected rows are test_conformance_canal's; this module checks the history, the DDL, the
reconciliation, idempotent re-landing and delete-marker retention.
"""

from __future__ import annotations

import itertools

import pytest

from cdc_lake.testing.conformance import CONFORMANCE

pytestmark = pytest.mark.integration

CANAL_DATA = CONFORMANCE / "flink" / "canal-data.txt"
INCREMENTAL_MODELS = [
    "base_canal_flat__messages",
    "cdc_changelog",
    "cdc_history",
    "cdc_schema_changes",
]


def table_state(lake) -> dict[str, list]:
    """Every model's rows, as sorted text, to compare whole tables."""
    state = {}
    models = ["cdc_changelog", "cdc_current", "cdc_history", "cdc_schema_changes", "cdc_rejected_messages"]
    for model in models:
        rows = lake.rows(f"select * from {{schema}}.{model}")
        state[model] = sorted(repr(sorted(r.items())) for r in rows)
    return state


@pytest.fixture(scope="module")
def built(lake):
    report = lake.land("canal_flat", CANAL_DATA, raw_values=True)
    assert report.records_landed == 11
    lake.build(typed_tables=False)
    return lake


def test_history_has_one_version_per_change(built):
    history = built.rows(
        "select row_key, image, valid_from, valid_to, is_current, closed_by_delete "
        "from {schema}.cdc_history order by row_key, valid_from"
    )
    # 11 inserts + 6 updates open versions; deletes close 111, 102, 103
    assert len(history) == 17
    by_key: dict[str, list] = {}
    for version in history:
        by_key.setdefault(version["row_key"], []).append(version)
    for versions in by_key.values():
        for older, newer in itertools.pairwise(versions):
            assert older["valid_to"] == newer["valid_from"]
        assert versions[-1]["is_current"] == (versions[-1]["valid_to"] is None)
    assert [v["closed_by_delete"] for v in by_key["111"]] == [False, True]
    assert by_key["106"][0]["image"]["description"] is None


def test_create_ddl_is_a_schema_change_not_a_row_change(built):
    ddl = built.rows("select ddl_type, table_name, ddl_statement from {schema}.cdc_schema_changes")
    assert [(d["ddl_type"], d["table_name"]) for d in ddl] == [("CREATE", "user02")]
    assert built.count("cdc_rejected_messages") == 0


def test_reconciliation_accounts_for_every_raw_record(built):
    rows = built.rows("select * from {schema}.cdc_reconciliation")
    assert len(rows) == 1
    rec = rows[0]
    assert (rec["raw_records"], rec["first_offset"], rec["last_offset"]) == (11, 0, 10)
    assert (rec["dml_messages"], rec["ddl_messages"], rec["control_messages"], rec["rejected_messages"]) == (
        10, 1, 0, 0,
    )
    assert rec["raw_records"] == rec["dml_messages"] + rec["ddl_messages"] + rec["control_messages"] + rec[
        "rejected_messages"
    ]
    assert (rec["unaccounted_records"], rec["offset_gaps"]) == (0, 0)
    lag = built.rows("select table_name, changes from {schema}.cdc_lag")
    assert lag == [{"table_name": "products2", "changes": 20}]


def test_relanding_and_rebuilding_changes_nothing(built):
    before_state = table_state(built)
    before_snapshots = {m: built.snapshot_id(m) for m in INCREMENTAL_MODELS}
    before_views = view_creation_times(built)
    report = built.land("canal_flat", CANAL_DATA, raw_values=True)
    assert report.records_valid == 11 and report.records_landed == 0
    built.build(typed_tables=False)
    assert table_state(built) == before_state
    # incremental: nothing new, so no table got a new Iceberg snapshot (nothing rewritten)
    assert {m: built.snapshot_id(m) for m in INCREMENTAL_MODELS} == before_snapshots
    # and no view was dropped and re-created: their SQL did not change (spark__create_view_as)
    assert len(before_views) >= 15 and view_creation_times(built) == before_views
    # each write was skipped (what each model ran instead of its write says so), and where the
    # model's SQL filters its input with landed_since_last_build, on the note the filter left in
    # the compiled SQL, not on a probe of the batch
    for model in INCREMENTAL_MODELS:
        assert "no new rows for" in last_write_sql(built, model), model
        if model != "cdc_rejected_messages":
            assert "/* cdc_lake batch: empty */" in compiled_sql(built, model), model


def last_write_sql(lake, model: str) -> str:
    """The SQL dbt ran as `model`'s write in the lake's last build (its `target/run` file)."""
    (path,) = (lake.project_dir / "target" / "run").rglob(f"{model}.sql")
    return path.read_text()


def compiled_sql(lake, model: str) -> str:
    """`model`'s SQL as the lake's last build compiled it (its `target/compiled` file; a unit test
    of the model has one of the same name below its yml's folder)."""
    (path,) = [p for p in (lake.project_dir / "target" / "compiled").rglob(f"{model}.sql") if ".yml" not in str(p)]
    return path.read_text()


def view_creation_times(lake) -> dict[str, str]:
    """Each view of the lake's schema and the time the metastore says it was created."""
    views = [row["viewName"] for row in lake.rows("show views in {schema}") if not row["isTemporary"]]
    return {
        view: next(
            r["data_type"]
            for r in lake.rows(f"describe table extended {{schema}}.{view}")
            if r["col_name"] == "Created Time"
        )
        for view in views
    }


def test_delete_markers_kept_unless_retention_is_set(built):
    assert built.count("cdc_current") == 11  # deletes of 102, 103, 111 kept as markers
    built.build("--vars", "{cdc_delete_retention_days: 30}", typed_tables=False)
    current = built.rows("select row_key, is_deleted from {schema}.cdc_current")
    assert sorted(r["row_key"] for r in current) == ["101", "104", "105", "106", "107", "108", "109", "110"]
    assert not any(r["is_deleted"] for r in current)


def test_a_record_staged_twice_is_not_accounted_for(built):
    """The reconciliation counts what the models staged, not distinct coordinates: a record the
    base model holds twice (a landing or build that wrote it again) shows as -1, not as 0."""
    table = f"{built.schema}.base_canal_flat__messages"
    before = built.snapshot_id("base_canal_flat__messages")
    try:
        built.rows(f"insert into {table} select * from {table} where kafka_offset = 0")
        rows = built.rows("select raw_records, unaccounted_records from {schema}.cdc_reconciliation")
        assert rows == [{"raw_records": 11, "unaccounted_records": -1}]
    finally:
        built.rows(f"call spark_catalog.system.rollback_to_snapshot('{table}', {before})")
    assert built.rows("select unaccounted_records from {schema}.cdc_reconciliation") == [{"unaccounted_records": 0}]
