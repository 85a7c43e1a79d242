"""Case folding of column names (issue 79 item 3; docs/table_options.md "Column-name case")
through the simulator. MySQL compares column names case-insensitively: the workload's records
spell the names of three tables as declared, `Title` or `UPPER` case, by transaction (generator
option `mixed_case_columns`): shop.customers (key changes), shop.order_items (a key of two
columns) and shop.audit_log (no key: rows identified by their image). The truth keeps the declared
lower-case names. Under the default `cdc_column_case: auto` the lake folds them: the history equals
the truth in Canal's and Debezium's (MySQL connector) records, and no upper-case name reaches the
change log, the source columns or the typed views. Landed in two out-of-order batches with
duplicates, in a lake of its own (its records reuse the shared workload's topics).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc_lake.generator.runner import Options, generate
from cdc_lake.testing.harness import Lake
from cdc_lake.testing.truth import SEED, Truth, actual_history, build_in_batches, none_first

FORMATS = ("canal_flat", "debezium")
BATCHES = 2
MIXED = ("shop.customers", "shop.order_items", "shop.audit_log")


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
    return build_in_batches(lake, workload, BATCHES)


def test_the_records_spell_the_names_in_mixed_case(workload: Path):
    """The check below can fail: the records do hold upper-case spellings of the tables' names."""
    text = "".join(path.read_text() for path in workload.glob("*.jsonl"))
    for spelled in ("Order_id", "ORDER_ID", "Event", "EVENT", "Birth_date", "BIRTH_DATE"):
        assert spelled in text, spelled


@pytest.mark.integration
@pytest.mark.parametrize("fmt", FORMATS)
def test_history_equals_the_truth_with_names_folded(built: Lake, truth: Truth, fmt: str):
    actual, expected = actual_history(built, truth, fmt), truth.expected_history(fmt)
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
