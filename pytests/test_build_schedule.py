"""`cdc-lake build --every`: scheduled `dbt build`s in one process, whose Spark session stays warm.

One real process on a private lake: its builds are logged, a landing made between two builds is in
the tables after the next one, the lake's dbt turn is given back between builds (a `dbt` command
line runs in the gap), the table upkeep runs between builds in the same process (--upkeep-every),
and SIGTERM stops the schedule after the build under way, not in it.
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
from cdc_lake.testing.harness import private_lake_env, run_checked

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
COUNT = """
from cdc_lake.spark import get_spark
for (offset,) in get_spark("count").sql("select distinct kafka_offset from cdc_lake.cdc_changelog").collect():
    print("OFFSET", offset)
"""




def entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def wait_for(condition, what: str, timeout: float = 600) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(1)


def test_a_schedule_builds_warm_shows_new_landings_and_stops_between_builds(tmp_path: Path) -> None:
    env = private_lake_env(tmp_path / "lake")
    log = tmp_path / "builds.jsonl"
    # the demo's Canal records (one topic and partition) in two landings: offsets 0-4, then 5-8
    records = (PROJECT_DIR / "demo" / "canal_flat.jsonl").read_text().splitlines(keepends=True)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("".join(records[:5]))
    second.write_text("".join(records[5:]))
    run_checked([str(BIN / "cdc-lake"), "land", "--format", "canal_flat", str(first)], env)
    output_file = tmp_path / "schedule.out"  # a file, not a pipe nobody reads while it builds
    with open(output_file, "w") as output_sink:
        schedule = subprocess.Popen(  # the test's own process: killed below whatever happens
            [str(BIN / "cdc-lake"), "build", "--every", "1", "--log", str(log), "--upkeep-every", "1",
             "--expire-args", "{older_than_hours: 0, retain_last: 1}"],
            env=env, cwd=PROJECT_DIR, stdout=output_sink, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        wait_for(lambda: any(e["event"] == "end" for e in entries(log)), "the first build")
        # a landing made now can only be built by a later build of the same process
        run_checked([str(BIN / "cdc-lake"), "land", "--format", "canal_flat", str(second)], env)
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
    counts = run_checked([str(BIN / "python"), "-c", COUNT], env)
    offsets = sorted(int(line.split()[1]) for line in counts.splitlines() if line.startswith("OFFSET "))
    assert offsets and offsets[0] < 5 <= offsets[-1], offsets  # both landings are in the change log
