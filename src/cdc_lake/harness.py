"""Test and demo harness: one Spark session, real `cdc-lake land` and real `dbt` in-process.

dbt's `session` method calls `SparkSession.builder.getOrCreate()`, which returns the session this
process already runs, so landing, dbt and assertions share one JVM (start-up paid once). Each
`Lake` works in its own schemas, which keeps test modules apart inside that one lake.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdc_lake.env import PROJECT_DIR
from cdc_lake.landing import LandingReport, land

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


# What a copy of the dbt project needs (see `copy_project`).
PROJECT_PARTS = ["dbt_project.yml", "models", "macros", "seeds", "tests", "docs"]


def invoke_dbt(project_dir: Path, args: Sequence[str], expect_success: bool = True) -> Any:
    """Run a dbt command in-process on `project_dir` (dbt's `session` method reuses this process's
    Spark session); returns dbt's result, raises DbtFailure naming the failed nodes unless told not to."""
    from dbt.cli.main import dbtRunner

    cwd = os.getcwd()
    os.chdir(project_dir)
    try:
        result = dbtRunner().invoke([*args, "--project-dir", str(project_dir)])
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


class Lake:
    """A pair of schemas (raw + models) in the embedded lake, with land / dbt / query helpers."""

    def __init__(self, spark: SparkSession, name: str) -> None:
        self.spark = spark
        self.schema = name
        self.raw_schema = f"{name}_raw"
        self._tmp = Path(tempfile.mkdtemp(prefix=f"cdc_lake_{name}_"))
        # dbt runs this project; a test may point it at a copy it is free to edit
        self.project_dir = PROJECT_DIR

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
        return land(self.spark, fmt, [str(path)], raw_values=raw_values, topic=topic, partition=partition)

    def dbt(self, *args: str, expect_success: bool = True) -> Any:
        """Run a dbt command in-process against this lake's schemas; returns dbt's result."""
        self._activate()
        return invoke_dbt(self.project_dir, args, expect_success=expect_success)

    def build(self, *args: str, unit_tests: bool = False) -> Any:
        """`dbt build`; dbt unit tests (SQL logic on fixed inputs, independent of the lake's data) are
        left out unless asked for, since test_analyst runs them once for the whole suite."""
        if not unit_tests and "--exclude" not in args:
            args = (*args, "--exclude", "test_type:unit")
        return self.dbt("build", *args)

    def rows(self, query: str) -> list[dict[str, Any]]:
        """Run Spark SQL; `{schema}` and `{raw_schema}` are replaced by this lake's schemas."""
        sql = query.format(schema=self.schema, raw_schema=self.raw_schema)
        return [row.asDict(recursive=True) for row in self.spark.sql(sql).collect()]

    def count(self, table: str) -> int:
        return int(self.rows(f"select count(*) as n from {{schema}}.{table}")[0]["n"])

    def snapshot_id(self, table: str) -> int | None:
        """Current Iceberg snapshot id of a model table (changes whenever the table is written)."""
        rows = self.rows(
            f"select snapshot_id from {{schema}}.{table}.snapshots order by committed_at desc limit 1"
        )
        return rows[0]["snapshot_id"] if rows else None

    def drop(self) -> None:
        for schema in (self.schema, self.raw_schema):
            self.spark.sql(f"drop database if exists {schema} cascade")
