"""`cdc-lake land`: append kcat dumps to the raw tables, locally or over a Spark Thrift Server."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from cdc_lake.cli.target import add_target_argument, on_target
from cdc_lake.formats import FORMATS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdc_lake.landing import Executor, LandingReport

EXIT_BAD_LINES = 3
EXIT_WRONG_FORMAT = 4
EXIT_CONFLICTS = 5


def _land_plan(args: argparse.Namespace) -> dict[str, list[str]] | str:
    """Files by format, in the order given: `FORMAT=FILE` names its own format, a plain FILE takes
    --format. Returns the error message when a FILE has none."""
    plan: dict[str, list[str]] = {}
    for item in args.files:
        prefix, sep, rest = item.partition("=")
        if sep and prefix in FORMATS:
            fmt, path = prefix, rest
        elif args.format:
            fmt, path = args.format, item
        else:
            return f"cdc-lake land: which format is {item}? give --format FORMAT or write FORMAT={item}"
        plan.setdefault(fmt, []).append(path)
    return plan


def run(args: argparse.Namespace) -> int:
    plan = _land_plan(args)
    if isinstance(plan, str):
        print(plan, file=sys.stderr)
        return 2
    if args.topic_incarnation < 0:
        print("cdc-lake land: --topic-incarnation counts a topic's lives from 0", file=sys.stderr)
        return 2
    # checked before Spark starts: a typo should cost a second, not a JVM start and a traceback
    missing = [path for paths in plan.values() for path in paths if path != "-" and not os.path.isfile(path)]
    if missing:
        for path in missing:
            print(f"cdc-lake land: no such file: {path}", file=sys.stderr)
        return 2
    from cdc_lake.kcat import peek_values
    from cdc_lake.sniff import sample_values

    wrong = False
    for fmt, paths in plan.items():
        sample = sample_values(fmt, peek_values(paths, args.raw_values))
        if sample.wrong:
            print(sample.message(), file=sys.stderr)
            wrong = True
    if wrong and not args.force:
        return EXIT_WRONG_FORMAT
    options = {
        "raw_values": args.raw_values,
        "topic": args.topic,
        "partition": args.partition,
        "progress": sys.stderr,
        "incarnation": args.topic_incarnation,
    }

    def land_all(target: SparkSession | Executor) -> list[LandingReport]:
        from cdc_lake.landing import land

        return [land(target, fmt, paths, **options) for fmt, paths in plan.items()]  # one JVM for every format

    def land_there(conn: Any) -> list[LandingReport]:
        from cdc_lake.thrift import ThriftExecutor

        return land_all(ThriftExecutor(conn.cursor()))

    reports = on_target(args.target, "cdc-lake land", local=land_all, thrift=land_there)
    if reports is None:
        return 1
    code = 0
    for report in reports:
        for bad in report.bad_lines[: args.max_errors]:
            print(f"{bad.source}:{bad.line_no}: {bad.reason}", file=sys.stderr)
        if len(report.bad_lines) > args.max_errors:
            print(f"... and {len(report.bad_lines) - args.max_errors} more bad lines", file=sys.stderr)
        if report.conflicts:
            _print_conflicts(report)
        print(report.summary())
        if report.conflicts:
            code = EXIT_CONFLICTS
        elif report.bad_lines and code == 0:
            code = EXIT_BAD_LINES
    return code


def _print_conflicts(report: LandingReport) -> None:
    print(
        f"{report.fmt}: {report.conflicts} records arrived again at offsets already landed, with another "
        "key or value; they were not landed (the first landing of an offset wins):",
        file=sys.stderr,
    )
    for conflict in report.conflict_samples:
        print(f"  {conflict.describe()}", file=sys.stderr)
    if report.conflicts > len(report.conflict_samples):
        print(f"  ... and {report.conflicts - len(report.conflict_samples)} more", file=sys.stderr)
    for topic, incarnation in sorted({(c.topic, c.topic_incarnation) for c in report.conflict_samples}):
        print(
            f"If topic {topic} was deleted and created again (its offsets started again at 0), land its "
            f"new records with --topic-incarnation {incarnation + 1}; if the dump belongs to another "
            "topic or format, land it there instead.",
            file=sys.stderr,
        )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    land = sub.add_parser(
        "land",
        help="append Kafka records (kcat -C -J lines) to the raw table of a format",
        description=(
            "Append Kafka records to the raw Iceberg table of their format. Each line of FILE is one record "
            "as `kcat -C -b BROKER -t TOPIC -J -e` prints it. Records already landed (same topic, "
            "partition, offset, topic incarnation) are skipped, so landing twice changes nothing. "
            "Several formats in one command (one Spark start): `debezium=a.jsonl canal_flat=b.jsonl`. "
            "Exit codes: 2 usage or missing file; "
            f"{EXIT_BAD_LINES} lines that are not records (reported with their line numbers, not landed); "
            f"{EXIT_WRONG_FORMAT} the values do not look like the format (checked on a sample before "
            f"anything is landed; --force lands anyway); {EXIT_CONFLICTS} records at offsets already landed "
            "with other content (not landed; see --topic-incarnation)."
        ),
    )
    land.add_argument(
        "--format", choices=FORMATS, help="the CDC tool that wrote the records of every FILE not written FORMAT=FILE"
    )
    land.add_argument(
        "files", nargs="+", metavar="FILE",
        help="kcat -J dump, or FORMAT=FILE to give that file's format; '-' reads standard input",
    )
    land.add_argument(
        "--raw-values",
        action="store_true",
        help="each line is a bare Kafka value (no kcat envelope); offsets are line numbers - 1",
    )
    land.add_argument("--topic", help="topic for --raw-values (default: file name without extension)")
    land.add_argument("--partition", type=int, default=0, help="partition for --raw-values (default 0)")
    land.add_argument("--max-errors", type=int, default=20, help="bad lines to print (default 20)")
    land.add_argument(
        "--force", action="store_true", help="land even when the values do not look like the format's records"
    )
    land.add_argument(
        "--topic-incarnation", type=int, default=0, metavar="N",
        help=(
            "the topic's life: 0 (default) for a topic never recreated; a topic deleted and created again "
            "(offsets restart at 0) lands its new records as 1, then 2, ... (stored in the raw table's "
            "kafka_topic_incarnation, part of the landing identity)"
        ),
    )
    add_target_argument(
        land,
        "dbt target whose lake receives the records: `local` opens the embedded lake in "
        "CDC_LAKE_DIR; `thrift` sends them to the Spark Thrift Server of the `thrift` target "
        "(CDC_LAKE_THRIFT_HOST/PORT/USER/AUTH) as INSERT batches, then the same MERGE as locally "
        "(default: $CDC_LAKE_TARGET, else local)",
    )
    land.set_defaults(func=run)
