"""`cdc-lake add-table`: its parser; the handler and what it writes are in cdc_lake.tables."""

from __future__ import annotations

import argparse

from cdc_lake import tables
from cdc_lake.env import PROJECT_DIR


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add = sub.add_parser(
        "add-table",
        help="expose a source table as typed dbt models (<database>__<table>_current and _history)",
        description=(
            "List DATABASE.TABLE in seeds/cdc_tables.csv and write its two typed models into "
            "models/marts/tables/ (one line each, calling the typed_current / typed_history macros) with "
            "their yml (descriptions and tests). The models find their columns at build time; the yml "
            "lists them when the lake already knows the table, so run the command again after a build to "
            "document new columns. Then run `dbt build`. Running it twice changes nothing."
        ),
    )
    add.add_argument("database", metavar="DATABASE", help="source database (MySQL schema), as in database_name")
    add.add_argument("table", metavar="TABLE", help="source table, as in table_name")
    add.add_argument(
        "--column-types",
        metavar="COL:TYPE;...",
        help="Spark types that replace the mapped ones, e.g. 'amount:decimal(12,2);is_active:boolean'",
    )
    add.add_argument("--project-dir", default=str(PROJECT_DIR), help="dbt project folder (default: this checkout)")
    add.add_argument(
        "--no-lake", action="store_true", help="do not start Spark to read the table's columns from the lake"
    )
    add.set_defaults(func=tables.main)
