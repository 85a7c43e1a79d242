"""The soak's workload: the simulator's records of every format, produced into their topics in the
simulator's time order, paced over the duration, by producers that are replaced when they give up."""

from __future__ import annotations

import heapq
import subprocess
import time
from pathlib import Path
from typing import Any

from cdc_lake.bench.soak.state import SoakState
from cdc_lake.formats import FORMATS


class WorkloadProducer(SoakState):
    """Generates the workload and produces it, as the CDC tools upstream of the lake would."""

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
