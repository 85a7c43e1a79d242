"""Everyday use on the embedded default, with real processes as a user runs them: a landing, a
plain `dbt build` and a `cdc-lake sql` query at the same time on one lake (they share the lake's
metastore server), a quiet `dbt build` (no Java stack traces, a few lines per node), and the
result equal to the same records landed and built one after the other (the reference: in the test
session's warm Spark, on the module's own schemas, since three cold processes for it cost minutes).

The lake under test is a temporary CDC_LAKE_DIR whose metastore server is stopped at the end,
whatever happens (and checked to be gone). What is not under test, the small lake the build starts
from and the run that reads what landed during the build, each runs in one Python process with
dbt in-process (as `cdc-lake build` runs it): the first landing with the first run, and the last
run with the reading of its tables (a cold Spark process fewer each). Slow: several Spark
processes in a row (~10 min on a busy 2-core machine).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc_lake.env import PROJECT_DIR
from cdc_lake.servers.metastore import MetastoreServer
from cdc_lake.testing.harness import Lake

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BIN = Path(sys.executable).parent
TIMEOUT = 1800
# the landing columns differ between two lakes by design (when and in which commit a record landed)
LANDING_COLUMNS = {"landing_seq", "last_landing_seq", "landed_at"}
# what the comparison reads, cdc_current and cdc_history, and every model they read
COMPARED = ("--select", "+cdc_current")
STACK_LINE = re.compile(r"^\s+at [\w$.<>]+\(|\b\w+(Exception|Error): ", re.MULTILINE)
# One Python process on the lake, dbt in-process in its Spark session: `land FILE` lands a Canal
# file, `run SELECTOR` runs dbt on the selection, `dump` prints cdc_current's and cdc_history's
# rows as JSON lines; the steps given run in order.
STEPS = """
import json, sys
from cdc_lake.env import PROJECT_DIR
from cdc_lake.landing import land
from cdc_lake.spark import get_spark
from cdc_lake.testing.harness import invoke_dbt

spark = get_spark("everyday use")
steps = iter(sys.argv[1:])
for step in steps:
    if step == "land":
        print(land(spark, "canal_flat", [next(steps)]).summary(), flush=True)
    elif step == "run":
        invoke_dbt(PROJECT_DIR, ["run", "--select", next(steps)])
    elif step == "dump":
        for model in ("cdc_current", "cdc_history"):
            for (row,) in spark.sql(f"select to_json(struct(*)) from cdc_lake.{model}").collect():
                print(json.dumps({"model": model, "row": row}), flush=True)
    else:
        raise SystemExit(f"unknown step {step}")
"""


class LakeRun:
    """A private lake and the environment of every command run on it."""

    def __init__(self, folder: Path) -> None:
        self.dir = folder / "lake"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("CDC_LAKE", "DBT_"))}
        self.env.update(
            CDC_LAKE_DIR=str(self.dir),
            DBT_SEND_ANONYMOUS_USAGE_STATS="false",
            # dbt's target/ and logs/ per lake, so that nothing here touches the project's
            DBT_TARGET_PATH=str(folder / "target"),
            DBT_LOG_PATH=str(folder / "logs"),
        )

    def start(self, *args: str, log: Path) -> subprocess.Popen:
        with open(log, "w", encoding="utf-8") as handle:  # the child keeps its own copy
            return subprocess.Popen(
                [str(BIN / args[0]), *args[1:]], env=self.env, cwd=PROJECT_DIR, stdout=handle,
                stderr=subprocess.STDOUT, text=True,
            )

    def run(self, *args: str, log: Path) -> str:
        return finish(self.start(*args, log=log), log)


def finish(proc: subprocess.Popen, log: Path) -> str:
    try:
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.returncode is None:
            proc.kill()
            proc.wait()
    output = log.read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, f"{proc.args} exited with {proc.returncode}:\n{output[-4000:]}"
    return output


@pytest.fixture(scope="module")
def concurrent(tmp_path_factory) -> Iterator[LakeRun]:
    run = LakeRun(tmp_path_factory.mktemp("concurrent"))
    try:
        yield run
    finally:
        server = MetastoreServer.for_lake(run.dir)
        server.stop()
        assert server.pid() is None and not server.is_running()


@pytest.fixture(scope="module")
def batches(tmp_path_factory) -> tuple[Path, Path]:
    """Two landing batches of a generated Canal workload (inserts, updates, deletes, DDL)."""
    out = tmp_path_factory.mktemp("workload")
    subprocess.run(
        [str(BIN / "cdc-lake"), "generate", "--seed", "20", "--changes", "300", "--formats", "canal_flat",
         "--batches", "2", "--quiet", "--out", str(out)],
        check=True, timeout=300,
    )
    return out / "canal_flat-1.jsonl", out / "canal_flat-2.jsonl"


def run_then_dump(lake: LakeRun, log: Path) -> dict[str, list[str]]:
    """`dbt run` of what the comparison reads, then cdc_current and cdc_history of the lake
    (STEPS, one process), normalised."""
    output = lake.run("python", "-c", STEPS, "run", COMPARED[1], "dump", log=log)
    tables: dict[str, list[str]] = {"cdc_current": [], "cdc_history": []}
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        tables[record["model"]].append(record["row"])
    return {model: normalised(rows) for model, rows in tables.items()}


def normalised(rows: list[str]) -> list[str]:
    """Rows as `to_json(struct(*))` gives them, without the landing columns, keys and rows sorted."""
    return sorted(
        json.dumps({k: v for k, v in json.loads(row).items() if k not in LANDING_COLUMNS}, sort_keys=True)
        for row in rows
    )


def sequential_tables(lake: Lake, first: Path, second: Path) -> dict[str, list[str]]:
    """Both batches landed in one landing, then built, in the test session's warm Spark (the
    module's own schemas): the reference, normalised as `dump` normalises a lake's rows."""
    records = lake._tmp / "both.jsonl"
    records.write_bytes(first.read_bytes() + second.read_bytes())
    lake.land("canal_flat", records)
    lake.build(*COMPARED, data_tests=False)
    return {
        model: normalised([r["row"] for r in lake.rows(f"select to_json(struct(*)) as row from {{schema}}.{model}")])
        for model in ("cdc_current", "cdc_history")
    }


def test_land_build_and_query_at_once_then_equal_to_one_after_the_other(concurrent, lake, batches, tmp_path) -> None:
    first, second = batches
    began = time.monotonic()

    # a small lake, built up to the change log (the query below reads it while the build runs;
    # the build makes the rest)
    landed = concurrent.run("python", "-c", STEPS, "land", str(first), "run", "+cdc_changelog",
                            log=tmp_path / "land1.log")
    assert "canal_flat:" in landed and " landed," in landed

    # a plain `dbt build`; once it runs its nodes, a landing and a query join it
    build_log = tmp_path / "build.log"
    build = concurrent.start("dbt", "build", log=build_log)
    deadline = time.monotonic() + 900
    while " of " not in build_log.read_text(errors="replace") and build.poll() is None:
        assert time.monotonic() < deadline, "dbt build started no node within 15 minutes"
        time.sleep(1)
    land = concurrent.start("cdc-lake", "land", "--format", "canal_flat", str(second), log=tmp_path / "land2.log")
    query = concurrent.start(
        "cdc-lake", "sql", "-e", "select count(*) as changes from cdc_lake.cdc_changelog", log=tmp_path / "sql.log"
    )
    landed = finish(land, tmp_path / "land2.log")
    queried = finish(query, tmp_path / "sql.log")
    built = finish(build, build_log)
    assert "canal_flat:" in landed and " landed," in landed
    assert re.search(r"^\| changes +\|$", queried, re.MULTILINE), queried

    # quiet: no Java stack trace, a few lines per node
    assert not STACK_LINE.search(built), STACK_LINE.search(built)
    nodes = int(re.search(r"TOTAL=(\d+)", built).group(1))
    assert nodes > 50
    assert len(built.splitlines()) <= 3 * nodes + 15, built

    # the next run reads what landed during this one (of the models the comparison reads), and
    # the same records, landed and built one after the other, give the same tables
    expected = sequential_tables(lake, first, second)
    assert expected["cdc_current"] and expected["cdc_history"]
    assert run_then_dump(concurrent, tmp_path / "run2.log") == expected
    print(f"whole test {time.monotonic() - began:.0f}s")
