"""`make bench-capacity`'s reading of a run, without Spark or Kafka: the backlog a soak computes from
its landings and builds, the backlog's growth, the cores used, and the verdict and the line the
report leads with."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

from cdc_lake.bench.capacity import capacity, cores, render, slope
from cdc_lake.bench.soak import Soak


def soak_at(seconds_in: float) -> Soak:
    soak = Soak(Path("."), duration=60, rate=100, seed=1, build_interval=10, upkeep_interval=600, faults=[])
    soak.began = time.monotonic() - seconds_in
    return soak


def landed_at(epoch: float) -> tuple:
    """A raw-table row as the soak reads it: coordinates, then landed_at (UTC, naive, as Spark gives)."""
    return ("t", 0, 0, 0, datetime.fromtimestamp(epoch, timezone.utc).replace(tzinfo=None))


def test_the_backlog_counts_records_landed_and_not_yet_built():
    soak = soak_at(100)
    began = time.time() - 100
    # two records landed at 2 s and 3 s, one at 12 s; a build from 4 s to 8 s, another from 13 s to 20 s
    landed = [landed_at(began + t) for t in (2, 3, 12)] + [landed_at(began - 50)]  # the history's: before
    soak.builds = [{"started": began + 4, "ended": began + 8, "ok": True},
                   {"started": began + 9, "ended": began + 11, "ok": False},
                   {"started": began + 13, "ended": began + 20, "ok": True}]
    backlog = dict(soak.backlog(landed, step=0.5))  # read between the events: clocks differ by microseconds
    assert backlog[0.5] == 0 and backlog[3.5] == 2
    assert backlog[7.5] == 2  # the build under way has not ended
    assert backlog[8.5] == 0  # it ended: what landed before its start is built
    assert backlog[12.5] == 1  # the failed build built nothing
    assert backlog[19.5] == 1 and backlog[20.5] == 0


def test_growth_cores_and_the_verdict():
    assert slope([(0, 0), (10, 50), (20, 100)]) == 5.0
    assert slope([(0, 7)]) == 0.0
    # consumer 10 -> 20 CPU s and builds 0 -> 30 CPU s over 10 s: 1 and 3 cores; samples after `until` ignored
    assert cores([(0, 10, 0), (5, 15, 10), (10, 20, 30), (15, 99, 99)], until=10) == (1.0, 3.0)
    run = {"rate": 500.0, "history": 1000, "duration_seconds": 300.0, "build_interval": 10.0,
           "upkeep_interval": 600.0, "tests_every": 300.0, "changes_per_second": 498.0, "freshness_p50": 30.0,
           "freshness_p95": 60.0, "freshness_max": 70.0, "backlog_slope": 1.0, "backlog_max": 9000,
           "backlog_at_end_of_production": 4000, "build_seconds": [20.0, 50.0], "build_kinds": ["cycle", "build"],
           "build_median": 35.0, "build_max": 50.0, "consumer_cores": 0.5, "build_cores": 1.5, "problems": [],
           "keeps_up": True, "finished_at": "2026-12-06 06:02 UTC", "commit": "95ec4c2"}
    behind = {**run, "rate": 1000.0, "keeps_up": False, "backlog_slope": 400.0}
    assert capacity([run, behind]) == 500.0
    assert capacity([behind]) == 0
    report = render([run, behind], "python -m cdc_lake.bench.capacity", "capacity.png")
    assert "Capacity: 500 change records/s (freshness p95 <= 120 s)" in report.splitlines()
    assert "- 500/s: 20c, 50" in report and "--tests-every 300" in report
    assert "finished 2026-12-06 06:02 UTC, commit 95ec4c2" in report
