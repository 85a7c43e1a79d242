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
import subprocess
import time
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


def stop_process_group(process: subprocess.Popen[bytes] | None, timeout: float) -> None:
    """SIGTERM to the process group that `process` leads (started with start_new_session=True), so
    its children stop too; SIGKILL after `timeout` seconds. Returns once the leader is reaped."""
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout)
    except ProcessLookupError:
        process.wait()
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def stop_pid(pid: int, timeout: float, grace: float = 0.0) -> None:
    """Stop a process known by its pid (one another command may have started, so no Popen): wait
    `grace` seconds for it to end by itself (after a shutdown request of its own), then SIGTERM,
    then SIGKILL after `timeout` seconds. Reaps it when it is this process's child."""
    for sig, wait in ((None, grace), (signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        if sig is not None:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
        deadline = time.monotonic() + wait
        while is_alive(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.2)
        if not is_alive(pid):
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


def cpu_model() -> str:
    """The CPU's model name: /proc/cpuinfo's (psutil has none), else platform.processor()."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()
