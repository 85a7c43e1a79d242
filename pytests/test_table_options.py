"""Per-table options of cdc_history (issue 79; docs/table_options.md): `track_history_except`
and `schema_changes: fail` through the simulator, and the checks dbt makes of var
`cdc_table_options` when it parses.

The simulator plays a workload whose `shop.customers` updates touch `updated_at` alone in about
half its updates (generator option `track_history_except`) and computes the history the lake must
keep under that option: such a touch updates the open version in place. The workload lands in
three batches (out of order, with duplicates) with an incremental build after each, in a lake of
its own (the option changes cdc_history for shop.customers, which other modules' lakes hold too);
then a full refresh must give the same tables. The parse checks need no lake.

`shop.orders` is in mode `fail`: the workload's `ALTER TABLE shop.orders ADD COLUMN coupon_code`
comes half-way, so the second build holds its changes from the ALTER on (rejects with the
reason, none in the change log or the typed view); `cdc-lake accept-schema shop.orders` releases
them before the third batch lands, whose build takes them in with it: the history then equals
the truth, as above.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cdc_lake.cli import main as cdc_lake_main
from cdc_lake.env import PROJECT_DIR
from cdc_lake.generator.runner import Options, generate
from cdc_lake.schema_acceptance import acceptances_table, hold_prefix
from cdc_lake.testing.harness import Lake, table_options_parse_error
from cdc_lake.testing.truth import SEED, Truth, actual_history, land_all, none_first

FORMAT = "debezium"
BATCHES = 3
UNTRACKED = {"shop.customers": ("updated_at",)}
TABLE_OPTIONS = {
    r"shop\.customers": {"track_history_except": ["updated_at"]},
    r"shop\.orders": {"schema_changes": "fail"},
}
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
def held(lake: Lake, workload: Path) -> dict:
    """The first two batches, each landed and built incrementally (shop.orders is held from its
    ALTER on, in the second); what the lake shows then."""
    for batch in range(1, BATCHES):
        land_all(lake, workload, batch)
        lake.build(*VARS, data_tests=False)
    return {
        "rejects": lake.rows(
            "select source_format, kafka_topic, kafka_partition, kafka_offset, landing_seq, raw_value, reject_reason "
            f"from {{schema}}.cdc_rejected_messages where startswith(reject_reason, '{hold_prefix('shop', 'orders')}')"
        ),
        "logged": lake.rows(
            "select change_order, array_contains(map_keys(coalesce(after, before)), 'coupon_code') as has_coupon "
            "from {schema}.cdc_changelog where database_name = 'shop' and table_name = 'orders'"
        ),
        "alter": lake.rows(
            "select change_order from {schema}.cdc_schema_changes "
            "where database_name = 'shop' and table_name = 'orders' and ddl_type = 'ALTER'"
        ),
        "typed_columns": set(lake.spark.table(f"{lake.schema}.shop__orders_current").columns),
    }


@pytest.fixture(scope="module")
def built(lake: Lake, workload: Path, held: dict) -> Lake:
    """shop.orders' schema change accepted (`cdc-lake accept-schema`), then the last batch landed
    and built with the data tests: the held records enter the lake with it."""
    assert cdc_lake_main(["accept-schema", "shop.orders"]) == 0
    land_all(lake, workload, BATCHES)
    lake.build(*VARS)
    return lake


@pytest.mark.integration
def test_fail_holds_the_table_from_its_alter_until_accepted(held: dict, built: Lake):
    """Before the acceptance: shop.orders' changes from the ALTER on are rejects (a reason naming
    the new column and the command; Kafka coordinates and the value as landed), the change log
    holds none of them and no coupon_code, the typed view has no such column. After it: no such
    reject is left, the register names the column, and the typed view has it."""
    [alter] = held["alter"]
    assert held["rejects"], "no record held"
    assert all(r["raw_value"] and r["kafka_offset"] is not None for r in held["rejects"])
    assert any("new columns coupon_code" in r["reject_reason"] for r in held["rejects"]), held["rejects"][:2]
    assert all("cdc-lake accept-schema shop.orders" in r["reject_reason"] for r in held["rejects"])
    assert held["logged"] and not any(r["has_coupon"] for r in held["logged"])
    assert all(r["change_order"] < alter["change_order"] for r in held["logged"])
    assert "coupon_code" not in held["typed_columns"]
    assert built.rows(
        f"select count(*) as n from {{schema}}.cdc_rejected_messages "
        f"where startswith(reject_reason, '{hold_prefix('shop', 'orders')}')"
    )[0]["n"] == 0
    accepted = built.rows(f"select accepted_columns, released_records from {acceptances_table()}")
    assert [(a["accepted_columns"], a["released_records"]) for a in accepted] == [
        (["coupon_code"], len(held["rejects"]))
    ]
    assert "coupon_code" in set(built.spark.table(f"{built.schema}.shop__orders_current").columns)


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
        "option 'schema_changes' must be one of evolve, ignore_new_columns, fail, got stop": {
            r"shop\.orders": {"schema_changes": "stop"},
        },
    }
    for expected, options in cases.items():
        message = table_options_parse_error(options)
        assert expected in message, message
        assert f"cdc_table_options['{next(iter(options))}']" in message, message


def test_accept_schema_names_a_table_as_database_dot_table(capsys):
    """A name without its database is refused before Spark starts (exit 2)."""
    assert cdc_lake_main(["accept-schema", "orders"]) == 2
    assert "<database>.<table>" in capsys.readouterr().err


def test_the_hold_reason_starts_as_accept_schema_looks_for_it():
    """`cdc-lake accept-schema` finds a table's held records by the start of their reason
    (hold_prefix); the macro that writes the reason spells it the same way."""
    macro = (PROJECT_DIR / "macros" / "cdc" / "schema_changes" / "schema_change_screen.sql").read_text()
    written = re.search(r"concat\(\s*'(schema change of )', database_name, '\.', table_name, '( not accepted)", macro)
    assert written, "the reason's text is not where this test looks for it"
    assert hold_prefix("shop", "orders") == f"{written.group(1)}shop.orders{written.group(2)}"


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
