"""What one timed step costs: wall time, machine load, driver memory, GC time and CPU.

The driver is the JVM that PySpark started (in local mode it also runs the executors). Memory is
read two ways: the JVM heap in use, sampled every `SAMPLE_SECONDS` through py4j, and the resident
set high-water mark (`VmHWM` in /proc/<pid>/status) of the java process, reset before each step
by writing 5 to /proc/<pid>/clear_refs (Linux >= 4.0; if that fails the figure is the process's
lifetime peak, and `rss_reset` says so). Both go through `cdc_lake.servers.processes` (psutil has no
peak RSS, so that module reads these two /proc files itself). CPU seconds are read from /proc too:
the benchmark's own process (dbt runs in it) and the driver JVM's threads by kind (Spark's tasks,
the JIT's compilers, GC, the rest), so a step's time can be told apart from the JVM warming up.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from cdc_lake.servers.processes import CpuSnapshot, cpu_by_kind, cpu_snapshot, peak_rss_bytes, reset_peak_rss

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SAMPLE_SECONDS = 0.2
MB = 1024 * 1024


@dataclass
class Measurement:
    label: str
    seconds: float = 0.0
    load_before: float = 0.0
    load_after: float = 0.0
    heap_peak_mb: float = 0.0
    heap_max_mb: float = 0.0
    rss_peak_mb: float = 0.0
    rss_reset: bool = False
    gc_seconds: float = 0.0
    rows: int | None = None
    # CPU seconds: `python` the benchmark's process (dbt's Python), the others the driver JVM's
    # threads (servers.processes.cpu_by_kind: total, tasks, jit, gc, other)
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    # statements dbt sent to Spark in the step (DbtProject.statements), when it ran dbt
    statements: int | None = None

    def as_dict(self) -> dict:
        return asdict(self)


class DriverProbe:
    """Measures steps run on the driver JVM of `spark`."""

    def __init__(self, spark: SparkSession) -> None:
        self._jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
        self.pid = int(self._jvm.java.lang.ProcessHandle.current().pid())
        runtime = self._jvm.java.lang.Runtime.getRuntime()
        self.heap_max_mb = runtime.maxMemory() / MB

    def _heap_used_mb(self) -> float:
        usage = self._jvm.java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage()
        return usage.getUsed() / MB

    def _gc_seconds(self) -> float:
        beans = self._jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
        return sum(max(0, bean.getCollectionTime()) for bean in beans) / 1000.0

    def _reset_rss_peak(self) -> bool:
        return reset_peak_rss(self.pid)

    def _rss_peak_mb(self) -> float:
        return peak_rss_bytes(self.pid) / MB

    def _cpu_seconds(self) -> tuple[float, CpuSnapshot | None]:
        own = os.times()
        return own.user + own.system, cpu_snapshot(self.pid)

    @contextmanager
    def measure(self, label: str) -> Iterator[Measurement]:
        m = Measurement(label, heap_max_mb=self.heap_max_mb, load_before=os.getloadavg()[0])
        m.rss_reset = self._reset_rss_peak()
        gc_before = self._gc_seconds()
        python_before, jvm_before = self._cpu_seconds()
        peak = [self._heap_used_mb()]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(SAMPLE_SECONDS):
                try:
                    peak[0] = max(peak[0], self._heap_used_mb())
                except Exception:  # noqa: BLE001 - the gateway may be busy or closing; a sample is optional
                    pass

        sampler = threading.Thread(target=sample, name=f"heap-sampler-{label}", daemon=True)
        sampler.start()
        started = time.monotonic()
        try:
            yield m
        finally:
            m.seconds = time.monotonic() - started
            stop.set()
            sampler.join()
            m.heap_peak_mb = max(peak[0], self._heap_used_mb())
            m.rss_peak_mb = self._rss_peak_mb()
            m.gc_seconds = self._gc_seconds() - gc_before
            python_after, jvm_after = self._cpu_seconds()
            jvm = cpu_by_kind(jvm_after, jvm_before) if jvm_after and jvm_before else {}
            m.cpu_seconds = {k: round(v, 2) for k, v in {"python": python_after - python_before, **jvm}.items()}
            m.load_after = os.getloadavg()[0]
