"""`cdc-lake build --every`: scheduled `dbt build`s in one process, whose Spark session stays warm.

One real process on the test run's lake, in this module's schemas (the lake's metastore server
serves several processes, as it does a user's): its builds are logged, a landing made between two
builds is in the tables after the next one, the lake's dbt turn is given back between builds (a
`dbt` command line runs in the gap), the table upkeep runs between builds in the same process
(--upkeep-every), and SIGTERM stops the schedule after the build under way, not in it. The
landings and the count of what was built are made in the test session's warm Spark (a cold
process for each cost more than a build of the schedule); the schedule builds what the checks read
(cdc_history and what it reads, with their data tests).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cdc_lake.env import PROJECT_DIR
from cdc_lake.testing.harness import Lake, run_checked

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
# what the checks read: the change log (both landings), cdc_history (the upkeep's snapshots), the
# raw table (the upkeep's compaction), so cdc_current and everything it reads, with the data tests
# of those models alone (cautious: none that also reads a model left out, the typed views and
# monitoring models, 62 of the project's 126 nodes)
SELECT = ["--select", "+cdc_current", "--exclude", "test_type:unit", "--indirect-selection", "cautious"]




def entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def wait_for(condition, what: str, timeout: float = 600) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(1)


def module_env(lake: Lake) -> dict[str, str]:
    """The environment of a command on this module's schemas of the test run's lake (its metastore
    server is found by the lake's folder, as every process of the venv finds it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CDC_LAKE_METASTORE")}
    env.update(CDC_LAKE_SCHEMA=lake.schema, CDC_LAKE_RAW_SCHEMA=lake.raw_schema)
    return env


def test_a_schedule_builds_warm_shows_new_landings_and_stops_between_builds(lake: Lake, tmp_path: Path) -> None:
    env = module_env(lake)
    log = tmp_path / "builds.jsonl"
    # the demo's Canal records (one topic and partition) in two landings: offsets 0-4, then 5-8
    records = (PROJECT_DIR / "demo" / "canal_flat.jsonl").read_text().splitlines(keepends=True)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("".join(records[:5]))
    second.write_text("".join(records[5:]))
    assert lake.land("canal_flat", first).records_landed == 5
    output_file = tmp_path / "schedule.out"  # a file, not a pipe nobody reads while it builds
    with open(output_file, "w") as output_sink:
        schedule = subprocess.Popen(  # the test's own process: killed below whatever happens
            [str(BIN / "cdc-lake"), "build", "--every", "1", "--log", str(log), "--upkeep-every", "1",
             "--expire-args", "{older_than_hours: 0, retain_last: 1}", "--", *SELECT],
            env=env, cwd=PROJECT_DIR, stdout=output_sink, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        wait_for(lambda: any(e["event"] == "end" for e in entries(log)), "the first build")
        # a landing made now can only be built by a later build of the same process
        assert lake.land("canal_flat", second).records_landed == len(records) - 5
        built = len([e for e in entries(log) if e["event"] == "start"])
        # the turn is given back between builds: a writing dbt command line gets it
        run_checked([str(BIN / "dbt"), "seed", "--select", "tag:no_such_tag"], env)
        # a build that started after the landing, under way: SIGTERM lets it finish, and it is the last
        wait_for(lambda: entries(log)[-1]["event"] == "start" and entries(log)[-1]["build"] > built,
                 "a build after the landing, under way")
        schedule.send_signal(signal.SIGTERM)
        schedule.wait(timeout=600)
    finally:
        if schedule.poll() is None:
            os.killpg(schedule.pid, signal.SIGKILL)
    output = output_file.read_text()
    assert schedule.returncode == 0, output[-3000:]
    assert "stopping after the build under way" in output
    log_entries = entries(log)
    starts = [e["build"] for e in log_entries if e["event"] == "start"]
    ends = [e for e in log_entries if e["event"] == "end"]
    # the build under way at SIGTERM finished, and none began after it
    assert starts == [e["build"] for e in ends] == list(range(1, len(starts) + 1))
    assert all(e["status"] == 0 for e in ends), ends
    assert len({e["pid"] for e in log_entries}) == 1  # one process, one JVM, for every build
    # the upkeep ran between builds in the same process: the raw table compacted, snapshots expired
    upkeeps = [e for e in log_entries if e["event"] == "upkeep"]
    assert upkeeps and all(e["compact_status"] == e["expire_status"] == 0 for e in upkeeps), upkeeps
    lines = [line for e in upkeeps for line in e["lines"]]
    assert any(re.search(r"\.raw_canal_flat: \d+ data and delete files, now 1$", line) for line in lines), lines
    assert any(re.search(r"\.cdc_history: \d+ snapshots, now 1;", line) for line in lines), lines
    offsets = sorted(r["kafka_offset"] for r in lake.rows("select distinct kafka_offset from {schema}.cdc_changelog"))
    assert offsets and offsets[0] < 5 <= offsets[-1], offsets  # both landings are in the change log
