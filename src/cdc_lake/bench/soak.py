"""A day in production, compressed (issue 44): `make soak` (`python -m cdc_lake.bench.soak`).

Everything runs as it runs in production, in a temporary folder: a local Kafka broker; the
simulator's workload (every format; key changes, keyless tables, DDL, truncates, duplicates and a
few malformed records) produced into its topics by a real producer, paced to last DURATION seconds
at RATE change records per second, all formats together; `cdc-lake consume --follow`; `cdc-lake
build --every BUILD_INTERVAL` (a `dbt build` every BUILD_INTERVAL seconds in one process whose
Spark session stays warm) with `cdc_compact` and `cdc_expire_snapshots` between two builds every
UPKEEP_INTERVAL seconds (`--upkeep-every`), as a user would schedule them; and faults at the
moments a seeded schedule picks: kill -9 of the consumer (twice), of the build process while it
builds (twice), of the metastore server, a broker restart, and a topic deleted and created again.
Nobody steps in: a dead consumer or build process is started again (as a service manager would) and
its next build picks up what the killed one left; the lake's processes start the metastore server
again themselves; a producer that gives up on its records is replaced and they are sent again, in
order (at least once, as a CDC tool's restarted task sends again from its last acknowledged
position).

At the end the producer has sent everything and the faults stop; a last `cdc-lake consume`
(without --follow) lands what is left while the schedule goes on, and the schedule's first build
that starts after that landing is the last: once it and what follows it (the upkeep when due, else
`cdc_compact_latest`) are logged, the schedule is stopped between two builds, so the analyst's query
at the end reads what a scheduled build leaves, built by the warm process that built all along.
Then, against the simulator's truth: `cdc_current` and
`cdc_history` per format, every record a change or a reject (only the injected malformed ones),
reconciliation clean, no record landed twice. Measured: changes/s sustained; freshness per change
(produced -- the source's commit, in this simulation -- to the end of the first build that shows
it: the first successful build that started after its landing, so an upper bound); a fixed
analyst query on `cdc_current` at the start and at the end; files per table at each upkeep.
Written to docs/soak.md (with a PNG of freshness over time, faults marked) and
bench/results/soak.json. Exit status 0 when every check of correctness passed.
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cdc_lake.env import PROJECT_DIR
from cdc_lake.formats import FORMATS
from cdc_lake.servers.supervisor import LocalServer

SCHEMA = "soak"
RAW_SCHEMA = "soak_raw"
# The default schedule. `recreate_topic` deletes a Debezium topic and creates it again the way an
# operator does (its records produced meanwhile are held back until the consumer has landed the
# old life: a deleted topic takes its unread records with it, which no consumer can survive); a
# Debezium one, since that format orders changes by binlog position alone, never by offset.
FAULTS = ["kill_consumer", "kill_consumer", "kill_build", "kill_build", "restart_broker", "kill_metastore",
          "recreate_topic"]
KNOWN_FAULTS = set(FAULTS)
RECREATED_FORMAT = "debezium"
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
# the soak's snapshot expiry: keep six minutes of time travel, so that its upkeeps expire some
UPKEEP_EXPIRE_ARGS = "{older_than_hours: 0.1, retain_last: 5}"
# builds the schedule may start after the catch-up landing before the soak stops waiting for one
# that ends well (one killed just before the end may leave the next a retry to do)
LAST_BUILD_TRIES = 3
COMPACT_LOG = re.compile(r"(\S+): (\d+) data and delete files, now (\d+)")


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


class SoakProcess(LocalServer):
    """A process of the soak (the consumer, a dbt command), started the one way the package starts
    processes: in a session of its own (kill -9 of its group takes its JVM too), output appended
    to `<name>.log` in the soak's folder."""

    def __init__(self, folder: Path, name: str, command: list[str], env: dict[str, str], cwd: Path) -> None:
        super().__init__(folder)
        self.name = name  # type: ignore[misc] - one log per kind of process
        self._command, self._env, self._cwd = command, env, cwd

    def command(self) -> list[str]:
        return self._command

    def environment(self) -> dict[str, str]:
        return self._env

    def working_dir(self) -> Path:
        return self._cwd

    @property
    def output_file(self) -> Path:
        return self.folder / f"{self.name}.log"


@dataclass
class Soak:
    folder: Path
    duration: float
    rate: float
    seed: int
    build_interval: float
    upkeep_interval: float
    faults: list[str] = field(default_factory=lambda: list(FAULTS))
    # change records landed and built before the paced production starts (the capacity benchmark's
    # history): the first of the workload's records, sent at once, consumed and built with its tests
    history: int = 0
    # `cdc-lake build --tests-every`: seconds between builds with every data test (None: every build)
    tests_every: float | None = None
    began: float = 0.0
    events: list[dict[str, Any]] = field(default_factory=list)
    builds: list[dict[str, Any]] = field(default_factory=list)
    upkeeps: list[dict[str, Any]] = field(default_factory=list)
    # (topic, partition, offset, incarnation) -> when it was sent
    produced_at: dict[tuple[str, int, int, int], float] = field(default_factory=dict)
    # recreate_topic: the topic whose records are held back, the held records, and each topic's life
    held_topic: str | None = None
    held: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    lives: dict[str, int] = field(default_factory=dict)
    partitions: dict[str, int] = field(default_factory=dict)
    produced: int = 0
    history_produced: int = 0
    # CPU seconds (user + system) of the consumer's and the build schedule's process trees, sampled
    # through the production: [(seconds into the soak, consumer, build), ...]
    cpu: list[tuple[float, float, float]] = field(default_factory=list)
    # records the producer gave up on (its delivery timed out or failed), per "topic life n"
    undelivered: Counter[str] = field(default_factory=Counter)
    # records sent again by a new producer after the one of their topic life gave up, per life
    resent: Counter[str] = field(default_factory=Counter)
    maybe_twice: int = 0  # of those, purged while in flight: the broker may hold them too
    changes: int = 0
    consumer_starts: int = 0
    bootstrap: str = ""
    stop: threading.Event = field(default_factory=threading.Event)
    consumer: subprocess.Popen[bytes] | None = None
    build: subprocess.Popen[bytes] | None = None  # a dbt command line of the soak's (the first build)
    builder: subprocess.Popen[bytes] | None = None  # `cdc-lake build --every`, the scheduled builds
    open_build: float | None = None  # when the build under way started (None: none is)
    # the end: when the catch-up landing ended (wall clock), the builds that started after it, and
    # when the build whose post-build step (upkeep or cdc_compact_latest) was logged last started
    caught_up: float | None = None
    ended_build: float | None = None  # the start of the last build that ended well, until its post step
    post_step_of: float | None = None
    restarts_after_catch_up: int = 0  # build processes started again after it
    lock: threading.Lock = field(default_factory=threading.Lock)

    # ------------------------------------------------------------------ set-up

    @property
    def project(self) -> Path:
        return self.folder / "project"

    @property
    def lake(self) -> Path:
        return self.folder / "lake"

    def env(self) -> dict[str, str]:
        return {
            **os.environ, "CDC_LAKE_DIR": str(self.lake), "CDC_LAKE_SCHEMA": SCHEMA, "CDC_LAKE_RAW_SCHEMA": RAW_SCHEMA,
            "DBT_PROFILES_DIR": str(PROJECT_DIR / "profiles"), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        }

    def now(self) -> float:
        return time.monotonic() - self.began

    def event(self, kind: str, detail: str = "") -> None:
        with self.lock:
            self.events.append({"at": round(self.now(), 1), "kind": kind, "detail": detail})
        print(f"[soak {self.now():7.1f}s] {kind} {detail}", flush=True)

    def bin(self, name: str) -> str:
        return str(Path(sys.executable).parent / name)

    def generate(self) -> Path:
        workload = self.folder / "workload"
        # RATE counts change records in the lake, every format together: each simulated change is
        # written by all five CDC tools, so the simulator makes a fifth of them
        self.changes = max(int((self.rate * self.duration + self.history) / len(FORMATS)), 100)
        subprocess.run(
            [self.bin("cdc-lake"), "generate", "--seed", str(self.seed), "--changes", str(self.changes), "--out",
             str(workload), "--duplicates", "0.02", "--malformed", "0.002", "--quiet"],
            check=True, env=self.env(),
        )
        return workload

    # ------------------------------------------------------------------ the moving parts

    def workload_records(self, workload: Path, bootstrap: str) -> list[dict[str, Any]]:
        """Every record of every format in the simulator's time order (each topic-partition's in
        its order, merged by timestamp), their topics created."""
        from cdc_lake.servers.kafka_broker import create_dump_topics, read_dump

        streams: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for record in read_dump(sorted(workload.glob("*.jsonl"))):
            streams.setdefault((record["kafka_topic"], record["kafka_partition"]), []).append(record)
        records = list(heapq.merge(*streams.values(), key=lambda r: r["kafka_timestamp_ms"] or 0))
        create_dump_topics(bootstrap, records)
        for record in records:
            topic = record["kafka_topic"]
            self.partitions[topic] = max(self.partitions.get(topic, 0), record["kafka_partition"] + 1)
        return records

    def land_history(self, records: list[dict[str, Any]], bootstrap: str) -> None:
        """The history before the soak: its records sent at once, landed by `cdc-lake consume`
        (without --follow) and built by one `dbt build` with its tests, as a lake that has run a
        while holds them. Its records count as produced, not in the freshness."""
        from confluent_kafka import Producer

        from cdc_lake.servers.kafka_broker import send_record

        delivered: list[bool] = []
        producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 50,
                             "log_level": 3})
        for record in records:
            send_record(producer, record, keep_timestamp=False,
                        on_delivery=lambda error, _message: delivered.append(error is None))
        producer.flush(600)
        self.history_produced = sum(delivered)
        if self.history_produced != len(records):
            raise RuntimeError(f"history: {self.history_produced} of {len(records)} records delivered")
        started = time.monotonic()
        if self.start_consumer(follow=False).wait() != 0:
            raise RuntimeError("history: cdc-lake consume failed (see consume.log)")
        landed = time.monotonic()
        if self.run_dbt("build") != 0:
            raise RuntimeError("history: the first dbt build failed (see dbt.log)")
        print(f"[soak] history: {len(records):,} records landed in {landed - started:.0f} s, built in "
              f"{time.monotonic() - landed:.0f} s", flush=True)

    def sample_cpu(self) -> None:
        """CPU seconds of the consumer's and the schedule's process trees (their JVMs included),
        every 5 s while the production lasts; a process that ended keeps its last reading."""
        import psutil

        last: dict[int, float] = {}
        roles: dict[int, str] = {}

        def read(process: subprocess.Popen[bytes] | None, role: str) -> None:
            if process is None or process.poll() is not None:
                return
            try:
                root = psutil.Process(process.pid)
                for member in [root, *root.children(recursive=True)]:
                    times = member.cpu_times()
                    last[member.pid] = times.user + times.system
                    roles[member.pid] = role
            except psutil.Error:
                pass  # it ended between the poll and the reading

        while not self.stop.wait(5):
            read(self.consumer, "consumer")
            read(self.builder, "build")
            self.cpu.append((round(self.now(), 1),
                             sum(v for pid, v in last.items() if roles[pid] == "consumer"),
                             sum(v for pid, v in last.items() if roles[pid] == "build")))

    def produce(self, records: list[dict[str, Any]], bootstrap: str) -> None:
        """The records, in their order, paced over the duration."""
        from confluent_kafka import KafkaError, Producer

        from cdc_lake.servers.kafka_broker import send_record

        def new_producer() -> Any:
            # delivery survives a broker restart: retried until the message timeout (3 minutes)
            return Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20,
                             "message.timeout.ms": 180_000, "log_level": 3})

        # one producer per topic life: an idempotent producer's sequence numbers belong to the
        # partitions it wrote, and a recreated topic's partitions are new ones
        producers = {0: new_producer()}
        retired: list[Any] = []
        # records a producer gave up on, (position in the workload, life, record), and the lives
        # whose producer did: such a producer is replaced and its records sent again in order, as
        # a CDC tool's restarted task sends again from its last acknowledged position (at least once)
        failed: list[tuple[int, int, dict[str, Any], float]] = []
        stuck: set[int] = set()
        interval = self.duration / max(len(records), 1)

        def delivered(error: Any, message: Any, sent: float, life: int, i: int, record: dict[str, Any]) -> None:
            if error is None:
                with self.lock:
                    self.produced_at[(message.topic(), message.partition(), message.offset(), life)] = sent
                return
            failed.append((i, life, record, sent))  # freshness still counts from the first send
            if error.code() in (KafkaError._PURGE_INFLIGHT, KafkaError._MSG_TIMED_OUT):
                with self.lock:  # it may have been sent and written without an answer: it may land twice
                    self.maybe_twice += 1
            if error.code() not in (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT) and life not in stuck:
                stuck.add(life)
                self.event("produce_error", f"{message.topic()} life {life}: {error}; its producer is replaced")

        def send(i: int, record: dict[str, Any], life: int | None = None, first_sent: float | None = None) -> None:
            life = self.lives.get(record["kafka_topic"], 0) if life is None else life
            if life not in producers:
                producers[life] = new_producer()
            sent = time.time() if first_sent is None else first_sent
            # the broker stamps the time of sending (the simulator's times are its own)
            send_record(producers[life], record, keep_timestamp=False,
                        on_delivery=lambda e, m, sent=sent, life=life, i=i, r=record: delivered(e, m, sent, life, i, r))

        def replace_stuck() -> None:
            for life in sorted(stuck):
                old = producers.pop(life)
                old.purge()  # what it still holds fails at once, its callbacks served here
                deadline = time.monotonic() + 30
                while len(old) and time.monotonic() < deadline:
                    old.poll(0.1)
                retired.append(old)
            stuck.clear()
            with self.lock:
                for _, life, record, _ in failed:
                    self.resent[f"{record['kafka_topic']} life {life}"] += 1
            again = sorted(failed, key=lambda f: f[0])
            failed.clear()
            for i, life, record, sent in again:
                send(i, record, life, sent)

        def send_held() -> None:
            if self.release.is_set():
                with self.lock:
                    backlog, self.held, self.held_topic = self.held, [], None
                    self.release.clear()
                for i, record in backlog:
                    send(i, record)

        start = time.monotonic()
        for i, record in enumerate(records):
            if self.stop.is_set():
                break
            wait = start + i * interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            for old in retired:
                old.poll(0)
            if stuck or failed:
                replace_stuck()
            send_held()
            with self.lock:
                if record["kafka_topic"] == self.held_topic:
                    self.held.append((i, record))
                    continue
            send(i, record)
        while self.held_topic is not None and not self.stop.is_set():
            time.sleep(0.5)
            send_held()
        for _ in range(4):  # a producer that gives up at the end is replaced too
            for producer in [*producers.values(), *retired]:
                producer.flush(240)
            if not (stuck or failed):
                break
            replace_stuck()
        for _, life, record, _ in failed:
            self.undelivered[f"{record['kafka_topic']} life {life}"] += 1
        self.produced = self.history_produced + len(self.produced_at)
        self.event("produced", f"{len(self.produced_at)} of {len(records)} records delivered")

    def recreate_topic(self, broker: Any, rng: random.Random) -> str:
        """Delete a Debezium topic and create it again, as an operator would: its new records are
        held back, the consumer lands what the old life holds, then the topic is recreated (offsets
        from 0) and the held records follow into it."""
        from cdc_lake.consume import DEFAULT_CONFIG, load_rules
        from cdc_lake.incarnations import resume_offsets

        pattern = next(r for r in load_rules(DEFAULT_CONFIG) if r.fmt == RECREATED_FORMAT)
        topics = sorted(t for t in self.partitions if re.fullmatch(pattern.subscribe_pattern(), t))
        topic = rng.choice(topics)
        with self.lock:
            self.held_topic = topic
        time.sleep(5)  # the producer's last sends of the topic reach the broker
        life = self.lives.get(topic, 0)
        ends: dict[str, int] = {}
        with self.lock:
            delivered = list(self.produced_at)
        for (t, partition, offset, n) in delivered:
            if t == topic and n == life:
                ends[str(partition)] = max(ends.get(str(partition), 0), offset + 1)
        checkpoints = self.lake / "checkpoints"
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not self.stop.is_set():
            newest = max(checkpoints.glob(f"{RECREATED_FORMAT}*"), default=None,
                         key=lambda d: int(d.name.partition(".")[2] or 0))
            landed = resume_offsets(newest).get(topic, {}) if newest is not None else {}
            if all(landed.get(p, 0) >= end for p, end in ends.items()):
                break
            time.sleep(2)
        broker.recreate_topic(topic, partitions=self.partitions[topic])
        self.lives[topic] = life + 1
        self.release.set()
        return topic

    def start_consumer(self, follow: bool = True) -> subprocess.Popen[bytes]:
        command = [self.bin("cdc-lake"), "consume", "--bootstrap-servers", self.bootstrap]
        if follow:
            command += ["--follow"]  # the default trigger, 10 s
        self.consumer_starts += 1
        return SoakProcess(self.folder, "consume", command, self.env(), self.project).launch()

    def supervise_consumer(self) -> None:
        """Keep `cdc-lake consume --follow` running, as a service manager would."""
        while not self.stop.is_set():
            if self.consumer is None or self.consumer.poll() is not None:
                if self.consumer is not None:
                    self.event("consumer_exited", f"status {self.consumer.returncode}; started again")
                    time.sleep(2)
                self.consumer = self.start_consumer()
            time.sleep(1)

    def run_dbt(self, *args: str) -> int:
        """A dbt command line (output appended to dbt.log); its exit status."""
        process = SoakProcess(self.folder, "dbt", [self.bin("dbt"), *args], self.env(), self.project)
        with self.lock:
            self.build = process.launch()
        code = self.build.wait()
        with self.lock:
            self.build = None
        return code

    def build_command(self, log: Path) -> list[str]:
        """The schedule: `cdc-lake build --every` with the soak's upkeep, logging to `log`."""
        command = [self.bin("cdc-lake"), "build", "--log", str(log), "--upkeep-every", str(self.upkeep_interval),
                   "--expire-args", UPKEEP_EXPIRE_ARGS, "--every", str(self.build_interval)]
        return command + (["--tests-every", str(self.tests_every)] if self.tests_every else [])

    def last_build_done(self) -> bool:
        """After the catch-up landing: a build that started after it ended well and its post-build
        step is logged (or three builds started after it, none well: the check will say what is
        missing)."""
        with self.lock:
            if self.caught_up is None:
                return False
            if self.post_step_of is not None and self.post_step_of >= self.caught_up:
                return True
            tried = sum(b["started"] >= self.caught_up for b in self.builds)
            # a process that dies before it logs a build counts too, or the soak would wait forever
            return max(tried, self.restarts_after_catch_up) >= LAST_BUILD_TRIES

    def supervise_builds(self) -> None:
        """Keep `cdc-lake build --every BUILD_INTERVAL` running, as a service manager would: its
        builds share one warm Spark session. Each build's start and end are lines of its log. It runs
        until the last build (see `last_build_done`), then is stopped between two builds."""
        log = self.folder / "builds.jsonl"
        command = self.build_command(log)
        offset = 0
        while not self.last_build_done():
            if self.builder is None or self.builder.poll() is not None:
                if self.builder is not None:
                    offset = self.read_build_log(log, offset)
                    self.close_open_builds(f"the build process exited with status {self.builder.returncode}")
                    time.sleep(2)
                    with self.lock:
                        if self.caught_up is not None:
                            self.restarts_after_catch_up += 1
                    if self.last_build_done():
                        break
                self.builder = SoakProcess(self.folder, "build", command, self.env(), self.project).launch()
            offset = self.read_build_log(log, offset)
            # at the end, read often: the schedule waits at least 2 s (TURN_GAP) before its next build
            time.sleep(1 if self.caught_up is None else 0.2)
        if self.builder is not None and self.builder.poll() is None:
            self.builder.send_signal(signal.SIGTERM)  # between two builds: it exits at once
            try:
                self.builder.wait(1200)
            except subprocess.TimeoutExpired:
                os.killpg(self.builder.pid, signal.SIGKILL)
        self.read_build_log(log, offset)
        if self.builder is not None:
            self.close_open_builds(f"the build process exited with status {self.builder.returncode}")

    def read_build_log(self, log: Path, offset: int) -> int:
        """Take the new complete lines of the build process's log; the offset read up to."""
        if not log.exists():
            return offset
        with open(log, encoding="utf-8") as lines:
            lines.seek(offset)
            for line in iter(lines.readline, ""):
                if not line.endswith("\n"):
                    break
                offset += len(line.encode())
                entry = json.loads(line)
                if entry["event"] in ("upkeep", "compact_latest"):  # what follows a build
                    if entry["event"] == "upkeep":
                        self.record_upkeep(entry)
                    elif entry["lines"] or entry["status"] != 0:  # it compacted, or failed
                        self.event("compact_latest", "; ".join(entry["lines"]) or f"status {entry['status']}")
                    with self.lock:
                        self.post_step_of, self.ended_build = self.ended_build, None
                    continue
                if entry["event"] == "start":
                    with self.lock:
                        self.open_build = entry["at"]
                    continue
                kind = entry.get("kind", "build")
                with self.lock:
                    started, self.open_build = self.open_build, None
                ok = entry["status"] == 0
                self.builds.append({"started": started or entry["at"], "ended": entry["at"], "ok": ok,
                                    "at": round(self.now(), 1), "kind": kind})
                with self.lock:
                    self.ended_build = (started or entry["at"]) if ok else None
                if not ok:
                    self.event("build_failed", f"status {entry['status']}")
        return offset

    def close_open_builds(self, why: str) -> None:
        with self.lock:
            started, self.open_build = self.open_build, None
        if started is not None:
            self.builds.append({"started": started, "ended": time.time(), "ok": False, "at": round(self.now(), 1)})
            self.event("build_failed", why)

    def record_upkeep(self, entry: dict[str, Any]) -> None:
        """An upkeep the build process logged (`cdc-lake build --upkeep-every`)."""
        files = {m.group(1): [int(m.group(2)), int(m.group(3))]
                 for line in entry["lines"] if (m := COMPACT_LOG.search(line))}
        compact_ok, expire_ok = entry["compact_status"] == 0, entry["expire_status"] == 0
        self.upkeeps.append({"at": round(self.now(), 1), "seconds": entry["seconds"], "compact_ok": compact_ok,
                             "expire_ok": expire_ok, "files_before_after": files})
        self.event("upkeep", f"compact {'ok' if compact_ok else 'failed'}, expire {'ok' if expire_ok else 'failed'}, "
                             f"{entry['seconds']:.0f} s")

    def inject_faults(self, broker: Any) -> None:
        from cdc_lake.servers.metastore import MetastoreServer

        rng = random.Random(self.seed)
        plan = sorted((rng.uniform(0.15, 0.85) * self.duration, fault) for fault in self.faults)
        self.event("fault_plan", ", ".join(f"{fault}@{at:.0f}s" for at, fault in plan))
        for at, fault in plan:
            if self.stop.wait(max(0.0, at - self.now())):
                return
            if fault == "kill_consumer" and self.consumer is not None:
                os.killpg(self.consumer.pid, signal.SIGKILL)
            elif fault == "kill_build":
                deadline = time.monotonic() + 120
                while self.open_build is None and time.monotonic() < deadline and not self.stop.is_set():
                    time.sleep(0.5)
                time.sleep(rng.uniform(2, 10))  # somewhere inside the build
                with self.lock:
                    building = self.open_build is not None
                if building and self.builder is not None and self.builder.poll() is None:
                    os.killpg(self.builder.pid, signal.SIGKILL)
            elif fault == "restart_broker":
                broker.restart()
            elif fault == "kill_metastore":
                pid = MetastoreServer.for_lake(self.lake).pid()
                if pid:
                    os.kill(pid, signal.SIGKILL)
            elif fault == "recreate_topic":
                self.event(fault, self.recreate_topic(broker, rng))
                continue
            self.event(fault)

    def analyst_query_seconds(self) -> float | None:
        """The analyst query's seconds (NaN if it failed), None while cdc_current has no row."""
        done = subprocess.run([sys.executable, "-c", ANALYST_SCRIPT, ANALYST_QUERY], cwd=self.project,
                              env=self.env(), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            self.event("analyst_query_failed", done.stderr[-500:])
            return float("nan")
        last = done.stdout.strip().splitlines()[-1]
        return None if last == "empty" else float(last)

    # ------------------------------------------------------------------ the run

    def run(self) -> dict[str, Any]:
        from cdc_lake.servers.kafka_broker import LocalKafka
        from cdc_lake.testing.harness import copy_project

        self.project.mkdir(parents=True)
        copy_project(self.project)  # dbt writes target/ and logs/ into its project
        workload = self.generate()
        broker = LocalKafka(self.folder / "kafka").start()
        self.bootstrap = broker.bootstrap
        threads: list[threading.Thread] = []
        result: dict[str, Any] = {}
        try:
            records = self.workload_records(workload, broker.bootstrap)
            split = int(len(records) * self.history / (self.history + self.rate * self.duration))
            if split:
                self.land_history(records[:split], broker.bootstrap)
            else:
                # the pipeline exists before the soak begins, as in production (seeds, empty tables);
                # its data tests first run in the schedule's first build, on the first records
                self.run_dbt("build", "--resource-type", "seed", "--resource-type", "model")
            self.began = time.monotonic()
            self.event("start", f"{self.changes} changes over {self.duration:.0f}s"
                       + (f", the first {split:,} records landed and built before" if split else ""))
            producer = threading.Thread(target=self.produce, args=(records[split:], broker.bootstrap), daemon=True)
            producer.start()

            def analyst_at_start() -> None:
                # after the first build that put rows in cdc_current
                built = 0
                while not self.stop.is_set():
                    ok = sum(b["ok"] for b in self.builds)
                    if ok > built:
                        built = ok
                        seconds = self.analyst_query_seconds()
                        if seconds is not None:
                            self.event("analyst_start", f"{seconds:.3f} s, after {ok} build(s)")
                            result["analyst_start_seconds"] = seconds
                            return
                    time.sleep(2)

            builds = threading.Thread(target=self.supervise_builds, daemon=True)
            builds.start()
            for target, args in ((self.supervise_consumer, ()), (self.inject_faults, (broker,)),
                                 (analyst_at_start, ()), (self.sample_cpu, ())):
                threads.append(threading.Thread(target=target, args=args, daemon=True))
                threads[-1].start()
            producer.join()
            production_seconds = self.now()
            self.stop.set()  # no more faults or consumer restarts; the schedule goes on
            for thread in threads:
                thread.join()
            if self.consumer is not None and self.consumer.poll() is None:
                os.killpg(self.consumer.pid, signal.SIGINT)
                try:
                    self.consumer.wait(120)
                except subprocess.TimeoutExpired:
                    os.killpg(self.consumer.pid, signal.SIGKILL)
            self.event("catch_up", "cdc-lake consume without --follow; the schedule's next build is the last")
            self.start_consumer(follow=False).wait()
            with self.lock:
                self.caught_up = time.time()
            builds.join()
            self.event("last_build", "built after the catch-up, with what follows a build; the schedule stopped")
            result.update(self.check(workload))
            result["production_seconds"] = production_seconds
        finally:
            self.stop.set()
            for process in (self.consumer, self.build, self.builder):
                if process is not None and process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)
            broker.stop()
            from cdc_lake.servers.metastore import MetastoreServer

            MetastoreServer.for_lake(self.lake).stop()
        return result

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


# ---------------------------------------------------------------------- report


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def summarize(soak: Soak, result: dict[str, Any], command: str) -> dict[str, Any]:
    delays = [d for _, d in result["freshness"]]
    return {
        "command": command,
        "finished_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "seed": soak.seed, "faults": soak.faults, "duration_seconds": soak.duration, "rate": soak.rate,
        "build_interval": soak.build_interval, "upkeep_interval": soak.upkeep_interval,
        "changes": soak.changes,
        "produced_records": soak.produced, "landed_records": result["landed"], "rejected": result["rejected"],
        # change records of every format landed per second of production
        "changes_per_second": result["change_records"] / result["production_seconds"],
        "freshness_p50": percentile(delays, 0.5), "freshness_p95": percentile(delays, 0.95),
        "freshness_max": max(delays) if delays else float("nan"), "freshness_points": len(delays),
        "analyst_start_seconds": result.get("analyst_start_seconds", float("nan")),
        "analyst_end_seconds": result.get("analyst_end_seconds", float("nan")),
        "builds": len(soak.builds), "failed_builds": sum(not b["ok"] for b in soak.builds),
        # how long a successful build took: freshness is about twice this when builds run back to back
        "build_seconds": [round(b["ended"] - b["started"], 1) for b in soak.builds if b["ok"]],
        "consumer_starts": soak.consumer_starts, "events": soak.events, "upkeeps": soak.upkeeps,
        "resent": dict(soak.resent), "maybe_twice": soak.maybe_twice,
        "problems": result["problems"],
    }


def plot(summary: dict[str, Any], points: list[tuple[float, float]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(figsize=(10, 4))
    axes.scatter([x for x, _ in points], [y for _, y in points], s=2, alpha=0.4, label="a change's freshness")
    faults = [e for e in summary["events"] if e["kind"] in KNOWN_FAULTS]
    for event in faults:
        axes.axvline(event["at"], color="red", alpha=0.6, linestyle="--")
        axes.annotate(event["kind"], (event["at"], 0), rotation=90, fontsize=7, va="bottom", color="red")
    for upkeep in summary["upkeeps"]:
        axes.axvline(upkeep["at"], color="green", alpha=0.3)
    axes.set_xlabel("seconds into the soak (when the change was produced)")
    axes.set_ylabel("seconds until a build showed it")
    axes.set_title(f"Soak: {summary['changes']} simulated changes, {summary['rate']:.0f} change records/s, "
                   f"seed {summary['seed']} (red: faults, green: upkeep)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    return True


def render(summary: dict[str, Any], plot_name: str | None) -> str:
    ratio = summary["analyst_end_seconds"] / summary["analyst_start_seconds"]
    ok = not summary["problems"]
    lines = [
        "# Soak: a day in production, compressed",
        "",
        f"`{summary['command']}` (finished {summary['finished_at']}; generated by `python -m cdc_lake.bench.soak`).",
        "",
        f"{summary['changes']:,} simulated changes, each written by every format ({summary['produced_records']:,} "
        f"Kafka records with the duplicates, control records and injected malformed ones; RATE counts the formats' "
        f"change records together), produced over {summary['duration_seconds']:.0f} s "
        f"into a local broker; `cdc-lake consume --follow`; `cdc-lake build --every "
        f"{summary.get('build_interval', 60):.0f} --upkeep-every {summary.get('upkeep_interval', 600):.0f}` "
        f"(`cdc_compact` and `cdc_expire_snapshots` after a build when due, `cdc_compact_latest` after the "
        f"others); faults from the schedule of seed {summary['seed']}. The analyst query's median of fifteen "
        f"runs after thirty in its session, holding the lake's dbt turn: at the start after the first build "
        f"that put rows in cdc_current, "
        f"the consumer still landing; at the end after the last build (the schedule's first after the last landing).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| change records/s sustained (every format, production) | {summary['changes_per_second']:.1f} |",
        f"| freshness p50 / p95 / max (s, produced to shown by a build) | {summary['freshness_p50']:.0f} / "
        f"{summary['freshness_p95']:.0f} / {summary['freshness_max']:.0f} ({summary['freshness_points']:,} changes) |",
        f"| analyst query on `cdc_current`, start / end (s) | {summary['analyst_start_seconds']:.2f} / "
        f"{summary['analyst_end_seconds']:.2f} ({ratio:.2f}×) |",
        f"| builds (failed: killed or during an outage) | {summary['builds']} ({summary['failed_builds']}) |",
        f"| successful builds' durations, in order (s) | {', '.join(f'{b:.0f}' for b in summary['build_seconds'])} |",
        f"| consumer starts | {summary['consumer_starts']} |",
        f"| records landed / rejected | {summary['landed_records']:,} / {summary['rejected']} |",
        f"| records sent again by a new producer after one gave up (per topic life) | "
        f"{', '.join(f'{k}: {v:,}' for k, v in summary.get('resent', {}).items()) or 'none'} |",
        "",
        "Targets:",
        f"- Nothing lost, nothing doubled, every fault survived without a hand step: **{'met' if ok else 'missed'}**"
        + ("" if ok else " — " + "; ".join(summary["problems"])),
        f"- Freshness p95 ≤ 180 s: **{'met' if summary['freshness_p95'] <= 180 else 'missed'}** "
        f"({summary['freshness_p95']:.0f} s)",
        f"- Analyst query at the end ≤ 1.2× the start: **{'met' if ratio <= 1.2 else 'missed'}** ({ratio:.2f}×)",
        "",
        "Faults and upkeep (seconds into the soak):",
        "",
        *[f"- {e['at']:.0f} s: {e['kind']} {e['detail']}".rstrip() for e in summary["events"]],
        "",
        "Files per table at each upkeep (data and delete files before → after `cdc_compact`):",
        "",
        *[f"- {u['at']:.0f} s: " + ", ".join(f"{t.split('.')[-1]} {a}→{b}" for t, (a, b) in
                                             sorted(u["files_before_after"].items())) for u in summary["upkeeps"]],
    ]
    if plot_name:
        lines += ["", f"![freshness over time]({plot_name})"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cdc_lake.bench.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=1800.0, help="seconds of production (default 1800)")
    parser.add_argument("--rate", type=float, default=100.0,
                        help="change records per second, all formats together (default 100)")
    parser.add_argument("--seed", type=int, default=44, help="workload and fault schedule seed")
    parser.add_argument("--build-interval", type=float, default=60.0, help="seconds between build starts")
    parser.add_argument("--upkeep-interval", type=float, default=600.0, help="seconds between upkeeps")
    parser.add_argument("--faults", default=",".join(FAULTS),
                        help=f"comma-separated faults, each once per mention (default {','.join(FAULTS)}; "
                        "also kill_metastore)")
    parser.add_argument("--report", default=str(PROJECT_DIR / "docs" / "soak.md"))
    parser.add_argument("--results", default=str(PROJECT_DIR / "bench" / "results" / "soak.json"))
    parser.add_argument("--plot", default=str(PROJECT_DIR / "docs" / "soak.png"))
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="cdc_lake_soak_"))
    # a SIGTERM (a CI timeout, Ctrl-C's cousin) still stops the broker and the processes
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    faults = [f for f in args.faults.split(",") if f]
    unknown = sorted(set(faults) - KNOWN_FAULTS)
    if unknown:
        parser.error(f"unknown faults: {', '.join(unknown)} (known: {', '.join(sorted(KNOWN_FAULTS))})")
    soak = Soak(folder, args.duration, args.rate, args.seed, args.build_interval, args.upkeep_interval, faults)
    try:
        result = soak.run()
    finally:
        keep = os.environ.get("CDC_LAKE_SOAK_KEEP")
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    command = " ".join(["python -m cdc_lake.bench.soak", *(argv if argv is not None else sys.argv[1:])])
    summary = summarize(soak, result, command)
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    Path(args.results).write_text(json.dumps(summary, indent=2) + "\n")
    plotted = plot(summary, result["freshness"], Path(args.plot))
    Path(args.report).write_text(render(summary, Path(args.plot).name if plotted else None))
    print(render(summary, None))
    return 0 if not summary["problems"] else 1


if __name__ == "__main__":
    sys.exit(main())
