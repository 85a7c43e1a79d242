"""`cdc-lake build`: its parser; the schedule and its handler are in cdc_lake.build_loop."""

from __future__ import annotations

import argparse

from cdc_lake import add_tables, build_loop


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "build",
        help="dbt build, once or on a schedule, in one process whose Spark session stays warm",
        description=(
            "Run `dbt build` in this process: once, or with --every S again S seconds after each "
            "start (at once when a build took longer), until SIGTERM/Ctrl-C (after the build under "
            "way) or --times N builds. Later builds reuse the process's Spark session, warm, so a "
            "schedule pays for the data, not for a JVM start. Each build takes the lake's dbt turn. "
            "Arguments after `--` go to dbt build (e.g. -- --select cdc_history+)."
        ),
    )
    parser.add_argument("--every", type=float, metavar="S", help="seconds between build starts (default: once)")
    parser.add_argument("--times", type=int, metavar="N", help="stop after N builds")
    parser.add_argument("--tests-every", type=float, metavar="T",
                        help="with --every: run dbt's data tests in a build every T seconds; the builds "
                             "between are cycles of the models and the raw tables' reconciliation, and "
                             "the next build with every test checks all their batches")
    parser.add_argument("--upkeep-every", type=float, metavar="S",
                        help="after a build, run cdc_compact and cdc_expire_snapshots when the last ran S "
                             "seconds ago or more, and cdc_compact_latest after the other builds")
    parser.add_argument("--latest-max-files", type=int, metavar="N",
                        help="with --upkeep-every: cdc_compact_latest compacts cdc_history's latest versions "
                             "once they hold more than N data and delete files (default: the macro's, 2)")
    parser.add_argument("--expire-args", metavar="YAML",
                        help="the upkeep's cdc_expire_snapshots arguments, as dbt's --args (default: its own)")
    parser.add_argument("--add-tables", action="append", metavar="PATTERN", type=add_tables.check_pattern,
                        help="before each build, expose as typed models the tables of the lake matching "
                             "DATABASE.TABLE glob PATTERN that are not yet (repeatable; '*': every table), as "
                             "`cdc-lake add-tables --include PATTERN` does; the build then builds them")
    parser.add_argument("--exclude-tables", action="append", metavar="PATTERN", type=add_tables.check_pattern,
                        help="with --add-tables: leave out the tables matching PATTERN (repeatable)")
    parser.add_argument("--log", metavar="FILE",
                        help="append each build's start and end (and each upkeep) as JSON lines")
    parser.add_argument("--project-dir", help="the dbt project (default: this folder if it has one, else the checkout)")
    parser.add_argument("dbt_args", nargs=argparse.REMAINDER, help="dbt build's own arguments, after --")
    parser.set_defaults(func=build_loop.main)
