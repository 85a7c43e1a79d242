"""The soak's processes, kept running as a service manager would: `cdc-lake consume --follow`,
`cdc-lake build --every` (its builds and upkeeps read from its log), the soak's own dbt command
lines, and the CPU their process trees use."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from cdc_lake.bench.soak.state import SoakState
from cdc_lake.servers.supervisor import LocalServer

# the soak's snapshot expiry: keep six minutes of time travel, so that its upkeeps expire some
UPKEEP_EXPIRE_ARGS = "{older_than_hours: 0.1, retain_last: 5}"
# builds the schedule may start after the catch-up landing before the soak stops waiting for one
# that ends well (one killed just before the end may leave the next a retry to do)
LAST_BUILD_TRIES = 3
COMPACT_LOG = re.compile(r"(\S+): (\d+) data and delete files, now (\d+)")


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


class ProcessSupervision(SoakState):
    """Starts the consumer and the build schedule, starts them again when they die, and reads what
    the schedule logs."""

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
