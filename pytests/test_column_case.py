"""Case folding of column names (issue 79 item 3; docs/table_options.md "Column-name case")
through the simulator. MySQL compares column names case-insensitively: the workload's records
spell the names of three tables as declared, `Title` or `UPPER` case, by transaction (generator
option `mixed_case_columns`): shop.customers (key changes), shop.order_items (a key of two
columns) and shop.audit_log (no key: rows identified by their image). The truth keeps the declared
lower-case names. Under the default `cdc_column_case: auto` the lake folds them: the history equals
the truth in Canal's and Debezium's (MySQL connector) records, and no upper-case name reaches the
change log, the source columns or the typed views. Landed in two out-of-order batches with
duplicates, in a lake of its own (its records reuse the shared workload's topics).

The same lake checks `schema_changes: ignore_new_columns` (docs/table_options.md, "Schema
changes") on shop.orders, whose `ALTER TABLE ... ADD COLUMN coupon_code` comes half-way: the
history equals the truth with that column left out of shop.orders' images (an update of it
alone then changes nothing the lake keeps), and no model or typed view has the column.
"""

from __future__ import annotations

import json
from itertools import groupby
from pathlib import Path

import pytest

from cdc_lake.generator.runner import Options, generate
from cdc_lake.testing.harness import Lake
from cdc_lake.testing.truth import SEED, Truth, actual_history, build_in_batches, none_first

FORMATS = ("canal_flat", "debezium")
BATCHES = 2
MIXED = ("shop.customers", "shop.order_items", "shop.audit_log")
IGNORED = ("shop", "orders", "coupon_code")  # the column the workload's ALTER TABLE adds
VARS = ("--vars", json.dumps({"cdc_table_options": {r"shop\.orders": {"schema_changes": "ignore_new_columns"}}}))


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("column_case")
    generate(Options(
        seed=SEED, changes=300, out=out, formats=FORMATS, batches=BATCHES, out_of_order=True, duplicates=0.05,
        mixed_case_columns=MIXED,
    ))
    return out


@pytest.fixture(scope="module")
def truth(workload: Path) -> Truth:
    return Truth(workload)


@pytest.fixture(scope="module")
def built(lake: Lake, workload: Path) -> Lake:
    return build_in_batches(lake, workload, BATCHES, *VARS)


def without_ignored_column(versions: list[tuple]) -> list[tuple]:
    """The truth's versions with IGNORED's column out of its table's images: a version whose
    image is then its predecessor's (the update changed that column alone) is one with it."""
    db, table, column = IGNORED
    out = [v for v in versions if (v[0], v[1]) != (db, table)]
    mine = sorted((v for v in versions if (v[0], v[1]) == (db, table)), key=lambda v: (v[2], v[4] or ""))
    for _, key_versions in groupby(mine, key=lambda v: v[2]):
        merged: list[list] = []
        for v in key_versions:
            image = json.loads(v[3])
            image.pop(column, None)
            row = [*v[:3], json.dumps(image, sort_keys=True, ensure_ascii=False), *v[4:]]
            last = merged[-1] if merged else None
            if last and last[3] == row[3] and not last[6] and last[5] == row[4]:
                last[5], last[6] = row[5], row[6]
            else:
                merged.append(row)
        out += [tuple(r) for r in merged]
    return sorted(out, key=none_first)


def test_the_records_spell_the_names_in_mixed_case(workload: Path):
    """The check below can fail: the records do hold upper-case spellings of the tables' names."""
    text = "".join(path.read_text() for path in workload.glob("*.jsonl"))
    for spelled in ("Order_id", "ORDER_ID", "Event", "EVENT", "Birth_date", "BIRTH_DATE"):
        assert spelled in text, spelled
    assert IGNORED[2] in text


@pytest.mark.integration
@pytest.mark.parametrize("fmt", FORMATS)
def test_history_equals_the_truth_with_names_folded(built: Lake, truth: Truth, fmt: str):
    actual, expected = actual_history(built, truth, fmt), without_ignored_column(truth.expected_history(fmt))
    missing = sorted(set(expected) - set(actual), key=none_first)[:3]
    extra = sorted(set(actual) - set(expected), key=none_first)[:3]
    assert actual == expected, f"missing {missing}; not in the truth {extra}"


@pytest.mark.integration
def test_no_upper_case_name_reaches_the_marts(built: Lake):
    upper = built.rows(
        "select count(*) as n from {schema}.cdc_changelog where exists("
        "concat(map_keys(coalesce(after, map())), map_keys(coalesce(before, map())), map_keys(primary_key),"
        " map_keys(coalesce(column_types, map())), coalesce(unavailable_columns, array()), changed_columns),"
        " c -> c != lower(c))"
    )
    assert upper[0]["n"] == 0
    assert built.rows(
        "select count(*) as n from {schema}.cdc_source_columns where column_name != lower(column_name)"
    )[0]["n"] == 0
    columns = set(built.spark.table(f"{built.schema}.shop__customers_current").columns)
    assert {"name", "birth_date"} <= columns and not {c for c in columns if c != c.lower()}


@pytest.mark.integration
def test_ignore_new_columns_leaves_the_added_column_out(built: Lake):
    """shop.orders is in mode ignore_new_columns: the column its ALTER TABLE added is in no
    change, no column list and not in its typed view; its other columns are."""
    db, table, column = IGNORED
    where = f"database_name = '{db}' and table_name = '{table}'"
    logged = built.rows(
        f"select count(*) as n, count_if(exists(concat(map_keys(coalesce(after, map())), "
        f"map_keys(coalesce(before, map())), map_keys(coalesce(column_types, map())), changed_columns), "
        f"c -> c = '{column}')) as with_column from {{schema}}.cdc_changelog where {where}"
    )[0]
    assert logged["n"] > 0 and logged["with_column"] == 0, logged
    assert built.rows(
        f"select count(*) as n from {{schema}}.cdc_source_columns where {where} and column_name = '{column}'"
    )[0]["n"] == 0
    columns = set(built.spark.table(f"{built.schema}.{db}__{table}_current").columns)
    assert column not in columns and {"order_id", "status"} <= columns, columns
