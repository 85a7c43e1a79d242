"""The dbt yml that `cdc-lake add-table` writes (`cdc_lake.tables.models_yml`), without Spark.

The expected documents were frozen from the line-by-line writer that `yaml.safe_dump` replaced
(commit a831a88): the new writer must load back to exactly the same data, whatever the names.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from cdc_lake.tables import METADATA_COLUMNS, SourceColumn, models_yml

LONG_ENUM = "enum(" + ",".join(f"'value_{i}'" for i in range(30)) + ")"
KEY = ["source_system", "row_key"]
KEY_COLUMNS = [
    {"name": "source_system", "description": "{{ doc('source_system') }}", "data_tests": ["not_null"]},
    {"name": "row_key", "description": "{{ doc('row_key') }}", "data_tests": ["not_null"]},
]
CURRENT_TAIL = [
    {"name": "op", "description": "Op of the row's latest change (`c` insert, `u` update, `r` snapshot read)."},
    {"name": "commit_ts", "description": "Commit time of the row's latest change (UTC)."},
    {"name": "change_order", "description": "{{ doc('change_order') }}"},
    {"name": "change_id", "description": "The change that produced the row's current state."},
    {"name": "last_landing_seq", "description": "{{ doc('last_landing_seq') }}"},
]
HISTORY_HEAD = [
    {
        "name": "version_id",
        "description": "Id of the version (the change_id of the change that opened it).",
        "data_tests": [{"unique": {"config": {"where": "__cdc_batch_keys__"}}}, "not_null"],
    }
]
PER_KEY = {"where": "__cdc_batch_keys__"}  # a test that compares the rows of one key
HISTORY_TAIL = [
    {
        "name": "valid_from",
        "description": "Commit time of the change that opened the version (inclusive).",
        "data_tests": ["not_null"],
    },
    {"name": "valid_to", "description": "Commit time of the change that closed it (exclusive); null while open."},
    {"name": "is_current", "description": "True for the open version of a row that exists now."},
    {"name": "closed_by_delete", "description": "True when a delete closed the version."},
    {"name": "op", "description": "Op of the change that opened the version (`c`, `u` or `r`)."},
    {"name": "change_id", "description": "The change that opened the version."},
    {"name": "change_order", "description": "{{ doc('change_order') }} Of the opening change."},
    {"name": "last_landing_seq", "description": "{{ doc('last_landing_seq') }}"},
]


def expected_document(
    base: str, database: str, table: str, current: str, history: str, source_columns: list[dict[str, Any]]
) -> dict[str, Any]:
    """The frozen document: the parts every table shares, with this table's names, descriptions and columns."""
    names = {"database_name": database, "table_name": table}
    return {
        "version": 2,
        "models": [
            {
                "name": f"{base}_current",
                "description": current,
                "data_tests": [
                    {
                        "rows_per_key_match_current": {
                            "arguments": {"source_model": "ref('cdc_current')", **names},
                            "config": PER_KEY,
                        }
                    },
                    {
                        "typed_values_preserved": {
                            "arguments": {"source_model": "ref('cdc_current')", **names, "join_columns": KEY}
                        }
                    },
                ],
                "columns": [*KEY_COLUMNS, *source_columns, *CURRENT_TAIL],
            },
            {
                "name": f"{base}_history",
                "description": history,
                "data_tests": [
                    {"one_open_version_per_key": {"arguments": {"key_columns": KEY}, "config": PER_KEY}},
                    {"contiguous_versions": {"arguments": {"key_columns": KEY}, "config": PER_KEY}},
                    {
                        "typed_values_preserved": {
                            "arguments": {"source_model": "ref('cdc_history')", **names, "join_columns": ["version_id"]}
                        }
                    },
                ],
                "columns": [*HISTORY_HEAD, *KEY_COLUMNS, *source_columns, *HISTORY_TAIL],
            },
        ],
    }


def source_columns(rows: list[tuple[str, str | None, str, bool]] | None) -> list[SourceColumn] | None:
    return None if rows is None else [SourceColumn(*row) for row in rows]


# database, table, source columns (name, MySQL type, Spark type, in the primary key), then the frozen
# model base name, the two model descriptions and the entries of the source columns
CASES = [
    pytest.param(
        "shop",
        "orders",
        None,
        "shop__orders",
        (
            "Live rows of the source table `shop.orders` (rows whose last change is a delete "
            "are left out), one typed column per source column, from cdc_current. Column "
            "types: cdc_typed_columns (the `column_types` of seeds/cdc_tables.csv, else the "
            "MySQL type mapped by seeds/mysql_spark_types.csv). A view: always in step with "
            "cdc_current; a column added at the source appears at the next build. Run "
            "`cdc-lake add-table shop orders` again after a build to list the source columns "
            "here.\n"
        ),
        (
            "Every version of every row of the source table `shop.orders` (SCD type 2, valid "
            "over [valid_from, valid_to)), one typed column per source column, from "
            "cdc_history. Types as in shop__orders_current. A view over cdc_history. Run "
            "`cdc-lake add-table shop orders` again after a build to list the source columns "
            "here.\n"
        ),
        [],
        id="plain_no_columns",
    ),
    pytest.param(
        "yes",
        "null",
        [],
        "yes__null",
        (
            "Live rows of the source table `yes.null` (rows whose last change is a delete "
            "are left out), one typed column per source column, from cdc_current. Column "
            "types: cdc_typed_columns (the `column_types` of seeds/cdc_tables.csv, else the "
            "MySQL type mapped by seeds/mysql_spark_types.csv). A view: always in step with "
            "cdc_current; a column added at the source appears at the next build. Run "
            "`cdc-lake add-table yes null` again after a build to list the source columns "
            "here.\n"
        ),
        (
            "Every version of every row of the source table `yes.null` (SCD type 2, valid "
            "over [valid_from, valid_to)), one typed column per source column, from "
            "cdc_history. Types as in yes__null_current. A view over cdc_history. Run "
            "`cdc-lake add-table yes null` again after a build to list the source columns "
            "here.\n"
        ),
        [],
        id="yaml_words_empty_columns",
    ),
    pytest.param(
        "d.b`x",
        "we.ird \"t\" 'q' `b` ;--",
        [
            ("id", "bigint(20) unsigned", "decimal(20,0)", True),
            ("select", "varchar(8)", "string", False),
            ("from", None, "string", False),
            ("a b", "int(11)", "int", True),
            ("x`y", "text", "string", False),
            ("1col", "tinyint(1)", "boolean", False),
            ("drop table t;--", "json", "string", False),
            ("it's", "char(1)", "string", False),
            ('say "hi"', "char(2)", "string", False),
            ("yes", "bit(1)", "boolean", False),
            ("null", None, "string", False),
            ("on", "int", "int", False),
            ("No", "int", "int", False),
            ("TRUE", "int", "int", False),
            ("op", "char(1)", "string", False),
            ("Valid_To", "datetime", "timestamp", False),
            ("status", LONG_ENUM, "string", False),
        ],
        "d_b_x_we_ird_t_q_b_784cc878",
        (
            "Live rows of the source table `d.b`x.we.ird \"t\" 'q' `b` ;--` (rows whose last "
            "change is a delete are left out), one typed column per source column, from "
            "cdc_current. Column types: cdc_typed_columns (the `column_types` of "
            "seeds/cdc_tables.csv, else the MySQL type mapped by "
            "seeds/mysql_spark_types.csv). A view: always in step with cdc_current; a column "
            "added at the source appears at the next build. The column list below was read "
            "from the lake by `cdc-lake add-table 'd.b`x' 'we.ird \"t\" '\"'\"'q'\"'\"' `b` ;--'`; "
            "run it again after the source table changes.\n"
        ),
        (
            "Every version of every row of the source table `d.b`x.we.ird \"t\" 'q' `b` ;--` "
            "(SCD type 2, valid over [valid_from, valid_to)), one typed column per source "
            "column, from cdc_history. Types as in d_b_x_we_ird_t_q_b_784cc878_current. A "
            "view over cdc_history. The column list below was read from the lake by "
            "`cdc-lake add-table 'd.b`x' 'we.ird \"t\" '\"'\"'q'\"'\"' `b` ;--'`; run it again "
            "after the source table changes.\n"
        ),
        [
            {
                "name": "id",
                "description": (
                    "Source column `id`: MySQL `bigint(20) unsigned`, Spark `decimal(20,0)`. Part of the primary key."
                ),
            },
            {"name": "select", "description": "Source column `select`: MySQL `varchar(8)`, Spark `string`."},
            {
                "name": "from",
                "description": "Source column `from`: MySQL type not carried by the format, Spark `string`.",
            },
            {
                "name": "a b",
                "quote": True,
                "description": "Source column `a b`: MySQL `int(11)`, Spark `int`. Part of the primary key.",
            },
            {"name": "x`y", "quote": True, "description": "Source column `x`y`: MySQL `text`, Spark `string`."},
            {
                "name": "1col",
                "quote": True,
                "description": "Source column `1col`: MySQL `tinyint(1)`, Spark `boolean`.",
            },
            {
                "name": "drop table t;--",
                "quote": True,
                "description": "Source column `drop table t;--`: MySQL `json`, Spark `string`.",
            },
            {"name": "it's", "quote": True, "description": "Source column `it's`: MySQL `char(1)`, Spark `string`."},
            {
                "name": 'say "hi"',
                "quote": True,
                "description": 'Source column `say "hi"`: MySQL `char(2)`, Spark `string`.',
            },
            {"name": "yes", "description": "Source column `yes`: MySQL `bit(1)`, Spark `boolean`."},
            {
                "name": "null",
                "description": "Source column `null`: MySQL type not carried by the format, Spark `string`.",
            },
            {"name": "on", "description": "Source column `on`: MySQL `int`, Spark `int`."},
            {"name": "No", "description": "Source column `No`: MySQL `int`, Spark `int`."},
            {"name": "TRUE", "description": "Source column `TRUE`: MySQL `int`, Spark `int`."},
            {
                "name": "op_src",
                "description": (
                    "Source column `op` (renamed: `op` is also a metadata column): MySQL `char(1)`, Spark `string`."
                ),
            },
            {
                "name": "Valid_To_src",
                "description": (
                    "Source column `Valid_To` (renamed: `Valid_To` is also a metadata column): MySQL "
                    "`datetime`, Spark `timestamp`."
                ),
            },
            {"name": "status", "description": "Source column `status`: MySQL `" + LONG_ENUM + "`, Spark `string`."},
        ],
        id="hostile",
    ),
    pytest.param(
        "商店",
        "订单 ☃",
        [
            ("名前", "varchar(10)", "string", True),
            ("émoji 😀", "varchar(10)", "string", False),
            ("a\\b", "int", "int", False),
            ("#x", "int", "int", False),
            ("-x", "int", "int", False),
            ("a: b", "int", "int", False),
            ("[x]", "int", "int", False),
            ("~", "int", "int", False),
            ("123", "int", "int", False),
            ("1.5", "int", "int", False),
            ("2024-01-01", "date", "date", False),
            ("_ok_1", "int", "int", False),
            ("change_order", "int", "int", False),
            ("is_current", "tinyint(1)", "boolean", True),
            (" lead", "int", "int", False),
            ("trail ", "int", "int", False),
            ("tab\there", "int", "int", False),
        ],
        "table_946998b9",
        (
            "Live rows of the source table `商店.订单 ☃` (rows whose last change is a delete are "
            "left out), one typed column per source column, from cdc_current. Column types: "
            "cdc_typed_columns (the `column_types` of seeds/cdc_tables.csv, else the MySQL "
            "type mapped by seeds/mysql_spark_types.csv). A view: always in step with "
            "cdc_current; a column added at the source appears at the next build. The column "
            "list below was read from the lake by `cdc-lake add-table '商店' '订单 ☃'`; run it "
            "again after the source table changes.\n"
        ),
        (
            "Every version of every row of the source table `商店.订单 ☃` (SCD type 2, valid "
            "over [valid_from, valid_to)), one typed column per source column, from "
            "cdc_history. Types as in table_946998b9_current. A view over cdc_history. The "
            "column list below was read from the lake by `cdc-lake add-table '商店' '订单 ☃'`; "
            "run it again after the source table changes.\n"
        ),
        [
            {
                "name": "名前",
                "quote": True,
                "description": ("Source column `名前`: MySQL `varchar(10)`, Spark `string`. Part of the primary key."),
            },
            {
                "name": "émoji 😀",
                "quote": True,
                "description": "Source column `émoji 😀`: MySQL `varchar(10)`, Spark `string`.",
            },
            {"name": "a\\b", "quote": True, "description": "Source column `a\\b`: MySQL `int`, Spark `int`."},
            {"name": "#x", "quote": True, "description": "Source column `#x`: MySQL `int`, Spark `int`."},
            {"name": "-x", "quote": True, "description": "Source column `-x`: MySQL `int`, Spark `int`."},
            {"name": "a: b", "quote": True, "description": "Source column `a: b`: MySQL `int`, Spark `int`."},
            {"name": "[x]", "quote": True, "description": "Source column `[x]`: MySQL `int`, Spark `int`."},
            {"name": "~", "quote": True, "description": "Source column `~`: MySQL `int`, Spark `int`."},
            {"name": "123", "quote": True, "description": "Source column `123`: MySQL `int`, Spark `int`."},
            {"name": "1.5", "quote": True, "description": "Source column `1.5`: MySQL `int`, Spark `int`."},
            {
                "name": "2024-01-01",
                "quote": True,
                "description": "Source column `2024-01-01`: MySQL `date`, Spark `date`.",
            },
            {"name": "_ok_1", "description": "Source column `_ok_1`: MySQL `int`, Spark `int`."},
            {
                "name": "change_order_src",
                "description": (
                    "Source column `change_order` (renamed: `change_order` is also a metadata "
                    "column): MySQL `int`, Spark `int`."
                ),
            },
            {
                "name": "is_current_src",
                "description": (
                    "Source column `is_current` (renamed: `is_current` is also a metadata column): "
                    "MySQL `tinyint(1)`, Spark `boolean`. Part of the primary key."
                ),
            },
            {"name": " lead", "quote": True, "description": "Source column ` lead`: MySQL `int`, Spark `int`."},
            {"name": "trail ", "quote": True, "description": "Source column `trail `: MySQL `int`, Spark `int`."},
            {"name": "tab\there", "quote": True, "description": "Source column `tab\there`: MySQL `int`, Spark `int`."},
        ],
        id="unicode_and_yaml_lookalikes",
    ),
    pytest.param(
        "0123",
        "a: b #c",
        [
            ("x", None, "string", False),
        ],
        "0123_a_b_c_b7ba6ca1",
        (
            "Live rows of the source table `0123.a: b #c` (rows whose last change is a "
            "delete are left out), one typed column per source column, from cdc_current. "
            "Column types: cdc_typed_columns (the `column_types` of seeds/cdc_tables.csv, "
            "else the MySQL type mapped by seeds/mysql_spark_types.csv). A view: always in "
            "step with cdc_current; a column added at the source appears at the next build. "
            "The column list below was read from the lake by `cdc-lake add-table 0123 'a: b "
            "#c'`; run it again after the source table changes.\n"
        ),
        (
            "Every version of every row of the source table `0123.a: b #c` (SCD type 2, "
            "valid over [valid_from, valid_to)), one typed column per source column, from "
            "cdc_history. Types as in 0123_a_b_c_b7ba6ca1_current. A view over cdc_history. "
            "The column list below was read from the lake by `cdc-lake add-table 0123 'a: b "
            "#c'`; run it again after the source table changes.\n"
        ),
        [
            {"name": "x", "description": "Source column `x`: MySQL type not carried by the format, Spark `string`."},
        ],
        id="names_like_numbers_and_indicators",
    ),
]


@pytest.mark.parametrize(("database", "table", "columns", "base", "current", "history", "entries"), CASES)
def test_yml_loads_as_the_frozen_document(database, table, columns, base, current, history, entries):
    text = models_yml(database, table, source_columns(columns))
    assert yaml.safe_load(text) == expected_document(base, database, table, current, history, entries)


def models_of(database: str, table: str, rows: list[tuple[str, str | None, str, bool]]) -> list[dict[str, Any]]:
    return yaml.safe_load(models_yml(database, table, source_columns(rows)))["models"]


@pytest.mark.parametrize(
    ("database", "table", "rows"), [pytest.param(*c.values[:3], id=c.id) for c in CASES if c.values[2]]
)
def test_every_source_column_is_listed_in_both_models(database, table, rows):
    current, history = models_of(database, table, rows)
    listed = [c["name"] for c in current["columns"]]
    names = [name + ("_src" if name.lower() in METADATA_COLUMNS else "") for name, *_ in rows]
    for model in (current, history):
        columns = [c["name"] for c in model["columns"]]
        start = columns.index("row_key") + 1
        assert columns[start : start + len(names)] == names
        # dbt quotes exactly the names that are not plain identifiers
        for column in model["columns"][start : start + len(names)]:
            assert column.get("quote", False) == (not column["name"].isidentifier() or not column["name"].isascii())
    assert len(listed) == len(set(listed))


def test_column_quoting_and_renamed_metadata_column():
    rows = [("a b", "int(11)", "int", True), ("op", "char(1)", "string", False), ("plain", None, "string", False)]
    current, history = models_of("shop", "orders", rows)
    for model in (current, history):
        by_name = {c["name"]: c for c in model["columns"]}
        assert by_name["a b"]["quote"] is True
        assert by_name["a b"]["description"].endswith("Part of the primary key.")
        assert "quote" not in by_name["plain"]
        assert "MySQL type not carried by the format" in by_name["plain"]["description"]
        # a source column named like a metadata column gets `_src`; the metadata column keeps its name
        assert by_name["op_src"]["description"].startswith(
            "Source column `op` (renamed: `op` is also a metadata column)"
        )
        assert "op" in by_name and not by_name["op"]["description"].startswith("Source column")


def test_text_layout():
    text = models_yml("shop", "it's", [SourceColumn("id", "int", "int", True)])
    lines = text.splitlines()
    assert (
        lines[0]
        == "# Written by `cdc-lake add-table shop 'it'\"'\"'s'`. The typed models find their columns at build time"
    )
    assert lines[1].startswith("# (cdc_typed_columns)")
    assert "\nmodels:\n  - name: shop_it_s_" in text  # lists indented under their key
    assert "    description: >\n      Live rows of the source table `shop.it's`" in text  # folded, readable
    assert "\n        description: \"{{ doc('row_key') }}\"\n        data_tests: [not_null]\n" in text
    assert "&id" not in text and "*id" not in text  # shared column entries written out, not aliased


@pytest.mark.parametrize(
    ("database", "table"),
    [("d" * 40 + "-" + "e" * 23, "t" * 64), ("two  spaces", "x")],
)
def test_descriptions_keep_names_whole(database, table):
    # the old writer wrapped descriptions with textwrap, which broke long names apart and split names
    # after a hyphen (loading back as "- "); PyYAML's folded block keeps names whole, spaces included
    text = models_yml(database, table, [SourceColumn("c" * 64, "varchar(255)", "string", False)])
    assert "name: >" not in text  # long names stay plain scalars, only prose is folded
    current, history = yaml.safe_load(text)["models"]
    for model in (current, history):
        assert f"`{database}.{table}`" in model["description"]
        assert model["description"].endswith(" again after the source table changes.\n")
