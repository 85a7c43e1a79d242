"""`cdc-lake unland`: remove records landed by mistake from a raw table."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cdc_lake.cli.target import add_target_argument, on_target
from cdc_lake.formats import FORMATS


def run(args: argparse.Namespace) -> int:
    from cdc_lake.landing import Selection, raw_table, unland

    selection = Selection(
        args.format, args.topic, args.partition, args.from_offset, args.to_offset, args.topic_incarnation
    )

    def unland_there(conn: Any) -> int:
        from cdc_lake.thrift import ThriftExecutor

        return unland(ThriftExecutor(conn.cursor()), selection)

    removed = on_target(
        args.target, "cdc-lake unland", local=lambda spark: unland(spark, selection), thrift=unland_there
    )
    if removed is None:
        return 1
    if not removed:
        print(f"cdc-lake unland: no landed record of {raw_table(args.format)} matches {selection.where()}",
              file=sys.stderr)
        return 1
    print(f"removed {removed} records from {raw_table(args.format)} where {selection.where()}")
    print(
        "The models built from them still hold what they became; rebuild the models of this format from "
        "the raw tables (the other formats' parsed tables are kept):\n"
        f"  dbt build --full-refresh --select base_{args.format}__messages+"
    )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    unland_parser = sub.add_parser(
        "unland",
        help="remove landed records (landed by mistake) from the raw table of a format",
        description=(
            "Delete the records of one topic (optionally one partition, an inclusive offset range, one "
            "topic incarnation) from the raw table of FORMAT, in one Iceberg commit. The models keep what "
            "they built from those records until the format's models are rebuilt: the command prints "
            "the `dbt build --full-refresh --select base_<format>__messages+` to run next. Exit 1 when "
            "nothing matches."
        ),
    )
    unland_parser.add_argument("--format", required=True, choices=FORMATS)
    unland_parser.add_argument("--topic", required=True)
    unland_parser.add_argument("--partition", type=int)
    unland_parser.add_argument("--from-offset", type=int, help="first offset to remove (inclusive)")
    unland_parser.add_argument("--to-offset", type=int, help="last offset to remove (inclusive)")
    unland_parser.add_argument("--topic-incarnation", type=int, metavar="N", help="only this incarnation")
    add_target_argument(
        unland_parser, "dbt target whose lake holds the records (default: $CDC_LAKE_TARGET, else local)"
    )
    unland_parser.set_defaults(func=run)
