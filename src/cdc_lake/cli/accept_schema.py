"""`cdc-lake accept-schema <database>.<table>`: accept the schema change of a table whose option
`schema_changes` is `fail` (or let columns into one whose option is `ignore_new_columns`), and
bring its held records back to the next build (the mechanism: cdc_lake.schema_acceptance)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cdc_lake.cli.target import add_target_argument, on_target


def run(args: argparse.Namespace) -> int:
    from cdc_lake.env import model_schema
    from cdc_lake.schema_acceptance import accept_schema

    database, dot, table = args.table.partition(".")
    if not dot or not database or not table:
        print(f"cdc-lake accept-schema: name the table as <database>.<table>, got {args.table!r}", file=sys.stderr)
        return 2

    def accept_there(target: Any) -> Any:
        return accept_schema(target, database, table, model_schema(), args.column or ())

    def accept_on_thrift(conn: Any) -> Any:
        from cdc_lake.thrift import ThriftExecutor

        return accept_there(ThriftExecutor(conn.cursor()))

    accepted = on_target(args.target, "cdc-lake accept-schema", local=accept_there, thrift=accept_on_thrift)
    if accepted is None:
        return 1
    print(accepted.summary())
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "accept-schema",
        help="accept a table's schema change (option schema_changes: fail) and release its held records",
        description=(
            "For a table whose option schema_changes (var cdc_table_options) is `fail`: accept the "
            "columns of its held changes (the records cdc_rejected_messages shows with the reason "
            "'schema change of <database>.<table> not accepted ...') and its ALTER / RENAME TABLE "
            "statements, then release those records: the next `dbt build` stages them again and the "
            "change log takes their changes, in source order. For `ignore_new_columns`, --column "
            "lets a column into the changes built from then on. Written to the raw schema's "
            "cdc_schema_acceptances, which a full refresh keeps. Running it again with nothing held "
            "changes nothing the builds read. docs/table_options.md, \"Schema changes\"."
        ),
    )
    parser.add_argument("table", metavar="DATABASE.TABLE", help="the table, as <database>.<table>")
    parser.add_argument("--column", action="append", metavar="NAME",
                        help="accept this column too (repeatable); as the change log spells it")
    add_target_argument(parser, "run on the embedded session (local) or a Spark Thrift Server (thrift)")
    parser.set_defaults(func=run)
