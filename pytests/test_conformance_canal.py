"""Canal FlatMessage against Apache Flink's canal-json test files (conformance/flink/canal-*.txt).

The change log of each file, replayed as Flink row kinds (insert/snapshot read -> +I; update ->
-U before, +U after; delete -> -D), must equal the rows the Flink test expects, in order; the
current state must equal the final state those rows imply. The three files land in the shared
lake (conftest `shared_lake`), each on its own topic (so its own source_system); the table filter
var reproduces Flink's `database.include = "^my.*"`, `table.include = "^prod.*"` for the
filter-table file.
"""

from __future__ import annotations

import pytest

from cdc_lake.testing.conformance import CONFORMANCE, expected_rows, flink_row, replay

FLINK = CONFORMANCE / "flink"
COLUMNS = ["id", "name", "description", "weight"]
FILES = ["canal-data", "canal-data-filter-table", "canal-data-with-init"]
BUILD_VARS = {
    # Flink's database regex "^my.*" and table regex "^prod.*" on the filter-table file, whose one
    # database is `mydb`: every table of it but the prod* ones is left out. An exclusion, so the
    # shared lake's other modules keep their tables (no other module lands a `mydb`).
    "cdc_exclude_tables": [r"mydb\.(?!prod).*"],
}


def final_state(rows: list[str]) -> dict[str, tuple[bool, str]]:
    """row id -> (is_deleted, last row printed without its kind) implied by ordered Flink rows."""
    state: dict[str, tuple[bool, str]] = {}
    for row in rows:
        kind, body = row[:2], row[2:]
        if kind in ("+I", "+U", "-D"):
            state[body[1:].split(",", 1)[0]] = (kind == "-D", body)
    return state


def land_records(lake):
    """This module's records; one build of the shared lake (conftest.shared_lake) makes `built`."""
    for name in FILES:
        lake.land("canal_flat", FLINK / f"{name}.txt", raw_values=True, topic=name)


def changes_of(lake, topic: str) -> list[dict]:
    return lake.rows(
        "select op, before, after, table_name, database_name from {schema}.cdc_changelog "
        f"where kafka_topic = '{topic}' order by change_order"
    )


@pytest.mark.parametrize("name", FILES)
def test_changelog_replays_flink_rows_exactly(built, name):
    expected = expected_rows(FLINK / f"{name}.expected.txt")
    assert len(expected) == 26  # "## Expected rows (26)" in each file
    assert replay(changes_of(built, name), COLUMNS) == expected


@pytest.mark.parametrize("name", FILES)
def test_current_state_is_the_final_state_of_the_expected_rows(built, name):
    expected = final_state(expected_rows(FLINK / f"{name}.expected.txt"))
    rows = built.rows(
        "select row_key, is_deleted, image from {schema}.cdc_current "
        f"where source_system = '{name}'"
    )
    actual = {r["row_key"]: (r["is_deleted"], flink_row("", r["image"], COLUMNS)) for r in rows}
    assert actual == expected


def test_filter_table_accounts_for_every_record(built):
    kinds = built.rows(
        "select record_kind, database_name, table_name, count(*) as n "
        "from {schema}.int_raw_records_unioned where kafka_topic = 'canal-data-filter-table' "
        "group by record_kind, database_name, table_name"
    )
    got = {(r["record_kind"], r["table_name"]): r["n"] for r in kinds}
    # 16 records: 10 DML of mydb.product kept; orders (CREATE, INSERT, UPDATE, DELETE), the
    # projects CREATE and the project INSERT filtered out, not dropped silently.
    assert got == {
        ("dml", "product"): 10,
        ("filtered", "orders"): 4,
        ("filtered", "projects"): 1,
        ("filtered", "project"): 1,
    }
    lines = [x for x in (FLINK / "canal-data-filter-table.txt").read_text().splitlines() if x.strip()]
    assert sum(got.values()) == len(lines)
    assert built.rows(
        "select count(*) as n from {schema}.cdc_changelog where kafka_topic = 'canal-data-filter-table' "
        "and table_name != 'product'"
    ) == [{"n": 0}]
    assert built.rows(
        "select count(*) as n from {schema}.cdc_schema_changes where kafka_topic = 'canal-data-filter-table'"
    ) == [{"n": 0}]


def test_ddl_and_init_rows(built):
    ddl = built.rows(
        "select ddl_type, table_name from {schema}.cdc_schema_changes where kafka_topic = 'canal-data'"
    )
    assert ddl == [{"ddl_type": "CREATE", "table_name": "user02"}]
    # INIT (full-load rows of Alibaba Cloud DTS) are snapshot reads; the extra field "other" is kept
    # in the image (the Flink projection ignores it).
    init = built.rows(
        "select op, after from {schema}.cdc_changelog where kafka_topic = 'canal-data-with-init' "
        "and row_in_message = 0 and op = 'r'"
    )
    assert len(init) == 1 and init[0]["after"]["other"] == "val1"
    assert built.rows(
        "select count(*) as n from {schema}.cdc_changelog "
        "where kafka_topic = 'canal-data-with-init' and op = 'r'"
    ) == [{"n": 9}]
