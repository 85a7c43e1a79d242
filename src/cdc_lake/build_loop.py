"""`cdc-lake build`: `dbt build` on a schedule, in one process whose Spark session stays warm.

A scheduler that starts `dbt build` from the command line every minute pays a new JVM each time,
and a fresh JVM runs every node about twice as slowly as one that has built before (the JIT has
not compiled Spark's and Iceberg's code yet): a 30,067-change increment took 165-176 s that way
against 73-98 s in a warm session (docs/benchmarks.md, "Where an incremental build's time goes").
`cdc-lake build --every 60` keeps one process: dbt runs in it (the `session` method reuses the
process's Spark session), one build at a time, each taking the lake's dbt turn as a `dbt build` from
the command line does (`cdc_lake.hook`), so an upkeep operation or an analyst's build between two
scheduled builds waits its turn instead of committing over one.

With --upkeep-every, the table upkeep (`cdc_compact`, then `cdc_expire_snapshots`) runs after a
build when it is due, in the same warm session and lake turn; after the other builds,
`cdc_compact_latest` keeps the partition every read of `cdc_current` scans from piling up files.
Without --every (one build, as from cron) the same follows the build, the upkeep's clock kept in a
file beside the lake.

With --tests-every T, the builds between two with every data test are cycles: every seed and model,
and the reconciliation of each raw table's batch against what its base model staged, record by
record (selector `scheduled_cycle`; var `cdc_defer_tests` marks their batches pending). A build
with every data test runs first, then again whenever the last began T seconds ago or more; its tests
check every batch the cycles wrote since (macro record_tested_batch_sql). A cycle costs the models and
the reconciliation alone, so changes show sooner (docs/scheduled_builds.md, "Cycles and the data
tests' cadence").
With --add-tables PATTERN (and --exclude-tables), what `cdc-lake add-tables` does precedes each
build (cdc_lake.add_tables): the lake's tables that match and have no typed models yet get them,
in this process's session, so a table that appears in the stream is typed from the build after
the one that brought it (each build parses the project, new model files included).
Each build is a line on stdout and, with --log, two JSON lines (its start, then its end with the
status, seconds and slowest nodes); what follows it (the upkeep or `cdc_compact_latest`) one more.
A failed build does not stop the schedule: the next one picks up what it left, as a scheduler's
next run would. When it failed in a base model, the records of its batch that make it fail are
found and set aside first (cdc_lake.set_aside), so the next build builds everything else. SIGTERM or Ctrl-C
stops the schedule after the build under way (a second one ends the process at once). If Spark's
JVM dies, the process exits with status 3 for its service manager to start it again.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdc_lake.add_tables import TablePatterns

EXIT_SPARK_GONE = 3
SLOWEST_LOGGED = 8  # nodes named in each build's log line, slowest first
TURN_GAP = 2.0  # seconds between two builds at least, even when one took longer than the interval


@dataclass
class Upkeep:
    """Table upkeep between scheduled builds: `cdc_compact`, then `cdc_expire_snapshots` (with
    `expire_args`, dbt's --args, or the macro's defaults), at most every `every` seconds.

    When the last one ended is kept in `record` (a file beside the lake's dbt turn lock), so that a
    schedule started again (by its service manager after a crash, or by a deploy) keeps the rhythm
    instead of waiting `every` seconds from its own start: one restarted more often than that
    would never compact. Without a record, the first is due `every` seconds after the start."""

    every: float
    expire_args: str | None = None
    record: Path | None = None

    def due_in(self, started: float) -> float:
        """Seconds until the next upkeep is due (<= 0: due), by wall clock; `started`: the schedule's start."""
        last = started
        if self.record is not None and self.record.exists():
            try:
                last = float(self.record.read_text(encoding="utf-8").split()[0])
            except (ValueError, IndexError):
                pass  # a record cut short by a crash: as if none
        return last + self.every - time.time()

    def start(self) -> None:
        """Start the clock if no upkeep is on record: the first is then due a period after the first
        start of a schedule, however often it is started again (or run once, from cron)."""
        if self.record is not None and not self.record.exists():
            self.done()

    def done(self) -> None:
        if self.record is not None:
            self.record.parent.mkdir(parents=True, exist_ok=True)
            self.record.write_text(f"{time.time()}\n", encoding="utf-8")


class Schedule:
    """Builds every `every` seconds (or once), logged, with an upkeep between two builds when one is
    due; stopped between builds by a signal."""

    def __init__(self, project_dir: Path, dbt_args: Sequence[str], every: float | None, times: int | None,
                 log: Path | None, echo: Callable[[str], None] = print, upkeep: Upkeep | None = None,
                 latest_max_files: int | None = None, tests_every: float | None = None,
                 table_patterns: TablePatterns | None = None) -> None:
        self.project_dir = project_dir
        self.dbt_args = list(dbt_args)
        self.every = every
        self.tests_every = tests_every
        self.tested_at: float | None = None  # when the last build with every data test began
        self.times = times
        self.log = log
        self.echo = echo
        self.upkeep = upkeep
        self.latest_max_files = latest_max_files
        self.stop = threading.Event()
        self.last_result: Any = None  # dbt's result of the last build
        self.table_patterns = table_patterns  # --add-tables: tables to expose before each build
        self.skips_said: set[tuple[str, str]] = set()  # tables add_tables_once skipped and said so

    def _write(self, entry: dict[str, Any]) -> None:
        if self.log is not None:
            with open(self.log, "a", encoding="utf-8") as out:
                out.write(json.dumps(entry) + "\n")

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.stop.is_set():  # the second signal: do not wait for the build under way
            raise KeyboardInterrupt
        self.stop.set()
        self.echo("cdc-lake build: stopping after the build under way (again to stop now)")

    def _invoke(self, args: list[str], callbacks: list[Callable[[Any], None]] | None = None) -> Any:
        """A dbt command in this process (its session method takes the process's Spark session)."""
        from dbt.cli.main import dbtRunner

        cwd = os.getcwd()
        os.chdir(self.project_dir)  # dbt writes target/ and logs/ into the project
        try:
            return dbtRunner(callbacks=callbacks or []).invoke([*args, "--project-dir", str(self.project_dir)])
        finally:
            os.chdir(cwd)

    def is_cycle(self) -> bool:
        """True when the next build is a cycle (models and reconciliation): with --tests-every,
        unless no build with every test has begun yet in this process or the last began
        `tests_every` seconds ago or more."""
        if self.tests_every is None or self.tested_at is None:
            return False
        return time.monotonic() - self.tested_at < self.tests_every

    def add_tables_once(self) -> None:
        """Before a build: expose the lake's tables that match `table_patterns` and have no typed
        models yet (cdc_lake.add_tables), in this process's session, so the build parses and builds
        them. Said and logged when it added a table or skipped a new one (each skip once); a failure
        is said and leaves the build to run as it would have."""
        from cdc_lake.add_tables import ALREADY_EXPOSED, add_lake_tables
        from cdc_lake.spark import get_spark

        assert self.table_patterns is not None
        started = time.time()
        try:
            outcome = add_lake_tables(get_spark("cdc-lake build"), self.project_dir, self.table_patterns)
        except Exception as error:  # noqa: BLE001 - the build runs on the models it has
            self.echo(f"cdc-lake build: adding tables failed: {error}"[:2000])
            self._write({"event": "add_tables", "pid": os.getpid(), "at": time.time(), "error": str(error)[:2000]})
            return
        if outcome is None:
            return  # no build has made cdc_source_columns yet
        skipped = {f"{d}.{t}": why for (d, t), why in outcome.skipped.items()
                   if why != ALREADY_EXPOSED and (d, t) not in self.skips_said}
        self.skips_said |= outcome.skipped.keys()
        if not outcome.added and not skipped:
            return
        added = [f"{d}.{t}" for d, t in outcome.added]
        self._write({"event": "add_tables", "pid": os.getpid(), "at": time.time(),
                     "seconds": round(time.time() - started, 1), "added": added, "skipped": skipped})
        if added:
            self.echo(f"cdc-lake build: exposed {len(added)} new table(s): {', '.join(added)}")
        for name, why in skipped.items():
            self.echo(f"cdc-lake build: not exposing {name}: {why}")

    def build_once(self, number: int) -> int:
        """One `dbt build` in this process, in the lake's dbt turn; dbt's exit status (0, 1, 2)."""
        from cdc_lake.hook import lake_turn

        cycle = self.is_cycle()
        args = cycle_args(self.dbt_args) if cycle else ["build", *self.dbt_args]
        if not cycle:
            self.tested_at = time.monotonic()
        started = time.time()
        kind = "cycle" if cycle else "build"
        self._write({"event": "start", "build": number, "kind": kind, "pid": os.getpid(), "at": started})
        with lake_turn("build"):
            result = self._invoke(args)
        self.last_result = result
        status = _status(result)
        ended = time.time()
        self._write({"event": "end", "build": number, "kind": kind, "pid": os.getpid(), "at": ended,
                     "status": status, "seconds": round(ended - started, 1),
                     "slowest": slowest_nodes(result.result)})
        what = "cycle (models and reconciliation)" if cycle else "build"
        self.echo(f"cdc-lake build: {what} {number} {'done' if status == 0 else f'failed (status {status})'} "
                  f"in {ended - started:.1f} s")
        return status

    def set_aside_once(self) -> None:
        """After a build that failed in base models: find the records of their batches that make
        them fail and set them aside (cdc_lake.set_aside), so the next build builds the rest. In
        this process's session and the lake's turn; logged with what it found. On a Thrift Server
        target (no session here), `cdc-lake set-aside --target thrift` does the same."""
        from pyspark.sql import SparkSession

        from cdc_lake.cli.set_aside import base_relation
        from cdc_lake.hook import lake_turn
        from cdc_lake.set_aside import failed_base_models, set_aside_failing_records

        failed = failed_base_models(getattr(getattr(self.last_result, "result", None), "results", None) or [])
        spark = SparkSession.getActiveSession()
        if not failed or spark is None:
            return
        lines: list[str] = []
        started = time.time()
        with lake_turn("set-aside"):
            try:
                outcomes = set_aside_failing_records(spark, failed, base_relation, log=lines.append)
            except Exception as error:  # noqa: BLE001 - the next build fails again, and this runs again
                lines.append(f"cdc-lake set-aside: the search failed: {error}"[:2000])
                outcomes = []
        ended = time.time()
        self._write({"event": "set_aside", "pid": os.getpid(), "at": ended, "seconds": round(ended - started, 1),
                     "formats": sorted(failed), "set_aside": sum(len(o.records) for o in outcomes),
                     "lines": lines})
        for line in lines:
            if line.startswith("cdc-lake set-aside"):
                self.echo(line)

    def upkeep_once(self) -> int:
        """`cdc_compact` then `cdc_expire_snapshots`, in this process's warm session and in one
        lake turn (a scheduler's `dbt run-operation` would hold the turn through a JVM start each);
        logged with the operations' own lines. The worse exit status of the two."""
        from cdc_lake.hook import lake_turn

        assert self.upkeep is not None
        lines: list[str] = []
        started = time.time()
        with lake_turn("run-operation"):
            compact = _status(self._invoke(["run-operation", "cdc_compact"], [_keep_logged(lines)]))
            expire_args = ["--args", self.upkeep.expire_args] if self.upkeep.expire_args else []
            expire = _status(self._invoke(["run-operation", "cdc_expire_snapshots", *expire_args],
                                          [_keep_logged(lines)]))
        ended = time.time()
        self.upkeep.done()  # done, failed or not: a failing upkeep is retried at its next turn, not at once
        self._write({"event": "upkeep", "pid": os.getpid(), "at": ended, "seconds": round(ended - started, 1),
                     "compact_status": compact, "expire_status": expire, "lines": lines})
        self.echo(f"cdc-lake build: upkeep {'done' if compact == expire == 0 else 'failed'} in {ended - started:.1f} s")
        return max(compact, expire)

    def compact_latest_once(self) -> int:
        """`cdc_compact_latest` (cdc_history's latest versions, once they hold too many files), in
        this process's session and the lake's turn; logged each time (its lines name what it
        compacted, none when nothing was due), so a reader of the log knows the state the build left
        is the upkept one. dbt's exit status."""
        from cdc_lake.hook import lake_turn

        lines: list[str] = []
        started = time.time()
        limit = [] if self.latest_max_files is None else ["--args", f"{{max_files: {self.latest_max_files}}}"]
        with lake_turn("run-operation"):
            status = _status(self._invoke(["run-operation", "cdc_compact_latest", *limit], [_keep_logged(lines)]))
        ended = time.time()
        self._write({"event": "compact_latest", "pid": os.getpid(), "at": ended,
                     "seconds": round(ended - started, 1), "status": status, "lines": lines})
        return status

    def run(self) -> int:
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            number, status = 0, 0
            started = time.time()
            if self.upkeep is not None:
                self.upkeep.start()
            while True:
                began = time.monotonic()
                number += 1
                if self.table_patterns is not None:
                    self.add_tables_once()  # the tables the last build (or a schedule before) brought
                status = self.build_once(number)
                if status != 0 and spark_is_gone():
                    self.echo("cdc-lake build: Spark's JVM is gone; exiting for a restart")
                    return EXIT_SPARK_GONE
                if status != 0:
                    self.set_aside_once()  # a record that fails a base model costs this build only
                # after the build, so the state a build leaves for the analysts is the upkept one
                if self.upkeep is not None and not self.stop.is_set():
                    if self.upkeep.due_in(started) <= 0:
                        self.upkeep_once()
                    else:
                        self.compact_latest_once()
                if self.every is None or (self.times is not None and number >= self.times):
                    return status
                # a dbt command waiting for the turn (upkeep, an analyst's build) gets it in the gap
                if self.stop.wait(max(TURN_GAP, self.every - (time.monotonic() - began))):
                    return status
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def cycle_args(dbt_args: Sequence[str]) -> list[str]:
    """dbt's arguments for a cycle: `build --selector scheduled_cycle` with var `cdc_defer_tests`
    added to the user's --vars (a YAML mapping, which dbt takes once)."""
    import yaml

    args = list(dbt_args)
    variables: dict[str, Any] = {}
    if "--vars" in args:
        at = args.index("--vars")
        variables = dict(yaml.safe_load(args[at + 1]) or {})
        del args[at:at + 2]
    variables["cdc_defer_tests"] = True
    return ["build", "--selector", "scheduled_cycle", "--vars", json.dumps(variables), *args]


def _keep_logged(lines: list[str]) -> Callable[[Any], None]:
    """A dbt callback that keeps the lines macros log (files and snapshots per table) in `lines`."""

    def keep(event: Any) -> None:
        if event.info.name == "JinjaLogInfo":
            lines.append(event.info.msg)

    return keep


def _status(result: Any) -> int:
    """dbt's exit status of an in-process command: 0 done, 1 a node failed, 2 dbt itself failed."""
    return 0 if result.success else (2 if result.exception is not None else 1)


def slowest_nodes(results: Any, count: int = SLOWEST_LOGGED) -> dict[str, float]:
    """The `count` slowest nodes of a dbt result (name: seconds), for reading a schedule's log."""
    timed = [(r.node.name, r.execution_time) for r in getattr(results, "results", None) or []
             if getattr(r, "node", None) is not None]
    return {name: round(seconds, 1) for name, seconds in sorted(timed, key=lambda t: -t[1])[:count]}


def spark_is_gone() -> bool:
    """True when this process's Spark session has stopped or its JVM no longer answers."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None:
        return False  # never started (dbt failed before its first query): a new build starts one
    try:
        return bool(session.sparkContext._jsc.sc().isStopped())
    except Exception:  # noqa: BLE001 - the gateway to a dead JVM fails in many ways
        return True


def main(args: argparse.Namespace) -> int:
    """`cdc-lake build` (see the module docstring; its parser: cdc_lake.cli.build)."""
    from cdc_lake.env import PROJECT_DIR
    from cdc_lake.hook import dbt_target

    project_dir = Path(args.project_dir or (os.getcwd() if Path("dbt_project.yml").exists() else PROJECT_DIR))
    dbt_args = list(args.dbt_args or [])
    if dbt_args[:1] == ["--"]:
        dbt_args = dbt_args[1:]
    if args.every is not None and args.every <= 0:
        print("cdc-lake build: --every takes a positive number of seconds", file=sys.stderr)
        return 2
    if args.upkeep_every is not None and args.upkeep_every <= 0:
        print("cdc-lake build: --upkeep-every takes a positive number of seconds", file=sys.stderr)
        return 2
    if args.tests_every is not None and (args.tests_every <= 0 or args.every is None):
        print("cdc-lake build: --tests-every takes a positive number of seconds, with --every", file=sys.stderr)
        return 2
    if args.tests_every is not None and {"-s", "--select", "--selector", "--exclude"} & set(dbt_args):
        print("cdc-lake build: --tests-every chooses each build's selection; leave out dbt's --select, "
              "--selector and --exclude", file=sys.stderr)
        return 2
    if args.latest_max_files is not None and (args.upkeep_every is None or args.latest_max_files < 1):
        print("cdc-lake build: --latest-max-files takes a positive number, with --upkeep-every", file=sys.stderr)
        return 2
    if args.exclude_tables and not args.add_tables:
        print("cdc-lake build: --exclude-tables goes with --add-tables", file=sys.stderr)
        return 2
    if args.add_tables and dbt_target(dbt_args) != "local":
        print("cdc-lake build: --add-tables reads the lake in this process's Spark session: target local only",
              file=sys.stderr)
        return 2
    if dbt_target(dbt_args) == "local":
        from cdc_lake.spark import get_spark

        # dbt's session method takes this session. Iceberg's catalog caches each table it loaded
        # (by default until 30 s without a use), so a session that lives across builds would keep
        # reading the snapshot it first saw while other processes land, compact and expire. A 1 s
        # expiry: entries lapse in the gap between two builds (TURN_GAP), while the references to
        # one table within a statement still resolve to one snapshot (with no cache at all, two
        # references could straddle a landing's commit).
        get_spark("cdc-lake build", {"spark.sql.catalog.spark_catalog.cache.expiration-interval-ms": "1000"})
    log = Path(args.log) if args.log else None
    upkeep = None
    if args.upkeep_every:
        from cdc_lake.env import lake_dir, model_schema

        upkeep = Upkeep(args.upkeep_every, args.expire_args, lake_dir() / f"upkeep-{model_schema()}.last")
    patterns = None
    if args.add_tables:
        from cdc_lake.add_tables import TablePatterns

        patterns = TablePatterns(tuple(args.add_tables), tuple(args.exclude_tables or ()))
    return Schedule(project_dir, dbt_args, args.every, args.times, log, upkeep=upkeep,
                    latest_max_files=args.latest_max_files, tests_every=args.tests_every,
                    table_patterns=patterns).run()
