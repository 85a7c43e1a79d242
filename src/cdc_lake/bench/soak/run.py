"""The soak's run: the pipeline made, the history landed, the jobs started side by side (producer,
consumer and build supervision, faults, the analyst at the start, CPU sampling), the end (a last
landing, the schedule's next build) and the check."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from typing import Any

from cdc_lake.bench.soak.check import TruthCheck
from cdc_lake.bench.soak.faults import FaultSchedule
from cdc_lake.bench.soak.producer import WorkloadProducer
from cdc_lake.bench.soak.supervision import ProcessSupervision


class Soak(WorkloadProducer, FaultSchedule, ProcessSupervision, TruthCheck):
    """A day in production, compressed: each job is a class over the shared `SoakState`; this one
    runs them together."""

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
