"""dbt in-process for the benchmark: the cdc_lake project and the dbt-snapshot peer project.

dbt's `session` method reuses the Spark session this process already runs, so a timed dbt command
costs dbt's own per-invocation work (manifest load with partial parsing, the on-run-start hook,
relation listing) plus the SQL, never the JVM start. Each project gets its own target path under
the bench's work folder, so the bench never rewrites the checkout's `target/`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdc_lake.env import PROJECT_DIR
from cdc_lake.testing.harness import invoke_dbt

PEER_PROJECT_DIR = PROJECT_DIR / "bench" / "peer_snapshot"


@dataclass
class DbtProject:
    project_dir: Path
    target_path: Path
    schema: str
    raw_schema: str
    # statements the last command sent to Spark: dbt's SQLQuery events, one per statement it runs
    # (a hook, a catalog read, a write; a noop statement sends none)
    statements: int = 0

    def invoke(self, *args: str) -> Any:
        """Run a dbt command; returns dbt's result object, raises DbtFailure when it fails."""
        os.environ["CDC_LAKE_SCHEMA"] = self.schema
        os.environ["CDC_LAKE_RAW_SCHEMA"] = self.raw_schema
        self.statements = 0

        def count(event: Any) -> None:
            if event.info.name == "SQLQuery":
                self.statements += 1

        return invoke_dbt(self.project_dir, [*args, "--target-path", str(self.target_path), "--quiet"],
                          callbacks=[count])


def node_results(result: Any) -> list[Any]:
    inner = getattr(result, "result", None)
    return list(getattr(inner, "results", None) or [])


def node_seconds(result: Any) -> dict[str, float]:
    """Seconds per node of a dbt run/build/test (threads overlap, so they may sum above the wall time)."""
    return {r.node.name: round(float(r.execution_time or 0.0), 3) for r in node_results(result)}


def compiled_code(result: Any) -> dict[str, str]:
    """Compiled SQL per node of a `dbt compile`."""
    return {r.node.name: r.node.compiled_code for r in node_results(result) if getattr(r.node, "compiled_code", None)}
