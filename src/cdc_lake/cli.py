"""`cdc-lake`: the project's command line (landing Kafka dumps; more subcommands join here)."""

from __future__ import annotations

import argparse
import sys

from cdc_lake.landing import FORMATS

EXIT_BAD_LINES = 3


def _land(args: argparse.Namespace) -> int:
    from cdc_lake.landing import land
    from cdc_lake.spark import get_spark

    spark = get_spark("cdc-lake land")
    report = land(
        spark,
        args.format,
        args.files,
        raw_values=args.raw_values,
        topic=args.topic,
        partition=args.partition,
        progress=sys.stderr,
    )
    for bad in report.bad_lines[: args.max_errors]:
        print(f"{bad.source}:{bad.line_no}: {bad.reason}", file=sys.stderr)
    if len(report.bad_lines) > args.max_errors:
        print(f"... and {len(report.bad_lines) - args.max_errors} more bad lines", file=sys.stderr)
    print(report.summary())
    return EXIT_BAD_LINES if report.bad_lines else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdc-lake",
        description="Land Kafka CDC records into the lake that the cdc_lake dbt project builds on.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    land = sub.add_parser(
        "land",
        help="append Kafka records (kcat -C -J lines) to the raw table of a format",
        description=(
            "Append Kafka records to the raw Iceberg table of FORMAT. Each line of FILE is one record "
            "as `kcat -C -b BROKER -t TOPIC -J -e` prints it. Records already landed (same topic, "
            "partition, offset) are skipped, so landing twice changes nothing. Lines that are not a "
            f"record are reported with their line numbers and not landed; the exit code is then "
            f"{EXIT_BAD_LINES}."
        ),
    )
    land.add_argument("--format", required=True, choices=FORMATS, help="the CDC tool that wrote the records")
    land.add_argument("files", nargs="+", metavar="FILE", help="kcat -J dump; '-' reads standard input")
    land.add_argument(
        "--raw-values",
        action="store_true",
        help="each line is a bare Kafka value (no kcat envelope); offsets are line numbers - 1",
    )
    land.add_argument("--topic", help="topic for --raw-values (default: file name without extension)")
    land.add_argument("--partition", type=int, default=0, help="partition for --raw-values (default 0)")
    land.add_argument("--max-errors", type=int, default=20, help="bad lines to print (default 20)")
    land.set_defaults(func=_land)

    from cdc_lake.generator import add_subcommand as add_generate

    add_generate(sub)

    from cdc_lake.tables import add_subcommand as add_add_table

    add_add_table(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
