"""cdc_lake.servers.processes on real child processes, without Spark: command lines, liveness (a zombie is
dead), process groups, and which process holds a file open."""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from cdc_lake.servers.metastore import DATABASE, embedded_holder
from cdc_lake.servers.ports import HOST, free_port, port_is_free, port_open
from cdc_lake.servers.processes import (
    CpuSnapshot,
    cmdline,
    cpu_by_kind,
    cpu_snapshot,
    group_alive,
    is_alive,
    lock_holder,
    peak_rss_bytes,
    stop_group,
)


def _exited_unreaped(pid: int) -> None:
    """Wait until the child `pid` has exited, leaving it a zombie (not reaped)."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


def _until(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen]:
    """`sleep 30`, leading its own session (so its pid is its process group's id)."""
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def test_running_zombie_and_reaped(sleeper: subprocess.Popen) -> None:
    pid = sleeper.pid
    # Popen returns once exec has begun (its error pipe closes on exec), a moment before the kernel
    # has set the new program's arguments: until then /proc/<pid>/cmdline reads empty.
    assert _until(lambda: cmdline(pid) != [])
    assert cmdline(pid) == ["sleep", "30"]
    assert is_alive(pid)
    assert group_alive(pid)

    sleeper.kill()
    _exited_unreaped(pid)
    assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # the case under test
    assert not is_alive(pid)
    assert not group_alive(pid)  # killpg(pgid, 0) still succeeds here
    assert cmdline(pid) == []

    sleeper.wait()
    assert not is_alive(pid)
    assert not group_alive(pid)
    assert cmdline(pid) == []


def test_group_alive_while_a_member_lives() -> None:
    # The leader exits (and stays a zombie) while the sleep it started in the background lives on.
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 30 & echo $!"], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        member = int(leader.stdout.readline())
        _exited_unreaped(leader.pid)
        assert not is_alive(leader.pid)
        assert is_alive(member)
        assert os.getpgid(member) == leader.pid
        assert group_alive(leader.pid)
        os.kill(member, signal.SIGKILL)
        # The orphan is reaped by init, or stays a zombie where nothing reaps: dead either way.
        assert _until(lambda: not group_alive(leader.pid))
    finally:
        try:
            os.killpg(leader.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        leader.wait()
        leader.stdout.close()


def test_no_such_process() -> None:
    for pid in (0, -1, 2**22 + 1):  # above the largest pid Linux hands out
        assert cmdline(pid) == []
        assert not is_alive(pid)
    assert is_alive(os.getpid())
    assert cmdline(os.getpid()) == psutil.Process().cmdline() != []


# Opens and locks the file named by its argument, says so, and sleeps (a command line of > 160 characters).
HOLD = (
    "import fcntl, sys, time; f = open(sys.argv[1], 'r+b'); fcntl.lockf(f, fcntl.LOCK_EX); "
    "print('held', flush=True); time.sleep(30)"
)


@pytest.fixture
def holder_of(tmp_path: Path) -> Iterator:
    """Start a Python child that opens (and locks) the given file and sleeps; its argv is `.args`."""
    started: list[subprocess.Popen] = []

    def start(path: Path) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_lock_holder(tmp_path: Path, holder_of) -> None:
    locked = tmp_path / "file.lck"
    locked.write_bytes(b"")
    assert lock_holder(locked) is None

    child = holder_of(locked)
    expected = (child.pid, " ".join(child.args))
    assert lock_holder(locked) == expected
    assert lock_holder(str(locked)) == expected
    (tmp_path / "link.lck").symlink_to(locked)  # the kernel reports the file's real path
    assert lock_holder(tmp_path / "link.lck") == expected
    assert lock_holder(tmp_path / "other.lck") is None

    child.kill()
    child.wait()
    assert lock_holder(locked) is None


def test_embedded_holder(tmp_path: Path, holder_of) -> None:
    lake = tmp_path / "lake"
    lock = lake / DATABASE / "dbex.lck"
    lock.parent.mkdir(parents=True)
    assert embedded_holder(lake) is None  # no lock file
    lock.write_bytes(b"")
    assert embedded_holder(lake) is None  # a lock file nobody holds

    child = holder_of(lock)
    pid, command = embedded_holder(lake)
    assert pid == child.pid
    assert command == " ".join(child.args)[:160]
    assert len(command) == 160  # HOLD makes the command line longer than that
    with open(lock, "rb") as handle:  # embedded_holder's probe left the child's lock in place
        with pytest.raises(OSError):
            fcntl.lockf(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
def test_peak_rss() -> None:
    assert peak_rss_bytes(os.getpid()) >= psutil.Process().memory_info().rss > 0
    assert peak_rss_bytes(2**22 + 1) == 0


def test_cpu_seconds_by_thread_kind() -> None:
    # two threads of this process renamed as a JVM names its task and JIT threads (Linux keeps 15
    # characters), each spinning for CPU; read while they are still alive
    burned, measured = threading.Barrier(3), threading.Event()

    def spin(name: str) -> None:
        Path(f"/proc/self/task/{threading.get_native_id()}/comm").write_text(name[:15])
        end = time.thread_time() + 0.4
        while time.thread_time() < end:
            pass
        burned.wait()
        measured.wait()

    names = ("Executor task launch worker", "C2 CompilerThread0")
    threads = [threading.Thread(target=spin, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    burned.wait()
    now = cpu_snapshot(os.getpid())
    assert now is not None
    seconds = cpu_by_kind(now)
    measured.set()
    for thread in threads:
        thread.join()
    assert seconds["tasks"] >= 0.35 and seconds["jit"] >= 0.35
    assert seconds["gc"] < 0.35  # no thread of that kind spun
    assert seconds["total"] >= seconds["tasks"] + seconds["jit"]  # the process's time holds its threads'
    rest = seconds["total"] - seconds["tasks"] - seconds["jit"] - seconds["gc"]
    assert seconds["other"] == pytest.approx(max(0.0, rest))
    assert cpu_snapshot(2**22 + 1) is None  # no such process


def test_cpu_by_kind_between_two_snapshots_counts_only_live_threads() -> None:
    # a task thread that ended between the snapshots (Spark ends idle ones), one that went on, one
    # that started, and a thread id Linux gave again to a new JIT thread
    before = CpuSnapshot(100.0, {1: ("tasks", 30.0), 2: ("tasks", 5.0), 4: ("jit", 9.0)})
    after = CpuSnapshot(112.0, {2: ("tasks", 7.0), 3: ("tasks", 1.5), 4: ("jit", 2.0), 5: ("gc", 0.5)})
    seconds = cpu_by_kind(after, before)
    assert seconds["total"] == pytest.approx(12.0)
    assert seconds["tasks"] == pytest.approx(2.0 + 1.5)  # not 8.5 - 35: the ended thread is not subtracted
    assert seconds["jit"] == pytest.approx(2.0) and seconds["gc"] == pytest.approx(0.5)
    assert seconds["other"] == pytest.approx(12.0 - 3.5 - 2.0 - 0.5)
    assert min(seconds.values()) >= 0


def test_stop_group_stops_the_group(tmp_path: Path) -> None:
    """A leader and its child stop on SIGTERM; a leader that ignores SIGTERM is killed after the timeout."""
    script = "sleep 60 & echo $! > child.pid; wait"
    leader = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, start_new_session=True)
    while not (tmp_path / "child.pid").exists() or not (tmp_path / "child.pid").read_text().strip():
        time.sleep(0.05)
    child = int((tmp_path / "child.pid").read_text())
    assert is_alive(child)
    stop_group(leader.pid, timeout=10)
    assert not psutil.pid_exists(leader.pid)  # stopped and reaped
    deadline = time.monotonic() + 5
    while is_alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not is_alive(child)  # the group's other member got the signal too

    stubborn = subprocess.Popen(["bash", "-c", "trap '' TERM; sleep 60 & wait; sleep 60"], start_new_session=True)
    time.sleep(0.3)  # let bash install its trap
    started = time.monotonic()
    stop_group(stubborn.pid, timeout=1)
    assert not psutil.pid_exists(stubborn.pid)  # killed (SIGTERM was trapped) and reaped
    assert time.monotonic() - started >= 1
    stop_group(stubborn.pid, timeout=1)  # already stopped: nothing to do


def test_stop_group_of_a_process_that_leads_none_escalates_and_reaps(tmp_path: Path) -> None:
    """A process that ignores SIGTERM is killed after the timeout, and a child is reaped (no zombie)."""
    ready = tmp_path / "ready"
    stubborn = subprocess.Popen([sys.executable, "-c", (
        "import signal, time, pathlib; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"pathlib.Path({str(ready)!r}).touch(); time.sleep(60)")])
    assert _until(ready.exists)
    started = time.monotonic()
    stop_group(stubborn.pid, timeout=1.0)
    assert time.monotonic() - started >= 1.0  # SIGTERM was ignored: the timeout ran out first
    assert not psutil.pid_exists(stubborn.pid)  # killed and reaped: not even a zombie is left
    stop_group(stubborn.pid, timeout=1.0)  # a process already gone is no error


def test_stop_group_gives_the_grace_period_first(sleeper: subprocess.Popen) -> None:
    """With a grace period, nothing is sent while it lasts: the process ends by itself."""
    threading.Timer(0.5, sleeper.terminate).start()  # its own shutdown, requested elsewhere
    started = time.monotonic()
    stop_group(sleeper.pid, timeout=5.0, grace=5.0)
    assert 0.4 <= time.monotonic() - started < 4.0  # waited for it, and no longer than needed
    assert not is_alive(sleeper.pid)


def test_ports() -> None:
    port = free_port()
    assert port_is_free(port) and not port_open(port)
    with socket.socket() as server:
        server.bind((HOST, port))
        server.listen()
        assert port_open(port) and not port_is_free(port)
