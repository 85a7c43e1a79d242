"""What each dbt model asks of Spark and Iceberg: jobs, stages, tasks and files written.

While a dbt command runs, every query dbt-spark sends is tagged with a Spark job group named after
the node that sent it (taken from dbt's query comment, which carries the node's unique id), in the
thread that runs it: PySpark pins each Python thread to a JVM thread, so the jobs a query starts,
including those of the later `fetchall`, belong to that group. Spark's status tracker then gives
each group's jobs and their stages. Files are read from the Iceberg snapshots the node's table
committed during the command (`added-data-files` and `added-delete-files` of their summaries).
The tagging costs one py4j call per query.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# dbt's default query comment: /* {"app": "dbt", ..., "node_id": "model.cdc_lake.cdc_history"} */
NODE_ID = re.compile(r'"node_id":\s*"([^"]+)"')
# Spark keeps this many jobs and stages for the status tracker (defaults 1000): a full 5M build
# starts a few thousand
RETAINED = {"spark.ui.retainedJobs": "20000", "spark.ui.retainedStages": "20000"}
_invocations = itertools.count()


class JobCounts:
    """Spark work and Iceberg files per dbt node of one dbt command (see `tagged`)."""

    def __init__(self, spark: SparkSession, prefix: str) -> None:
        self.spark = spark
        self.prefix = prefix
        self.nodes: set[str] = set()
        self.started = dt.datetime.now()

    def group(self, node_id: str) -> str:
        self.nodes.add(node_id)
        return f"{self.prefix}:{node_id}"

    def per_node(self, schema: str) -> dict[str, dict[str, int]]:
        """{model name: {jobs, stages, tasks, data_files, delete_files}} for the nodes that ran."""
        tracker = self.spark.sparkContext.statusTracker()
        counts: dict[str, dict[str, int]] = {}
        for node_id in sorted(self.nodes):
            kind, _, name = node_id.split(".", 2)
            jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(self.group(node_id))]
            stages = [tracker.getStageInfo(s) for job in jobs if job for s in job.stageIds]
            ran = [s for s in stages if s and s.numCompletedTasks > 0]  # skipped stages ran no task
            entry = {
                "jobs": len([j for j in jobs if j]),
                "stages": len(ran),
                "tasks": sum(s.numCompletedTasks for s in ran),
            }
            if kind == "model":
                entry.update(self._files(schema, name.split(".")[-1]))
            counts[name.split(".")[-1] if kind == "model" else name] = entry
        return counts

    def _files(self, schema: str, table: str) -> dict[str, int]:
        """Data and delete files the table's snapshots committed since the command started."""
        catalog = self.spark.catalog
        if not catalog.tableExists(f"{schema}.{table}") or catalog.getTable(f"{schema}.{table}").tableType == "VIEW":
            return {"data_files": 0, "delete_files": 0}
        since = self.started.strftime("%Y-%m-%d %H:%M:%S.%f")
        row = self.spark.sql(
            f"select sum(cast(summary['added-data-files'] as int)), sum(cast(summary['added-delete-files'] as int)) "
            f"from {schema}.{table}.snapshots where committed_at >= timestamp'{since}'"
        ).first()
        return {"data_files": int(row[0] or 0), "delete_files": int(row[1] or 0)}


@contextmanager
def tagged(spark: SparkSession) -> Iterator[JobCounts]:
    """Tag every query dbt-spark's session cursor runs in the block with its node's job group."""
    from dbt.adapters.spark import session

    counts = JobCounts(spark, f"bench{next(_invocations)}")
    execute: Callable[..., Any] = session.Cursor.execute

    def tagging_execute(cursor: Any, sql: str, *parameters: Any) -> Any:
        found = NODE_ID.search(sql[:2000])
        if found:
            group = counts.group(found.group(1))
            spark.sparkContext.setJobGroup(group, group)
        return execute(cursor, sql, *parameters)

    session.Cursor.execute = tagging_execute
    try:
        yield counts
    finally:
        session.Cursor.execute = execute
