"""One benchmark size, end to end, in one Spark session.

Order of work (every timed step is repeated `runs` times; the report takes medians):

1. land the history (timed once), and read its kcat files bare (the landing's floor);
2. (a) the limit: bare `from_json` of the raw values into the noop sink;
3. full builds: (b) `dbt run -s +cdc_changelog --full-refresh` as two commands, staging
   (`-s +int_changes_unioned`) then `-s cdc_changelog` (with cdc_schema_changes and cdc_snapshots,
   which the marts read); (c) `dbt run -s cdc_current cdc_history --full-refresh`; the remaining
   models; `dbt test`: the full build is the sum, each part has its own figure;
4. (e) the peer, full, in the same repetition: its view and a first `dbt snapshot` of the peer
   project over the staging just built (the peer's full cost = staging + view + snapshot);
4b. (f) with tests on, a scheduled `dbt build` after the full build (it runs every data test and
   records their passes), then `dbt build` with nothing landed (the no-op build), then the first
   SMALL_BATCH records of the increment (the next changes of each format's stream) landed and
   built, each build from the state after the no-op builds; the model tables are put back after;
5. land the increment (+1 % new changes, +1 % late changes to old keys), timed once (records the
   small batch already landed are skipped: a landing is idempotent);
6. (d) incremental `dbt run` and incremental `dbt build`, each time from the same starting
   point: every model table is put back to its Iceberg snapshot after step 4 first;
7. (e) the peer, +1 %: staging incremental plus a second `dbt snapshot`, from the same point;
8. counts: versions in cdc_history (and the generator's truth) against versions the peer kept.

The fixed start-up (JVM, Spark session, Derby, dbt) is measured in separate processes
(see startup.py); `dbt_noop` is the in-process per-invocation cost of a trivial dbt command,
subtracted from the figures reported "net".
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdc_lake.bench import jobs, limit, workload, write_modes
from cdc_lake.bench.dbt import PEER_PROJECT_DIR, DbtProject, compiled_code, node_seconds
from cdc_lake.bench.probes import DriverProbe, Measurement
from cdc_lake.env import PROJECT_DIR
from cdc_lake.landing import land

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CHANGELOG = "+cdc_changelog"
MARTS_FROM_CHANGELOG = ["cdc_current", "cdc_history"]
# cdc_current and cdc_history also read the DDL (table resets) and cdc_snapshots (re-baselining
# snapshots): both are built with the change log, from the staging already built
SCHEMA_CHANGES = "+cdc_schema_changes"
SNAPSHOTS = "cdc_snapshots"
STAGING = "+int_changes_unioned"
PEER_SNAPSHOT = "peer_row_history"
KEYS = "source_system, database_name, table_name, row_key"
# the small batch of step (f): about this many changes, split over the formats like the increment
SMALL_BATCH = 1_000


@dataclass
class SizeResult:
    changes: int
    label: str
    runs: int
    started_at: str
    workload: dict = field(default_factory=dict)
    steps: dict[str, list[dict]] = field(default_factory=dict)
    nodes: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    # Spark jobs, stages, tasks and Iceberg files per dbt node, of each step's first repetition
    profile: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    peer: dict[str, int] = field(default_factory=dict)
    limit_expressions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, m: Measurement, nodes: dict[str, float] | None = None) -> None:
        self.steps.setdefault(m.label, []).append(m.as_dict())
        if nodes is not None:
            self.nodes.setdefault(m.label, []).append(nodes)


def _log(text: str) -> None:
    stamp = dt.datetime.now().strftime("%H:%M:%S")
    print(f"[bench {stamp} load {os.getloadavg()[0]:.1f}] {text}", file=sys.stderr, flush=True)


class SizeBench:
    def __init__(
        self, spark: SparkSession, work_dir: Path, schema: str, runs: int, peer: bool = True, tests: bool = True
    ) -> None:
        self.spark = spark
        self.work_dir = work_dir
        self.runs = runs
        self.with_peer = peer
        self.with_tests = tests
        self.schema = schema
        self.raw_schema = f"{schema}_raw"
        self.peer_schema = f"{schema}_peer"
        self.modes_schema = f"{schema}_write_modes"
        self.probe = DriverProbe(spark)
        self.project = DbtProject(PROJECT_DIR, work_dir / "target", schema, self.raw_schema)
        self.result: SizeResult | None = None  # what was measured so far, kept when a step fails
        self.peer_project = DbtProject(PEER_PROJECT_DIR, work_dir / "target_peer", schema, self.raw_schema)

    # -- helpers -----------------------------------------------------------------------------

    def _timed(self, result: SizeResult, label: str, action: Callable[[], Any], rows: int | None = None) -> Any:
        self.project.statements = self.peer_project.statements = 0
        with self.probe.measure(label) as m, jobs.tagged(self.spark) as counts:
            outcome = action()
        m.rows = rows
        m.statements = (self.project.statements + self.peer_project.statements) or None
        nodes = node_seconds(outcome) if outcome is not None and hasattr(outcome, "result") else None
        result.add(m, nodes)
        if nodes and label not in result.profile:
            result.profile[label] = counts.per_node(self.schema)
        _log(f"{label}: {m.seconds:.1f}s (heap peak {m.heap_peak_mb:.0f} MB, rss {m.rss_peak_mb:.0f} MB)")
        return outcome

    def _scalar(self, sql: str) -> int:
        return int(self.spark.sql(sql).first()[0] or 0)

    def _tables(self, schema: str) -> list[str]:
        if not self.spark.catalog.databaseExists(schema):
            return []
        return [t.name for t in self.spark.catalog.listTables(schema) if t.tableType != "VIEW" and not t.isTemporary]

    def _snapshot_ids(self, schemas: list[str]) -> dict[str, int | None]:
        ids: dict[str, int | None] = {}
        for schema in schemas:
            for table in self._tables(schema):
                row = self.spark.sql(f"select snapshot_id from {schema}.{table}.refs where name = 'main'").first()
                ids[f"{schema}.{table}"] = None if row is None else int(row[0])
        return ids

    def _restore(self, ids: dict[str, int | None]) -> None:
        """Put every table back to the recorded Iceberg snapshot (empty if it had none). Seeds and
        `table` models are replaced whole by every run (`create or replace`, a new snapshot line):
        they need no restoring, and their recorded snapshot no longer exists."""
        current = self._snapshot_ids(sorted({table.split(".")[0] for table in ids}))
        for table, snapshot in ids.items():
            if current.get(table) == snapshot:
                continue
            known = self.spark.sql(f"select snapshot_id from {table}.snapshots").collect()
            if snapshot is not None and snapshot not in {int(row[0]) for row in known}:
                continue
            if snapshot is None:
                self.spark.sql(f"delete from {table}")
            else:
                self.spark.sql(
                    f"call spark_catalog.system.set_current_snapshot(table => '{table}', snapshot_id => {snapshot})"
                )

    def _drop_schemas(self) -> None:
        for schema in (self.peer_schema, self.schema, self.raw_schema, self.modes_schema):
            self.spark.sql(f"drop database if exists {schema} cascade")
        # dbt-spark stages an Iceberg snapshot in a view without schema (so in `default`); a run that
        # failed leaves it, and the next snapshot cannot replace it
        self.spark.sql(f"drop view if exists default.{PEER_SNAPSHOT}__dbt_tmp")

    # -- phases ------------------------------------------------------------------------------

    def _land(self, result: SizeResult, wl: workload.Workload, part: str) -> None:
        os.environ["CDC_LAKE_RAW_SCHEMA"] = self.raw_schema
        records = wl.history_records if part == "history" else wl.increment_records

        def action() -> None:
            for f in wl.formats:
                path = f.history_file if part == "history" else f.increment_file
                land(self.spark, f.fmt, [path])

        self._timed(result, f"land_{part}", action, rows=records)

    def _file_read(self, result: SizeResult, wl: workload.Workload) -> None:
        """The landing's floor: a bare Spark read of the history's kcat files (limit.read_files)."""
        paths = [str(f.history_file) for f in wl.formats]
        for _ in range(self.runs):
            self._timed(result, "read_history_files", lambda: limit.read_files(self.spark, paths), wl.history_records)

    def _limit(self, result: SizeResult, wl: workload.Workload) -> None:
        inline = limit.schemas_inline_sql([f.fmt for f in wl.formats])
        [compiled] = compiled_code(self.project.invoke("compile", "--inline", inline)).values()
        expressions = limit.limit_expressions(compiled)
        result.limit_expressions = expressions
        raw_tables = {f.fmt: f"{self.raw_schema}.raw_{f.fmt}" for f in wl.formats}
        rows = sum(self._scalar(f"select count(*) from {t}") for t in raw_tables.values())
        result.counts["raw_history"] = rows
        for _ in range(self.runs):
            self._timed(result, "limit", lambda: limit.run_limit(self.spark, raw_tables, expressions), rows)

    def _full(self, result: SizeResult) -> None:
        """(b) in two commands, staging then the change log (the peer needs the same staging), (c), the
        remaining models, `dbt test`, and the peer's view and first snapshot over that staging."""
        raw = result.counts["raw_history"]
        for _ in range(self.runs):
            self._timed(
                result, "staging_full", lambda: self.project.invoke("run", "-s", STAGING, "--full-refresh"), raw
            )
            self._timed(
                result,
                "changelog_only_full",
                lambda: self.project.invoke(
                    "run", "-s", "cdc_changelog", SCHEMA_CHANGES, SNAPSHOTS, "--exclude", STAGING, "--full-refresh"
                ),
            )
            self._timed(
                result,
                "current_history_full",
                lambda: self.project.invoke("run", "-s", *MARTS_FROM_CHANGELOG, "--full-refresh"),
            )
            self._timed(
                result,
                "other_models_full",
                lambda: self.project.invoke(
                    "run", "--full-refresh", "--exclude", CHANGELOG, SCHEMA_CHANGES, SNAPSHOTS, *MARTS_FROM_CHANGELOG
                ),
            )
            if self.with_tests:
                self._timed(result, "tests_full", lambda: self.project.invoke("test"))
            if self.with_peer:
                self.spark.sql(f"drop database if exists {self.peer_schema} cascade")
                self._timed(result, "peer_view", lambda: self.peer_project.invoke("run"))
                self._timed(result, "peer_snapshot_full", lambda: self.peer_project.invoke("snapshot"))
        result.counts["changelog"] = self._scalar(f"select count(*) from {self.schema}.cdc_changelog")
        result.counts["current"] = self._scalar(f"select count(*) from {self.schema}.cdc_current")
        result.counts["history"] = self._scalar(f"select count(*) from {self.schema}.cdc_history")
        if self.with_peer:
            result.peer["versions_full"] = self._scalar(
                f"select count(*) from {self.peer_schema}.{PEER_SNAPSHOT} where not is_deleted"
            )

    def _incremental(self, result: SizeResult, start: dict[str, int | None]) -> None:
        increment = result.counts["raw_increment"]
        for _ in range(self.runs):
            self._restore(start)
            self._timed(result, "incremental_run", lambda: self.project.invoke("run"), increment)
        for _ in range(self.runs if self.with_tests else 0):
            self._restore(start)
            self._timed(result, "incremental_build", lambda: self.project.invoke("build"), increment)

    def _scheduled(self, result: SizeResult, wl: workload.Workload, start: dict[str, int | None]) -> None:
        """(f): what a schedule pays with nothing new, and for a small batch, at this history size."""
        if not self.with_tests:
            return
        self._timed(result, "build_after_full", lambda: self.project.invoke("build"))
        for _ in range(self.runs):
            self._timed(result, "noop_build", lambda: self.project.invoke("build"))
        quiet = self._snapshot_ids([self.schema])
        batch = self.work_dir / "small_batch"
        batch.mkdir(exist_ok=True)
        paths: list[tuple[str, Path]] = []
        records = 0
        for f in wl.formats:
            share = max(1, round(SMALL_BATCH * f.increment_records / max(wl.increment_records, 1)))
            with open(f.increment_file, encoding="utf-8") as source:
                lines = [line for _, line in zip(range(share), source, strict=False)]
            path = batch / f"{f.fmt}.jsonl"
            path.write_text("".join(lines), encoding="utf-8")
            paths.append((f.fmt, path))
            records += len(lines)
        result.counts["raw_small_batch"] = records
        self._timed(result, "land_small_batch", lambda: [land(self.spark, fmt, [str(p)]) for fmt, p in paths], records)
        for _ in range(self.runs):
            self._restore(quiet)
            self._timed(result, "small_batch_build", lambda: self.project.invoke("build"), records)
        self._restore(start)

    def _peer_incremental(self, result: SizeResult, start: dict[str, int | None]) -> None:
        for _ in range(self.runs):
            self._restore(start)
            self._timed(result, "peer_staging_incremental", lambda: self.project.invoke("run", "-s", STAGING))
            self._timed(result, "peer_snapshot_incremental", lambda: self.peer_project.invoke("snapshot"))

    def _versions(self, result: SizeResult, wl: workload.Workload) -> None:
        """Versions each side keeps after the increment, and how many of cdc_history's the peer lacks."""
        image = "to_json(array_sort(map_entries(image)))"
        result.counts["changelog_after_increment"] = self._scalar(f"select count(*) from {self.schema}.cdc_changelog")
        result.counts["history_after_increment"] = self._scalar(f"select count(*) from {self.schema}.cdc_history")
        result.counts["truth_versions"] = wl.truth_total("versions")
        result.counts["truth_changes"] = wl.truth_total("changes")
        if not self.with_peer:
            return
        result.peer["versions_incremental"] = self._scalar(
            f"select count(*) from {self.peer_schema}.{PEER_SNAPSHOT} where not is_deleted"
        )
        result.peer["versions_in_history"] = self._scalar(
            f"""
            select count(*) from (
                select {KEYS}, image_text from {self.peer_schema}.{PEER_SNAPSHOT} where not is_deleted
                intersect all
                select {KEYS}, {image} from {self.schema}.cdc_history
            ) as kept
            """
        )
        result.peer["lost_versions"] = result.counts["history_after_increment"] - result.peer["versions_in_history"]

    def _write_modes(self, result: SizeResult) -> None:
        """Copy-on-write vs merge-on-read: a scattered 1 % MERGE into a cdc_current-shaped table as
        large as the change log (see write_modes.py)."""
        rows = max(result.counts["changelog"], 1_000)
        result.counts["write_mode_rows"] = rows
        write_modes.measure(
            self.spark, self.modes_schema, rows, self.runs,
            lambda label, action: self._timed(result, label, action, rows=rows),
        )  # fmt: skip

    def _dbt_noop(self, result: SizeResult) -> None:
        for _ in range(self.runs):
            self._timed(result, "dbt_noop", lambda: self.project.invoke("run", "-s", "stg_raw__records"))

    # -- all of it -----------------------------------------------------------------------------

    def run(self, wl: workload.Workload) -> SizeResult:
        result = self.result = SizeResult(
            changes=wl.changes,
            label=workload.size_label(wl.changes),
            runs=self.runs,
            started_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            workload=wl.as_dict(),
        )
        self._drop_schemas()
        _log(f"{result.label}: landing {wl.history_records:,} history records")
        self._land(result, wl, "history")
        self._file_read(result, wl)
        self._limit(result, wl)  # its `dbt compile` also warms dbt up (full parse into the bench's target)
        self.project.invoke("seed")  # the typed per-table views read the seeds; not timed
        self._dbt_noop(result)
        self._full(result)
        self._write_modes(result)
        start = self._snapshot_ids([self.schema, self.peer_schema])
        self._scheduled(result, wl, start)
        _log(f"{result.label}: landing {wl.increment_records:,} increment records")
        self._land(result, wl, "increment")
        result.counts["raw_increment"] = wl.increment_records
        self._incremental(result, start)
        if self.with_peer:
            self._peer_incremental(result, start)
            # leave cdc_* at the post-increment state too, for the version counts
            self.project.invoke("run", "--exclude", STAGING)
        self._versions(result, wl)
        return result


class SizeFailed(Exception):
    """A step failed; `partial` holds every measurement taken before it."""

    def __init__(self, partial: SizeResult, cause: BaseException) -> None:
        super().__init__(f"{partial.label}: {cause!r}")
        self.partial = partial


def run_size(spark: SparkSession, wl: workload.Workload, work_dir: Path, runs: int, peer: bool = True,
             tests: bool = True, schema: str = "bench", keep_tables: bool = False) -> SizeResult:  # fmt: skip
    bench = SizeBench(spark, work_dir, schema, runs, peer, tests)
    started = time.monotonic()
    try:
        result = bench.run(wl)
    except Exception as exc:
        if bench.result is None:
            raise
        bench.result.notes.append(f"failed: {exc!r}")
        raise SizeFailed(bench.result, exc) from exc
    finally:
        if not keep_tables:
            bench._drop_schemas()
    _log(f"{wl.changes:,} changes done in {time.monotonic() - started:.0f}s")
    return result
