"""The soak's shared state: its configuration, what its jobs record while it runs, and the few
helpers every job uses (the folders, the processes' environment, the clock, the event log). Each
job (producer, faults, supervision, check) is a class of its own over this state; `Soak` composes
them."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdc_lake.env import PROJECT_DIR

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


@dataclass
class SoakState:
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

