"""Per-table options of cdc_history (issue 79; docs/table_options.md): `track_history_except`
through the simulator, and the checks dbt makes of var `cdc_table_options` when it parses.

The simulator plays a workload whose `shop.customers` updates touch `updated_at` alone in about
half its updates (generator option `track_history_except`) and computes the history the lake must
keep under that option: such a touch updates the open version in place. The workload lands in
three batches (out of order, with duplicates) with an incremental build after each, in a lake of
its own (the option changes cdc_history for shop.customers, which other modules' lakes hold too);
then a full refresh must give the same tables. The parse checks need no lake.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdc_lake.generator.runner import Options, generate
from cdc_lake.testing.harness import Lake, table_options_parse_error
from cdc_lake.testing.truth import SEED, Truth, actual_history, build_in_batches, none_first

FORMAT = "debezium"
BATCHES = 3
UNTRACKED = {"shop.customers": ("updated_at",)}
TABLE_OPTIONS = {r"shop\.customers": {"track_history_except": ["updated_at"]}}
VARS = ("--vars", json.dumps({"cdc_table_options": TABLE_OPTIONS}))


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("table_options")
    generate(Options(
        seed=SEED, changes=300, out=out, formats=(FORMAT,), batches=BATCHES, out_of_order=True, duplicates=0.05,
        track_history_except=UNTRACKED,
    ))
    return out


@pytest.fixture(scope="module")
def truth(workload: Path) -> Truth:
    return Truth(workload)


@pytest.fixture(scope="module")
def built(lake: Lake, workload: Path) -> Lake:
    """The three batches, each landed and built incrementally; the data tests run on the last build."""
    return build_in_batches(lake, workload, BATCHES, *VARS)


def touches(truth: Truth) -> int:
    """The truth's updates of shop.customers that change updated_at and nothing else."""
    return sum(
        1 for c in truth.changes
        if (c["database"], c["table"]) == ("shop", "customers") and c["op"] == "u" and c["before"] != c["after"]
        and {k: v for k, v in c["before"].items() if k != "updated_at"}
        == {k: v for k, v in c["after"].items() if k != "updated_at"}
    )


@pytest.mark.integration
def test_history_equals_the_truth_under_the_option(built: Lake, truth: Truth):
    """Every version of every table, shop.customers with its touches folded into the versions
    they touched, as the simulator replays the changes in source order under the same rule."""
    actual, expected = actual_history(built, truth, FORMAT), truth.expected_history(FORMAT)
    missing = sorted(set(expected) - set(actual), key=none_first)[:3]
    extra = sorted(set(actual) - set(expected), key=none_first)[:3]
    assert actual == expected, f"missing {missing}; not in the truth {extra}"


@pytest.mark.integration
def test_customers_versions_count_changes_of_tracked_columns(built: Lake, truth: Truth):
    """As many versions of shop.customers, in cdc_history and in its typed view, as the truth
    has: the touches open none (and the workload has enough of them to tell)."""
    versions = sum(1 for v in truth.history if (v["database"], v["table"]) == ("shop", "customers"))
    changes = sum(1 for c in truth.changes if (c["database"], c["table"]) == ("shop", "customers"))
    assert touches(truth) >= 10
    assert versions <= changes - touches(truth)
    history = built.rows(
        "select count(*) as n from {schema}.cdc_history where database_name = 'shop' and table_name = 'customers'"
    )
    assert history[0]["n"] == versions
    assert built.count("shop__customers_history") == versions
    # the change log keeps every change, touches included
    logged = built.rows(
        "select count(*) as n from {schema}.cdc_changelog where database_name = 'shop' and table_name = 'customers'"
    )
    assert logged[0]["n"] == changes


@pytest.mark.integration
def test_full_refresh_gives_the_same_tables(built: Lake):
    """The incremental builds (appended keys, late keys of the out-of-order landing) wrote what a
    full refresh writes, column by column."""
    before = {table: built.every_column(table) for table in ("cdc_current", "cdc_history")}
    built.build("--full-refresh", *VARS, data_tests=False)
    for table, rows in before.items():
        assert built.every_column(table) == rows, table




def test_options_are_checked_when_the_project_parses():
    """A wrong setting fails the parse with an error naming the table pattern and the option."""
    assert table_options_parse_error(TABLE_OPTIONS) == ""
    cases = {
        "unknown option 'track_histroy'": {r"shop\.customers": {"track_histroy": ["updated_at"]}},
        "set track_history or track_history_except, not both": {
            r"shop\.orders": {"track_history": ["status"], "track_history_except": ["updated_at"]},
        },
        "option 'track_history_except' must be a list of column names": {
            r"shop\.customers": {"track_history_except": "updated_at"},
        },
        "option 'valid_to_current' must be a timestamp text": {r"shop\..*": {"valid_to_current": "tomorrow"}},
    }
    for expected, options in cases.items():
        message = table_options_parse_error(options)
        assert expected in message, message
        assert f"cdc_table_options['{next(iter(options))}']" in message, message


@pytest.mark.integration
def test_valid_to_current_passes_the_history_data_tests(built: Lake):
    """Last (it rewrites the module's history): with valid_to_current for shop.customers, a full
    refresh of cdc_history gives its open versions that valid_to, the other tables' open versions
    none, and the history's data tests (one open version per key, contiguous versions) pass on
    cdc_history and on the typed history view."""
    options = {r"shop\.customers": {"track_history_except": ["updated_at"], "valid_to_current": "9999-12-31"}}
    vars_ = ("--vars", json.dumps({"cdc_table_options": options}))
    built.build("--select", "cdc_history", "shop__customers_history", "--full-refresh", *vars_)
    rows = built.rows(
        "select table_name, valid_to is null as open_null, count(*) as n from {schema}.cdc_history "
        "where is_current group by table_name, valid_to is null"
    )
    customers = [r for r in rows if r["table_name"] == "customers"]
    assert customers and all(not r["open_null"] for r in customers), rows
    assert all(r["open_null"] for r in rows if r["table_name"] != "customers"), rows
    assert built.rows(
        "select count(*) as n from {schema}.cdc_history where is_current and table_name = 'customers' "
        "and valid_to != timestamp'9999-12-31'"
    )[0]["n"] == 0
