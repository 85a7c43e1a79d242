"""Benchmark harness (`make bench`, `python -m cdc_lake.bench`): see docs/benchmarks.md.

Generates a mixed-format workload with the simulator, lands it, and measures in one Spark
session: the bare `from_json` limit, the staging + change-log build, the current/history full
builds, an incremental run after +1 % new and +1 % late changes, and a dbt-snapshot peer; then
writes a JSON result per size and renders the report and plot from all stored results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from cdc_lake.env import PROJECT_DIR

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from cdc_lake.bench import runner

DEFAULT_RESULTS = PROJECT_DIR / "bench" / "results"
DEFAULT_REPORT = PROJECT_DIR / "docs" / "benchmarks.md"
DEFAULT_PLOT = PROJECT_DIR / "docs" / "benchmarks.png"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lake.bench",
        description=(
            "Benchmark cdc_lake: generate a mixed-format workload of SIZE MySQL changes, land it, and time "
            "the bare from_json limit, the staging + change-log build, the cdc_current/cdc_history full "
            "builds, an incremental build after +1%% new and +1%% late changes, and a dbt-snapshot peer. "
            "Writes RESULTS/<size>.json and renders REPORT and PLOT from every stored result."
        ),
    )
    parser.add_argument(
        "--size",
        default="1m",
        help="changes: tiny (2k), small (100k), 1m, 5m, 250k, ... ; comma-separated for several (default 1m)",
    )
    parser.add_argument("--runs", type=int, default=3, help="repetitions of every timed step (default 3)")
    parser.add_argument("--startup-runs", type=int, default=3, help="cold start-up measurements (0 skips)")
    parser.add_argument("--formats", help="comma-separated formats (default: every format with a staging model)")
    parser.add_argument("--seed", type=int, default=1, help="workload seed (default 1)")
    parser.add_argument(
        "--work",
        default=os.environ.get("CDC_LAKE_BENCH_DIR", str(Path(tempfile.gettempdir()) / "cdc_lake_bench")),
        help="workloads, bench lake and dbt targets (default $CDC_LAKE_BENCH_DIR or /tmp/cdc_lake_bench)",
    )
    parser.add_argument("--results", default=str(DEFAULT_RESULTS), help="folder of per-size JSON results")
    parser.add_argument("--report", default=str(DEFAULT_REPORT), help="markdown report to write")
    parser.add_argument("--plot", default=str(DEFAULT_PLOT), help="PNG plot to write (needs matplotlib)")
    parser.add_argument("--no-peer", action="store_true", help="skip the dbt-snapshot peer")
    parser.add_argument("--no-tests", action="store_true", help="skip `dbt test` and the incremental `dbt build`")
    parser.add_argument("--keep-workload", action="store_true", help="keep the generated files (large)")
    parser.add_argument("--report-only", action="store_true", help="only re-render the report from stored results")
    return parser


def run(args: argparse.Namespace, spark: SparkSession | None = None) -> list[Path]:
    """Run the benchmark for every size; returns the result files written.

    With `spark`, runs in that session (e.g. the test suite's); the session's lake must not be
    held by another process. Without it, the bench opens its own lake under `--work`.
    """
    from cdc_lake.bench import report, runner, startup, workload

    results_dir, work = Path(args.results), Path(args.work)
    written: list[Path] = []
    if not args.report_only:
        sizes = [workload.parse_size(s) for s in args.size.split(",") if s.strip()]
        formats = [f.strip() for f in args.formats.split(",")] if args.formats else None
        command = "python -m cdc_lake.bench " + shlex.join(sys.argv[1:]) if spark is None else "in-process"
        startup_runs = startup.measure(args.startup_runs)
        if spark is None:
            os.environ["CDC_LAKE_DIR"] = str((work / "lake").resolve())
            from cdc_lake.bench.jobs import RETAINED
            from cdc_lake.spark import get_spark

            spark = get_spark("cdc_lake bench", extra={"spark.ui.showConsoleProgress": "false", **RETAINED})
        results_dir.mkdir(parents=True, exist_ok=True)
        for changes in sizes:
            folder = work / f"workload_{workload.size_label(changes)}"
            wl = workload.prepare(changes, folder, formats, seed=args.seed)
            try:
                result = runner.run_size(spark, wl, work, args.runs, peer=not args.no_peer, tests=not args.no_tests)
            except runner.SizeFailed as failed:
                # keep what was measured (not rendered: the report shows whole results only)
                _write(results_dir / "failed", failed.partial, command, startup_runs, spark)
                raise
            finally:
                if not args.keep_workload:
                    workload.remove(folder)
            written.append(_write(results_dir, result, command, startup_runs, spark))
    report.render(results_dir, Path(args.report), Path(args.plot))
    return written


def _write(
    folder: Path,
    result: runner.SizeResult,
    command: str,
    startup_runs: dict[str, list[dict[str, float]]],
    spark: SparkSession,
) -> Path:
    """Write one size's result (with the run's command, start-up figures and machine) as JSON."""
    from cdc_lake.bench import report

    payload = {
        **result.__dict__,
        "command": command,
        "startup": startup_runs,
        "finished_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": report.machine(spark),
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{result.label}.json"
    path.write_text(json.dumps(payload, indent=1, default=str) + "\n")
    print(f"bench: wrote {path}", file=sys.stderr)
    return path


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        run(args)
    finally:
        if not args.report_only:
            from cdc_lake.servers.metastore import MetastoreServer

            # the bench's lake's metastore server outlives this process unless stopped
            MetastoreServer.for_lake(Path(args.work) / "lake").stop()
    return 0
