"""What this machine can tell about its processes (and itself), in one place, through psutil.

Every function answers "nothing" (an empty list, False, None, 0) instead of raising when the
process is gone, is a zombie, or belongs to another user who hides it, so callers can poll freely.

Two answers psutil does not give are still read from Linux's /proc by hand, here and nowhere else:
a process's peak resident set size (`VmHWM`) and its reset, and the CPU's model name; see below.
"""

from __future__ import annotations

import os
import platform
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import psutil


def cmdline(pid: int) -> list[str]:
    """The process's arguments; empty when it is gone, a zombie, or hidden from this user."""
    if pid <= 0:
        return []
    try:
        return psutil.Process(pid).cmdline()
    except psutil.Error:
        return []


def is_alive(pid: int) -> bool:
    """True for a running process; a zombie (exited, not yet reaped) counts as dead."""
    if pid <= 0:
        return False
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def group_alive(pgid: int) -> bool:
    """True while process group `pgid` has a member that is not a zombie."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg(0) also succeeds when every member is a zombie: look for a live one.
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                return True
        except (OSError, psutil.Error):
            continue
    return False


def stop_group(pid: int, timeout: float, grace: float = 0.0) -> None:
    """Stop a process by pid (it may have been started by another command: no Popen needed), with
    its process group when it leads one (started with start_new_session=True), so its children stop
    too; a group it does not lead is never signalled. Waits `grace` seconds for it to end by itself
    (after a shutdown request of the caller's), then sends SIGTERM, then SIGKILL after `timeout`
    seconds. Reaps it when it is this process's child."""
    try:
        pgid = pid if os.getpgid(pid) == pid else None
    except ProcessLookupError:
        _reap(pid)
        return

    def gone() -> bool:
        _reap(pid)
        return not (group_alive(pgid) if pgid is not None else is_alive(pid))

    for sig, wait in ((None, grace), (signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        if sig is not None:
            try:
                if pgid is not None:
                    os.killpg(pgid, sig)
                else:
                    os.kill(pid, sig)
            except ProcessLookupError:
                break
        deadline = time.monotonic() + wait
        while not gone() and time.monotonic() < deadline:
            time.sleep(0.1)
        if gone():
            break
    _reap(pid)


def _reap(pid: int) -> None:
    """Collect a child that exited (a no-op for a process this one did not start)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def lock_holder(path: str | os.PathLike[str]) -> tuple[int, str] | None:
    """(pid, command line) of a process that has the file `path` open; None when no visible one has."""
    target = os.path.realpath(path)
    for proc in psutil.process_iter():
        try:
            if any(f.path == target for f in proc.open_files()):
                return proc.pid, " ".join(cmdline(proc.pid))
        except (OSError, psutil.Error):
            continue  # gone meanwhile, or another user's (its open files are not readable)
    return None


# psutil has no peak resident set size: memory_info() / memory_full_info() give the current RSS,
# USS, PSS and swap only, and nothing resets a peak. Linux keeps one per process (`VmHWM` in
# /proc/<pid>/status) and resets it when 5 is written to /proc/<pid>/clear_refs (Linux >= 4.0),
# so these two read /proc by hand; where that fails they answer False / 0.


def reset_peak_rss(pid: int) -> bool:
    """Reset the process's resident set high-water mark (VmHWM); False when that is not possible."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_bytes(pid: int) -> int:
    """The process's resident set high-water mark (VmHWM) in bytes; 0 when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


# A JVM thread's kind by the start of its Linux name (15 characters at most): Spark's executor
# task threads run the queries' tasks, the compiler threads are the JIT's (C1 and C2), the GC
# workers Parallel GC's and G1's.
THREAD_KINDS = {"Executor task l": "tasks", "C1 CompilerThre": "jit", "C2 CompilerThre": "jit", "GC Thread#": "gc"}


@dataclass(frozen=True)
class CpuSnapshot:
    """A process's CPU seconds (user + system) at one moment: in total, and per live thread of a
    kind in THREAD_KINDS (thread id -> kind, seconds)."""

    total: float
    threads: dict[int, tuple[str, float]]


def cpu_snapshot(pid: int) -> CpuSnapshot | None:
    """The process's CPU now (CpuSnapshot), or None when it cannot be read. psutil gives the
    times; a thread's name it has not, so that comes from /proc."""
    try:
        process = psutil.Process(pid)
        times = process.cpu_times()
        threads = process.threads()
    except (psutil.Error, OSError):
        return None
    kinds: dict[int, tuple[str, float]] = {}
    for thread in threads:
        try:
            name = Path(f"/proc/{pid}/task/{thread.id}/comm").read_text().strip()
        except OSError:
            continue  # the thread ended while we read
        kind = next((k for prefix, k in THREAD_KINDS.items() if name.startswith(prefix)), None)
        if kind is not None:
            kinds[thread.id] = (kind, thread.user_time + thread.system_time)
    return CpuSnapshot(times.user + times.system, kinds)


def cpu_by_kind(after: CpuSnapshot, before: CpuSnapshot | None = None) -> dict[str, float]:
    """CPU seconds from `before` (the process's start when None) to `after`: in total, per thread
    kind (THREAD_KINDS), and `other` for the rest. A kind counts its threads alive at `after`, less
    what each had at `before`; what a thread used before it ended (Spark ends an idle task thread
    after a minute) is in `other`, so no kind ever goes below zero."""
    kinds = dict.fromkeys(THREAD_KINDS.values(), 0.0)
    for tid, (kind, seconds) in after.threads.items():
        earlier = before.threads.get(tid) if before else None
        # a thread id Linux gave again to a new thread has less time than the old one had
        used = seconds - earlier[1] if earlier and earlier[0] == kind and earlier[1] <= seconds else seconds
        kinds[kind] += used
    total = after.total - (before.total if before else 0.0)
    return {"total": total, **kinds, "other": max(0.0, total - sum(kinds.values()))}


def cpu_model() -> str:
    """The CPU's model name: /proc/cpuinfo's (psutil has none), else platform.processor()."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()
