"""`cdc-lake`: the project's command line (landing Kafka dumps, SQL on the lake, the metastore server,
a local cluster, verifying the lake against the source database; more join here).

Every subcommand is a module of this package with `register(subparsers)`, which adds the
subcommand's parser and sets its handler (`func`: parsed arguments in, exit status out). The handler
is in the module, or beside the code it drives (`build_loop.main`, `tables.main`, `sql_shell.main`).
This module only assembles them, in COMMANDS' order (the order of `cdc-lake --help`); `target`
decides whether a command runs on the embedded Spark session or on a Spark Thrift Server.
"""

from __future__ import annotations

import argparse

from cdc_lake.cli import (
    accept_schema,
    add_table,
    add_tables,
    build,
    cluster,
    consume,
    generate,
    kafka,
    land,
    metastore,
    set_aside,
    sql,
    unland,
    verify,
)
from cdc_lake.cli.land import EXIT_BAD_LINES, EXIT_CONFLICTS, EXIT_WRONG_FORMAT

__all__ = ["COMMANDS", "EXIT_BAD_LINES", "EXIT_CONFLICTS", "EXIT_WRONG_FORMAT", "build_parser", "main"]

COMMANDS = (
    land, unland, consume, build, set_aside, accept_schema, generate, add_table, add_tables, sql, metastore, verify,
    kafka, cluster,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdc-lake",
        description="Land Kafka CDC records into the lake that the cdc_lake dbt project builds on.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))

