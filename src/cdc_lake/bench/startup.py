"""The fixed start-up, measured in fresh processes with a lake of their own.

`dbt_cli_trivial`: `dbt run -s stg_raw__records` (one view, plus the on-run-start hook) from the
command line: JVM, Spark session, Derby metastore, dbt parse (partial, warm) — what every `dbt`
command pays before any work. `spark_session`: a Python process that only opens the embedded Spark
session and lists databases. A warm-up run of each comes first (it creates the Derby database and
dbt's partial-parse file) and is not counted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cdc_lake.env import PROJECT_DIR

SPARK_ONLY = "from cdc_lake.spark import get_spark; get_spark('startup').sql('show databases').collect()"


def _timed(command: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    subprocess.run(command, cwd=PROJECT_DIR, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - started


def measure(runs: int) -> dict[str, list[dict[str, float]]]:
    """Seconds (and the 1-minute load average before each run) per kind of start-up."""
    if runs < 1:
        return {}
    folder = Path(tempfile.mkdtemp(prefix="cdc_lake_bench_startup_"))
    env = {
        **os.environ,
        "CDC_LAKE_DIR": str(folder / "lake"),
        "CDC_LAKE_SCHEMA": "startup",
        "CDC_LAKE_RAW_SCHEMA": "startup_raw",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    dbt = str(Path(sys.executable).parent / "dbt")
    commands = {
        "dbt_cli_trivial": [dbt, "run", "-s", "stg_raw__records", "--target-path", str(folder / "target")],
        "spark_session": [sys.executable, "-c", SPARK_ONLY],
    }
    results: dict[str, list[dict[str, float]]] = {}
    try:
        for name, command in commands.items():
            _timed(command, env)  # warm-up
            results[name] = []
            for _ in range(runs):
                load = os.getloadavg()[0]
                results[name].append({"seconds": _timed(command, env), "load_before": load})
    finally:
        from cdc_lake.servers.metastore import MetastoreServer

        MetastoreServer.for_lake(folder / "lake").stop()  # its processes started it
        shutil.rmtree(folder, ignore_errors=True)
    return results
