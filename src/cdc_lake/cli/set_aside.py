"""`cdc-lake set-aside`: after a `dbt build` failed in a base model, set aside the records that made
it fail; `--release` brings set-aside records back after a fix (the mechanism: cdc_lake.set_aside)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from cdc_lake.cli.target import add_target_argument, on_target
from cdc_lake.formats import FORMATS


def base_relation(fmt: str) -> str:
    """The base model's table of `fmt` in the models' schema."""
    from cdc_lake.env import model_schema
    from cdc_lake.sqltext import qualified_name

    return qualified_name(model_schema(), f"base_{fmt}__messages")


def run(args: argparse.Namespace) -> int:
    from cdc_lake.env import PROJECT_DIR, model_schema
    from cdc_lake.landing import Selection
    from cdc_lake.set_aside import failed_base_models_of_last_run, release, set_aside_failing_records
    from cdc_lake.sqltext import qualified_name

    if args.release:
        if not args.format or (args.topic is None and (args.partition, args.offset) != (None, None)):
            print("cdc-lake set-aside: --release needs --format (and --topic for --partition or --offset)",
                  file=sys.stderr)
            return 2
        # the records of one topic (partition, offset) as `cdc-lake unland` selects them, or all
        where = "true" if args.topic is None else Selection(
            args.format, args.topic, args.partition, args.offset, args.offset).where()
        rejects = qualified_name(model_schema(), "cdc_rejected_messages")

        def release_there(target: Any) -> int:
            return release(target, args.format, where, rejects)

        released = on_target(args.target, "cdc-lake set-aside", local=release_there,
                             thrift=lambda conn: release_there(_thrift_executor(conn)))
        if released is None:
            return 1
        print(f"released {released} set-aside records of {args.format}; the next build stages them")
        return 0

    project_dir = Path(args.project_dir or (os.getcwd() if Path("dbt_project.yml").exists() else PROJECT_DIR))
    failed = failed_base_models_of_last_run(project_dir)
    if args.format:
        failed = {fmt: sql for fmt, sql in failed.items() if fmt == args.format}
    if not failed:
        print("cdc-lake set-aside: the last dbt command in this project failed in no base model; nothing to do")
        return 0

    def search(target: Any) -> list:
        return set_aside_failing_records(target, failed, base_relation)

    outcomes = on_target(args.target, "cdc-lake set-aside", local=search,
                         thrift=lambda conn: search(_thrift_executor(conn)))
    if outcomes is None:
        return 1
    return 0 if all(outcome.reproduced for outcome in outcomes) else 3


def _thrift_executor(conn: Any) -> Any:
    from cdc_lake.thrift import ThriftExecutor

    return ThriftExecutor(conn.cursor())


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "set-aside",
        help="after a dbt build failed in a base model, set aside the records that made it fail",
        description=(
            "Read the last dbt command's results in the project (target/run_results.json). For each "
            "base model that failed, run its query on halves of its batch until the records that make "
            "it fail are found, and set them aside: the next build leaves them out and reports each "
            "in cdc_rejected_messages with the error as its reason. `cdc-lake build --every` does "
            "this by itself after a failed build. Exit 3 when a failed model builds on its whole batch "
            "when probed (the failure was not a record's). With --release, bring set-aside records "
            "of --format (optionally one --topic/--partition/--offset) back after a fix: the next build "
            "stages them."
        ),
    )
    parser.add_argument("--format", choices=FORMATS, help="only this format's base model (with --release: required)")
    parser.add_argument("--release", action="store_true", help="bring set-aside records back instead")
    parser.add_argument("--topic", help="with --release: only this topic")
    parser.add_argument("--partition", type=int, help="with --release: only this partition")
    parser.add_argument("--offset", type=int, help="with --release: only this offset")
    parser.add_argument("--project-dir", help="the dbt project (default: this folder if it has one, else the checkout)")
    add_target_argument(parser, "run on the embedded session (local) or a Spark Thrift Server (thrift)")
    parser.set_defaults(func=run)
