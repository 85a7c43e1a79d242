"""Test and demo harness: one Spark session, real `cdc-lake land` and real `dbt` in-process.

dbt's `session` method calls `SparkSession.builder.getOrCreate()`, which returns the session this
process already runs, so landing, dbt and assertions share one JVM (start-up paid once). Each
`Lake` works in its own schemas, which keeps test modules apart inside that one lake.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from cdc_lake.env import PROJECT_DIR
from cdc_lake.landing import LandingReport, land
from cdc_lake.tables import SEED_PATH, seed_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


# What a copy of the dbt project needs (see `copy_project`).
PROJECT_PARTS = ["dbt_project.yml", "selectors.yml", "models", "macros", "seeds", "tests", "docs"]


def private_lake_env(lake_dir: Path) -> dict[str, str]:
    """This process's environment for commands on a lake of their own: no CDC_LAKE_* setting of
    the caller's (schema, metastore address) carried over."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CDC_LAKE")}
    env.update(CDC_LAKE_DIR=str(lake_dir), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    return env


def run_checked(args: Sequence[str], env: dict[str, str]) -> str:
    """Run a command line in the project folder; its stdout, or an assertion error with its output."""
    done = subprocess.run(list(args), env=env, cwd=PROJECT_DIR, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def invoke_dbt(
    project_dir: Path, args: Sequence[str], expect_success: bool = True, callbacks: Sequence[Any] = ()
) -> Any:
    """Run a dbt command in-process on `project_dir` (dbt's `session` method reuses this process's
    Spark session); returns dbt's result, raises DbtFailure naming the failed nodes unless told not to.
    `callbacks` receive every event dbt fires (dbtRunner's)."""
    from dbt.cli.main import dbtRunner

    cwd = os.getcwd()
    os.chdir(project_dir)
    try:
        result = dbtRunner(callbacks=list(callbacks)).invoke([*args, "--project-dir", str(project_dir)])
    finally:
        os.chdir(cwd)
    if expect_success and not result.success:
        results = getattr(result.result, "results", None) or []
        failures = [
            f"{r.node.name if hasattr(r, 'node') else r.unique_id}: {r.status}: {r.message}"
            for r in results
            if str(r.status) not in ("success", "pass", "skipped")
        ]
        raise DbtFailure(f"dbt {' '.join(args)} failed: {result.exception or failures}")
    return result



def table_options_parse_error(options: object) -> str:
    """The message of the error `dbt parse` gives with `cdc_table_options: options` ('' if none);
    in a target folder of its own, the project's left as it is."""
    with tempfile.TemporaryDirectory(prefix="cdc_lake_parse_") as target:
        result = invoke_dbt(
            PROJECT_DIR,
            ["parse", "--target-path", target, "--no-partial-parse",
             "--vars", json.dumps({"cdc_table_options": options})],
            expect_success=False,
        )
    return "" if result.success else str(result.exception)

# The typed per-table models that `cdc-lake add-table` writes (`<database>__<table>_current` and
# `_history` in models/marts/tables), as a dbt selector: not the folder's column views beside them.
TYPED_TABLES = "marts.tables.*__*"

# What a batched lake's builds between its first and its last leave out (BatchedLake.run).
BETWEEN_BUILDS_LEFT_OUT = (
    "resource_type:seed", "cdc_source_columns", "cdc_typed_columns", "marts.monitoring", TYPED_TABLES,
)

# dbt commands that take `--vars`.
VARS_COMMANDS = {
    "build", "compile", "docs", "list", "ls", "parse", "run", "run-operation", "seed", "show", "snapshot", "test",
}  # fmt: skip


def split_vars(args: Sequence[str]) -> tuple[list[str], str | None]:
    """`args` of a dbt command without their `--vars` (given as `--vars X` or `--vars=X`), and the
    text of those vars (None when not given)."""
    rest: list[str] = []
    given: str | None = None
    items = iter(args)
    for arg in items:
        if arg == "--vars":
            given = next(items, "")
        elif arg.startswith("--vars="):
            given = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return rest, given


def with_var(args: Sequence[str], name: str, value: Any) -> list[str]:
    """`args` of a dbt command with one more var, merged into the `--vars` they give (YAML or JSON,
    either spelling); a value the args set themselves wins."""
    if not args or args[0] not in VARS_COMMANDS:
        return list(args)
    rest, given = split_vars(args)
    return [*rest, "--vars", json.dumps({name: value, **(yaml.safe_load(given or "") or {})})]


def copy_project(target: Path) -> Path:
    """Copy the dbt project into `target`, for tests that write into it (e.g. `cdc-lake add-table`);
    point `Lake.project_dir` at the copy."""
    for part in PROJECT_PARTS:
        source = PROJECT_DIR / part
        if source.is_dir():
            shutil.copytree(source, target / part, symlinks=True)
        elif source.exists():
            shutil.copy2(source, target / part)
    return target


class DbtFailure(AssertionError):
    """A dbt command in the harness did not succeed."""


def kcat_lines(
    values: Iterable[str | None],
    topic: str,
    partition: int = 0,
    start_offset: int = 0,
    keys: Iterable[str | None] | None = None,
) -> list[str]:
    """Wrap Kafka values (and optional keys) as the JSON lines `kcat -C -J` prints."""
    key_list = list(keys) if keys is not None else None
    lines = []
    for i, value in enumerate(values):
        record = {
            "topic": topic,
            "partition": partition,
            "offset": start_offset + i,
            "tstype": "create",
            "ts": 1_700_000_000_000 + i,
            "broker": 0,
            "key": key_list[i] if key_list is not None else None,
            "payload": value,
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    return lines


def kcat_topics(path: Path) -> set[str]:
    """The topics named in a file of kcat JSON lines (lines that are not JSON objects name none;
    landing tests feed those, and bytes that are not UTF-8, on purpose)."""
    topics = set()
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("topic"), str):
            topics.add(record["topic"])
    return topics


def merge_vars(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One `--vars` for several test modules' builds: mappings are merged key by key, lists joined;
    two modules giving one setting different values cannot share a build (ValueError)."""
    merged: dict[str, Any] = {}
    for part in parts:
        for name, value in part.items():
            if name not in merged:
                merged[name] = value
            elif isinstance(value, dict) and isinstance(merged[name], dict):
                clash = [k for k in value if k in merged[name] and merged[name][k] != value[k]]
                if clash:
                    raise ValueError(f"var {name}: different values for {clash}")
                merged[name] = {**merged[name], **value}
            elif isinstance(value, list) and isinstance(merged[name], list):
                merged[name] = merged[name] + [v for v in value if v not in merged[name]]
            elif merged[name] != value:
                raise ValueError(f"var {name}: {merged[name]!r} and {value!r}")
    return merged


class Lake:
    """A pair of schemas (raw + models) in the embedded lake, with land / dbt / query helpers."""

    def __init__(self, spark: SparkSession, name: str) -> None:
        self.spark = spark
        self.schema = name
        self.raw_schema = f"{name}_raw"
        self._tmp = Path(tempfile.mkdtemp(prefix=f"cdc_lake_{name}_"))
        # dbt runs this project; a test may point it at a copy it is free to edit
        self.project_dir = PROJECT_DIR
        # the Kafka topics landed through `land`, when asked for (SharedLake keeps test modules
        # apart by them; reading them costs a pass over the landed file)
        self.landed_topics: set[str] | None = None
        # landings held back to be made together (SharedLake.deferred_landings), when not None
        self.deferred: list[tuple[str, str, Path, bool, str | None, int]] | None = None
        self.landing_owner = ""  # the module whose records `land` is given now (for `deferred`)
        # data tests read whole tables (var cdc_check_all), not the last batch a scheduled build
        # checks: a test that builds in steps then asserts on `dbt test` means every row; a test of
        # the batch scope itself sets this to False
        self.check_all = True

    def _activate(self) -> None:
        os.environ["CDC_LAKE_SCHEMA"] = self.schema
        os.environ["CDC_LAKE_RAW_SCHEMA"] = self.raw_schema

    def land(
        self,
        fmt: str,
        source: str | Path | Sequence[str],
        raw_values: bool = False,
        topic: str | None = None,
        partition: int = 0,
    ) -> LandingReport:
        """Land a file, or a list of lines (written to a temporary file first)."""
        self._activate()
        if isinstance(source, (str, Path)) and Path(source).exists():
            path = Path(source)
        else:
            path = self._tmp / f"batch_{len(list(self._tmp.iterdir()))}.jsonl"
            path.write_text("".join(line + "\n" for line in source), encoding="utf-8")
        if self.landed_topics is not None:
            if raw_values and not topic:
                # the landing would name the topic after the file; a shared lake needs it said
                raise ValueError("a shared lake's raw-value landing names its topic")
            self.landed_topics |= {topic} if raw_values else kcat_topics(path)
        if self.deferred is not None:
            self.deferred.append((self.landing_owner, fmt, path, raw_values, topic, partition))
            return LandingReport(fmt)
        return land(self.spark, fmt, [str(path)], raw_values=raw_values, topic=topic, partition=partition)

    def dbt(self, *args: str, expect_success: bool = True) -> Any:
        """Run a dbt command in-process against this lake's schemas; returns dbt's result."""
        self._activate()
        args = with_var(args, "cdc_check_all", self.check_all)
        return invoke_dbt(self.project_dir, args, expect_success=expect_success)

    def data_tests(self, *selection: str, check_all: bool) -> dict[str, Any]:
        """The results of `dbt test --select <selection>` by test name, run with or without
        `cdc_check_all` whatever this lake's setting (which is left as it was)."""
        kept = self.check_all
        self.check_all = check_all
        try:
            result = self.dbt("test", "--select", *selection, expect_success=False)
        finally:
            self.check_all = kept
        return {r.node.name: r for r in result.result.results if str(r.node.resource_type) == "test"}

    def build(
        self, *args: str, unit_tests: bool = False, data_tests: bool = True, typed_tables: bool = True,
        exclude: Sequence[str] = (),
    ) -> Any:
        """`dbt build`; dbt unit tests (SQL logic on fixed inputs, independent of the lake's data) are
        left out unless asked for, since test_dbt_unit_tests runs them once for the whole suite.
        `data_tests=False` builds seeds and models only: for the steps of a multi-build scenario
        before the build whose data tests it keeps (on a few records the tests took 44 of 108
        node-seconds of a build). `typed_tables=False` leaves out the typed per-table models
        (TYPED_TABLES) and their tests: for a lake whose records hold none of their source
        tables, where they would build and test empty views. `exclude`: more selectors to leave out."""
        excluded = list(exclude) + [
            selector
            for selector, kept in (
                ("test_type:unit", unit_tests), ("test_type:data", data_tests), (TYPED_TABLES, typed_tables)
            )
            if not kept
        ]
        if excluded and "--exclude" not in args:
            args = (*args, "--exclude", *excluded)
        result = self.dbt("build", *args)
        if not typed_tables:
            self._check_no_typed_table_rows()
        return result

    def _check_no_typed_table_rows(self) -> None:
        """A build without the typed models must not leave untested rows they would type: none of
        the change log's tables may be one of seeds/cdc_tables.csv."""
        typed = {(row["database_name"], row["table_name"]) for row in seed_rows(self.project_dir / SEED_PATH)}
        rows = self.rows("select distinct database_name, table_name from {schema}.cdc_changelog")
        held = typed & {(r["database_name"], r["table_name"]) for r in rows}
        if held:
            raise AssertionError(f"built with typed_tables=False, but the lake holds typed tables {sorted(held)}")

    def rows(self, query: str) -> list[dict[str, Any]]:
        """Run Spark SQL; `{schema}` and `{raw_schema}` are replaced by this lake's schemas."""
        sql = query.format(schema=self.schema, raw_schema=self.raw_schema)
        return [row.asDict(recursive=True) for row in self.spark.sql(sql).collect()]

    def count(self, table: str) -> int:
        return int(self.rows(f"select count(*) as n from {{schema}}.{table}")[0]["n"])

    def every_column(self, table: str) -> list[str]:
        """All rows of a model table, every column but the build watermark, as sorted JSON lines
        (to compare a table column by column, e.g. before and after a full refresh)."""
        rows = self.rows(f"select * from {{schema}}.{table}")
        return sorted(
            json.dumps({k: v for k, v in r.items() if k != "last_landing_seq"}, sort_keys=True, default=str)
            for r in rows
        )

    def snapshot_id(self, table: str) -> int | None:
        """Current Iceberg snapshot id of a model table (changes whenever the table is written)."""
        rows = self.rows(
            f"select snapshot_id from {{schema}}.{table}.snapshots order by committed_at desc limit 1"
        )
        return rows[0]["snapshot_id"] if rows else None

    def drop(self) -> None:
        for schema in (self.schema, self.raw_schema):
            self.spark.sql(f"drop database if exists {schema} cascade")


class SharedLake:
    """Several test modules' records in one lake, built by one `dbt build` (a build costs the same
    on a few records as on a few hundred, so modules that only read what one build made share it).

    Each module lands on topics of its own, and its rows (changes, tables, records) must be its own:
    `part` gives a module a Lake whose queries read the shared tables restricted to that module's
    rows, so they see nothing else, global ones ("nothing rejected") included.
    """

    def __init__(self, spark: SparkSession, name: str) -> None:
        self.lake = Lake(spark, name)
        self.topics: dict[str, set[str]] = {}
        self._columns: dict[str, set[str]] = {}
        # the vars of the one build, which a part's `dbt test` runs with too (see LakePart.dbt)
        self.build_vars: dict[str, Any] = {}
        # where the one build's SQL is rendered (dbt's --target-path), kept for the tests that read
        # it (test_regex_safety: every pattern the build ran)
        self.target_path = self.lake._tmp / "target"
        self.started: dict[str, Any] = {}

    def run(self, modules: dict[str, Any]) -> None:
        """Land every module's records (`land_records(lake)`), then the one `dbt build` with the
        vars they need (`BUILD_VARS`, merged: two modules may not set a var differently)."""
        with self.deferred_landings():
            for name, module in sorted(modules.items()):
                self.land(name, module.land_records)
        self.build_vars = merge_vars(getattr(module, "BUILD_VARS", {}) for module in modules.values())
        # their records hold no table of the typed models (the build checks that)
        self.lake.build("--vars", json.dumps(self.build_vars), "--target-path", str(self.target_path),
                        typed_tables=False)
        self.check_tables_are_apart()
        # work a module starts once the build is done, to run beside the other tests (a module's
        # `start_after_build(shared)`; its tests read what it returned, e.g. a Future)
        self.started = {
            name: module.start_after_build(self) for name, module in modules.items()
            if hasattr(module, "start_after_build")
        }

    def land(self, module: str, land_records: Any) -> None:
        """Run a module's `land_records(lake)`; its topics must not be another module's. A module
        may land more than once (BatchedLake): its topics add up."""
        self.lake.landed_topics = landed = set()
        self.lake.landing_owner = module
        land_records(self.lake)
        for other, topics in self.topics.items():
            shared = topics & landed
            if shared and other != module:
                raise ValueError(f"{module} and {other} both land topics {sorted(shared)}")
        self.topics[module] = self.topics.get(module, set()) | landed

    @contextmanager
    def deferred_landings(self) -> Iterator[None]:
        """The modules' landings of one step, made together at its end: one `land` per format for
        the n-th landing of every module (a landing costs a Spark job and an Iceberg commit, about
        the same for a few records as for a few hundred). The modules' topics are apart, so only
        the order of a module's own landings matters, and it is kept: each of them is in a later
        landing than the one before it. A lake's `land` returns an empty report meanwhile."""
        self.lake.deferred = held = []
        try:
            yield
        finally:
            self.lake.deferred = None
        groups: dict[tuple, list[str]] = {}
        seen: dict[tuple[str, tuple], int] = {}
        for owner, fmt, path, raw_values, topic, partition in held:
            how = (fmt, raw_values, topic, partition)
            turn = seen[owner, how] = seen.get((owner, how), -1) + 1
            groups.setdefault((turn, *how), []).append(str(path))
        for (_, fmt, raw_values, topic, partition), paths in sorted(groups.items(), key=lambda g: g[0][0]):
            land(self.lake.spark, fmt, paths, raw_values=raw_values, topic=topic, partition=partition)

    def check_tables_are_apart(self) -> None:
        """A source table (source system, database, table) must come from one module's topics only:
        cdc_current and cdc_history hold a table's rows whatever topic they came from."""
        owner = {topic: module for module, topics in self.topics.items() for topic in topics}
        tables: dict[tuple, set[str]] = {}
        for row in self.lake.rows(
            "select distinct kafka_topic, source_system, database_name, table_name from {schema}.cdc_changelog "
            "union select distinct kafka_topic, source_system, database_name, table_name "
            "from {schema}.cdc_schema_changes"
        ):
            table = (row["source_system"], row["database_name"], row["table_name"])
            tables.setdefault(table, set()).add(owner[row["kafka_topic"]])
        clashes = {table: modules for table, modules in tables.items() if len(modules) > 1}
        if clashes:
            raise ValueError(f"source tables landed by more than one module: {clashes}")

    def part(self, module: str) -> LakePart:
        """The shared lake as `module` sees it: only the rows of its own topics."""
        return LakePart(self, self.topics[module])

    def columns(self, table: str) -> set[str]:
        if table not in self._columns:
            self._columns[table] = set(self.lake.spark.table(table).columns)
        return self._columns[table]


class BatchedLake(SharedLake):
    """Several test modules' scenarios landed batch by batch into one lake, with one `dbt build`
    after each batch (an incremental build of a few records costs 20-45 s whatever their number,
    so scenarios that check every incremental build share them). A module takes part with
    `BATCHES` (how many it lands), `land_batch(lake, batch)` (batch 1, 2, ...; it may land nothing
    in one) and `observe(part)` (what it checks after each build, read through its LakePart).
    dbt's data tests run on the last build only; each module checks every build by what it
    observed. Its rows, as in SharedLake, come from topics and source tables of its own."""

    def __init__(self, spark: SparkSession, name: str) -> None:
        super().__init__(spark, name)
        self.observed: dict[str, list[Any]] = {}
        self.last_build: Any = None
        self._refresh: tuple[dict[str, Any], dict[str, Any]] | None = None  # see full_refresh

    def run(self, modules: dict[str, Any]) -> None:
        """Land and build every batch of the modules' scenarios, observing each module after each build."""
        count = max(module.BATCHES for module in modules.values())
        for batch in range(1, count + 1):
            with self.deferred_landings():
                for name, module in sorted(modules.items()):
                    if batch <= module.BATCHES:
                        self.land(name, functools.partial(module.land_batch, batch=batch))
            if batch in (1, count):
                self.last_build = self.lake.build(data_tests=batch == count)
            else:
                # what the modules observe between the first and the last build is the change log,
                # the current state, history, DDL and rejects: the builds between leave out the
                # seeds (loaded by the first), the column catalogue, the typed views and the
                # monitoring views, which the last build brings up to date with everything landed
                self.lake.build(exclude=BETWEEN_BUILDS_LEFT_OUT, data_tests=False)
            for name, module in modules.items():
                if batch <= module.BATCHES:
                    self.observed.setdefault(name, []).append(module.observe(self.part(name)))
        self.check_tables_are_apart()

    def full_refresh(self, module: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """`dbt build --full-refresh`, once for every module (models only: what it is compared
        with was tested); a module's current state and history, every column, before and after."""
        if self._refresh is None:
            before = {name: self._tables(name) for name in self.topics}
            self.lake.build("--full-refresh", data_tests=False)
            self._refresh = before, {name: self._tables(name) for name in self.topics}
        return self._refresh[0][module], self._refresh[1][module]

    def _tables(self, module: str) -> dict[str, list[str]]:
        part = self.part(module)
        return {table: part.every_column(table) for table in ("cdc_current", "cdc_history")}


class LakePart(Lake):
    """A test module's part of a SharedLake: `{schema}.<table>` (and `{raw_schema}.<table>`) in its
    queries read only the rows that came from its topics, or for tables keyed by source table
    (current state, history), the rows of the source tables its topics carry. Tables with neither
    (the column types, keyed by database and table only) are read whole: a query of them names
    its own tables."""

    def __init__(self, shared: SharedLake, topics: set[str]) -> None:
        # the shared lake's session and schemas; no temporary folder or project of its own, since
        # a part neither lands nor runs dbt (Lake.__init__ would make both)
        self.spark = shared.lake.spark
        self.schema = shared.lake.schema
        self.raw_schema = shared.lake.raw_schema
        self.shared = shared
        self.topic_list = ", ".join(f"'{t}'" for t in sorted(topics))

    def restricted(self, table: str) -> str:
        """A subquery of `table` (schema-qualified) that holds only this module's rows."""
        columns = self.shared.columns(table)
        topics = f"kafka_topic in ({self.topic_list})"
        source_tables = (
            f"select source_system, database_name, table_name from {self.schema}.cdc_changelog where {topics} "
            f"union select source_system, database_name, table_name from {self.schema}.cdc_schema_changes "
            f"where {topics}"
        )
        if "kafka_topic" in columns:
            where = topics
        elif {"source_system", "database_name", "table_name"} <= columns:
            where = f"(source_system, database_name, table_name) in ({source_tables})"
        else:
            where = "true"
        return f"(select * from {table} where {where})"

    def rows(self, query: str) -> list[dict[str, Any]]:
        def restrict(match: re.Match[str]) -> str:
            schema = self.schema if match.group(1) == "schema" else self.raw_schema
            alias = match.group(3) or match.group(2)  # the query's own alias, if it gives one
            return f"{self.restricted(f'{schema}.{match.group(2)}')} as {alias}"

        return super().rows(re.sub(r"\{(schema|raw_schema)\}\.(\w+)(?:\s+as\s+(\w+))?", restrict, query))

    def land(self, *args: Any, **kwargs: Any) -> LandingReport:
        raise TypeError("a module of the shared lake lands in its land_records(lake), before the one build")

    def dbt(self, *args: str, expect_success: bool = True) -> Any:
        """`dbt test` or `dbt compile` on the shared lake, with the vars of its build: they write
        nothing, so the other modules still read what the one build made. Its tests read every module's rows (a
        data test reads whole tables): a module that damages rows on purpose to see a test fail
        restores them, and shows first that the undamaged lake passes that test, so that the
        failures it counts are its own."""
        if not args or args[0] not in ("test", "compile") or split_vars(args)[1] is not None:
            raise TypeError("the shared lake is built once: a part runs `dbt test` or `dbt compile` only (with the "
                            "build's vars); "
                            "a module that runs other dbt commands needs a lake of its own")
        return self.shared.lake.dbt(*args, "--vars", json.dumps(self.shared.build_vars), expect_success=expect_success)

    def drop(self) -> None:
        """The shared lake is dropped once, by its owner."""


def canal_item(op: str, row_id: int, name: str, es: int, message_id: int, old: dict | None = None) -> str:
    """A Canal FlatMessage of one row of shop.items."""
    return json.dumps(
        {
            "data": [{"id": str(row_id), "name": name}],
            "database": "shop",
            "es": es,
            "id": message_id,
            "isDdl": False,
            "mysqlType": {"id": "int(11)", "name": "varchar(20)"},
            "old": [old] if old else None,
            "pkNames": ["id"],
            "sql": "",
            "sqlType": {"id": 4, "name": 12},
            "table": "items",
            "ts": es + 5,
            "type": op,
        }
    )


def land_messages(lake: Lake, messages: list[dict], offset: int, topic: str = "shop") -> int:
    """Land Canal FlatMessages (dicts) as kcat lines on `topic` from Kafka offset `offset`; the next offset."""
    lines = kcat_lines([json.dumps(m) for m in messages], topic=topic, start_offset=offset)
    lake.land("canal_flat", lines)
    return offset + len(lines)
