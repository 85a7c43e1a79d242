"""`cdc-lake sql`: its parser; the shell and its handler are in cdc_lake.sql_shell."""

from __future__ import annotations

import argparse

from cdc_lake import sql_shell


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "sql",
        help="Spark SQL on the lake: an interactive shell, or -e/-f for statements",
        description=(
            "Run Spark SQL on the lake with the `local` target's Spark settings (profiles/profiles.yml): "
            "interactively (statements end with ';', Ctrl-D quits), or the statements of -e TEXT or "
            "-f FILE ('-' reads standard input), stopping at the first error (exit 1). The current "
            "database is the models' schema ($CDC_LAKE_SCHEMA, default cdc_lake). Reading a table "
            "never runs a model: use it rather than `dbt show` on incremental models. It may run "
            "while `dbt build` and landings run."
        ),
    )
    parser.add_argument("-e", "--execute", metavar="SQL", help="statements to run (';' between them)")
    parser.add_argument("-f", "--file", metavar="FILE", help="a file of statements; '-' reads standard input")
    parser.add_argument(
        "--output", choices=sql_shell.OUTPUTS, default="table",
        help="table (default), tsv (tab-separated, a header line, NULL for null), json (one object per row)",
    )
    parser.add_argument("--max-rows", type=int, default=1000, help="rows printed per result (table, tsv)")
    parser.add_argument("--max-width", type=int, default=80, help="characters per cell before it is cut (table)")
    parser.set_defaults(func=sql_shell.main)
