"""`cdc-lake add-tables`: its parser; the handler is in cdc_lake.add_tables."""

from __future__ import annotations

import argparse

from cdc_lake import add_tables
from cdc_lake.env import PROJECT_DIR


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "add-tables",
        help="expose every table the lake has seen that matches patterns (cdc-lake add-table for each)",
        description=(
            "Do `cdc-lake add-table` for every table of the built lake (the tables of cdc_source_columns) "
            "that matches an --include pattern (every table when none is given) and no --exclude pattern. "
            "Patterns are globs on DATABASE.TABLE as the lake spells them, case-sensitive: '*' any text, "
            "'?' one character, '[abc]' one of them. A table already exposed is left as it is (its "
            "column_types kept), so running the command again changes no file; a table whose name "
            "cannot make a model is skipped, with the reason. Prints each table added and each skipped. "
            "Then run `dbt build`. To do it before every scheduled build: cdc-lake build --add-tables."
        ),
        epilog="example: cdc-lake add-tables --include 'shop.*' --include 'crm.customers' --exclude 'shop.tmp_*'",
    )
    parser.add_argument("--include", action="append", metavar="PATTERN", type=add_tables.check_pattern,
                        help="expose the tables matching DATABASE.TABLE glob PATTERN (repeatable; default: all)")
    parser.add_argument("--exclude", action="append", metavar="PATTERN", type=add_tables.check_pattern,
                        help="leave out the tables matching PATTERN, even if included (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="list what would be added; write nothing")
    parser.add_argument("--project-dir", default=str(PROJECT_DIR), help="dbt project folder (default: this checkout)")
    parser.set_defaults(func=add_tables.main)
