"""The soak's faults, at the moments a seeded schedule picks: kill -9 of the consumer, of the build
process while it builds, of the metastore server; a broker restart; a topic deleted and created
again as an operator would."""

from __future__ import annotations

import os
import random
import re
import signal
import time
from typing import Any

from cdc_lake.bench.soak.state import RECREATED_FORMAT, SoakState


class FaultSchedule(SoakState):
    """Injects the soak's faults; nobody steps in afterwards."""

    def inject_faults(self, broker: Any) -> None:
        from cdc_lake.servers.metastore import MetastoreServer

        rng = random.Random(self.seed)
        plan = sorted((rng.uniform(0.15, 0.85) * self.duration, fault) for fault in self.faults)
        self.event("fault_plan", ", ".join(f"{fault}@{at:.0f}s" for at, fault in plan))
        for at, fault in plan:
            if self.stop.wait(max(0.0, at - self.now())):
                return
            if fault == "kill_consumer":
                # a live consumer: one killed a moment before (two faults due together, or after a
                # recreated topic held the schedule) is started again by its supervisor within 2 s
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not self.stop.is_set() and (
                        self.consumer is None or self.consumer.poll() is not None):
                    time.sleep(0.5)
                if self.consumer is not None and self.consumer.poll() is None:
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
