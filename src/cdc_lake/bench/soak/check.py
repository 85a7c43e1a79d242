"""The soak's truth check: the lake against the simulator's truth (current and history per format,
rejects, reconciliation, nothing landed twice, nothing lost), each change's freshness, the backlog
over time, and the analyst query timed at the start and at the end."""

from __future__ import annotations

import bisect
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from datetime import timezone
from pathlib import Path
from typing import Any

from cdc_lake.bench.soak.state import RAW_SCHEMA, SCHEMA, SoakState
from cdc_lake.formats import FORMATS

ANALYST_QUERY = (
    f"select database_name, table_name, count(*) as live_rows, count_if(is_deleted) as deleted "
    f"from {SCHEMA}.cdc_current group by database_name, table_name"
)
# the analyst query at the start of the soak runs in a process of its own (a Spark session started
# for it; the JVM start is not timed), at the end in the session that checks the lake: see
# `analyst_seconds`
ANALYST_SCRIPT = """
import sys
from cdc_lake.bench.soak import analyst_seconds
from cdc_lake.spark import get_spark
seconds = analyst_seconds(get_spark("cdc_lake soak analyst"), sys.argv[1])
print("empty" if seconds is None else seconds)
"""


def analyst_seconds(spark: Any, query: str) -> float | None:
    """The analyst query timed in `spark` as in an analyst's long-lived session: thirty runs to
    warm it (the JIT keeps speeding it up for dozens of runs: on one table, runs 6-15 took 0.177 s
    and runs 21-30 0.109 s, medians), then fifteen timed while it holds the lake's dbt turn, so
    that at the start (the pipeline running) no build competes for the cores, as none does at the
    end; their median. None when cdc_current has no row yet (a plan without a file to read is no
    measure of the table)."""
    from cdc_lake.hook import lake_turn

    if not spark.sql(query).collect():
        return None
    for _ in range(30):
        spark.sql(query).collect()
    seconds = []
    with lake_turn("analyst"):
        for _ in range(15):
            started = time.monotonic()
            spark.sql(query).collect()
            seconds.append(time.monotonic() - started)
    return statistics.median(seconds)


class TruthCheck(SoakState):
    """What the soak measures and checks once its processes have stopped (the analyst query's
    start excepted: it runs while the pipeline does)."""

    def analyst_query_seconds(self) -> float | None:
        """The analyst query's seconds (NaN if it failed), None while cdc_current has no row."""
        done = subprocess.run([sys.executable, "-c", ANALYST_SCRIPT, ANALYST_QUERY], cwd=self.project,
                              env=self.env(), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            self.event("analyst_query_failed", done.stderr[-500:])
            return float("nan")
        last = done.stdout.strip().splitlines()[-1]
        return None if last == "empty" else float(last)

    def check(self, workload: Path) -> dict[str, Any]:
        """The lake against the simulator's truth, and each change's freshness."""
        os.environ.update({k: v for k, v in self.env().items() if k.startswith("CDC_LAKE_")})
        from cdc_lake.spark import get_spark
        from cdc_lake.testing.harness import Lake
        from cdc_lake.testing.truth import Truth, check_against_truth

        spark = get_spark("cdc_lake soak check")
        # first, as the analyst's process at the start runs it: in a session that ran nothing else;
        # a failing query is reported as the start's is (NaN and an event), not a failed check
        try:
            end_seconds = analyst_seconds(spark, ANALYST_QUERY)
        except Exception as exc:  # noqa: BLE001 - Spark raises many types; any means "no figure"
            self.event("analyst_query_failed", str(exc)[-500:])
            end_seconds = float("nan")
        lake = Lake(spark, SCHEMA)
        lake.project_dir = self.project
        problems: list[str] = []
        truth = Truth(workload)
        try:
            check_against_truth(lake, truth)
        except AssertionError as failure:
            problems.append(f"current/history differ from the truth: {str(failure)[:2000]}")
        rejects = lake.rows("select source_format from {schema}.cdc_rejected_messages")
        rejected = Counter(r["source_format"] for r in rejects)
        injected = Counter(m["format"] for m in truth.malformed)
        if rejected != injected:
            problems.append(f"rejects per format {dict(rejected)}, malformed records injected {dict(injected)}")
        unaccounted = lake.rows("select * from {schema}.cdc_reconciliation where unaccounted_records != 0")
        if unaccounted:
            problems.append(f"unaccounted records: {unaccounted[:3]}")
        raw = " union all ".join(
            f"select kafka_topic, kafka_partition, kafka_offset, kafka_topic_incarnation, landed_at "
            f"from {RAW_SCHEMA}.raw_{fmt}" for fmt in FORMATS
        )
        landed = spark.sql(raw).collect()
        keys = {(r[0], r[1], r[2], r[3] or 0) for r in landed}
        if len(keys) != len(landed):
            problems.append(f"{len(landed) - len(keys)} records landed twice")
        if self.undelivered:
            problems.append(
                f"{sum(self.undelivered.values())} records never reached the broker (the soak's producer gave "
                f"up on them, so the truth holds changes Kafka never had): {dict(self.undelivered)}"
            )
        if not self.produced <= len(landed) <= self.produced + self.maybe_twice:
            problems.append(f"{len(landed)} records landed, {self.produced} produced "
                            f"({self.maybe_twice} more may have reached the broker before a producer was replaced)")
        # (the change log does not keep the incarnation: a recreated topic's offsets count for both lives)
        changes = {tuple(r) for r in spark.sql(
            f"select distinct kafka_topic, kafka_partition, kafka_offset from {SCHEMA}.cdc_changelog").collect()}
        fresh = self.freshness(landed, changes)
        # the production's change records: the history's landed before the soak began
        began_at = time.time() - self.now()
        change_records = sum((r[0], r[1], r[2]) in changes for r in landed
                             if r[4].replace(tzinfo=timezone.utc).timestamp() >= began_at)
        spark.stop()
        return {"problems": problems, "freshness": fresh, "rejected": sum(rejected.values()), "landed": len(landed),
                "backlog": self.backlog(landed),
                "change_records": change_records,
                "analyst_end_seconds": float("nan") if end_seconds is None else end_seconds}  # None: no row

    def freshness(self, landed: list[Any], changes: set[tuple]) -> list[tuple[float, float]]:
        """(seconds into the soak it was produced, seconds until a build showed it) per change record."""
        good = sorted((b["started"], b["ended"]) for b in self.builds if b["ok"])
        starts = [s for s, _ in good]
        epoch_began = time.time() - self.now()
        points = []
        for r in landed:
            key = (r[0], r[1], r[2], r[3] or 0)
            if key[:3] not in changes or key not in self.produced_at:
                continue
            landed_at = r[4].replace(tzinfo=timezone.utc).timestamp()
            i = bisect.bisect_left(starts, landed_at)
            if i == len(good):
                continue
            produced = self.produced_at[key]
            points.append((produced - epoch_began, good[i][1] - produced))
        return sorted(points)

    def backlog(self, landed: list[Any], step: float = 5.0) -> list[tuple[float, int]]:
        """(seconds into the soak, records landed and not yet built) every `step` seconds, from
        the start to the last build's end: a record is built when the first successful build that
        started after its landing ends."""
        epoch_began = time.time() - self.now()
        times = sorted(r[4].replace(tzinfo=timezone.utc).timestamp() - epoch_began for r in landed)
        times = times[bisect.bisect_left(times, 0.0):]  # the history's records were built before
        good = sorted((b["ended"] - epoch_began, b["started"] - epoch_began) for b in self.builds if b["ok"])
        end = max([e for e, _ in good] + times[-1:] + [0.0])
        points, i, built_before = [], 0, 0.0
        t = 0.0
        while t <= end + step:
            while i < len(good) and good[i][0] <= t:
                built_before = max(built_before, good[i][1])
                i += 1
            points.append((t, bisect.bisect_right(times, t) - bisect.bisect_left(times, built_before)))
            t += step
        return points
