"""The lake's metastore server (`cdc-lake metastore`) and `cdc-lake sql`'s text handling, without
Spark: the server's life cycle on a private lake, and the statement splitter and table printer."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cdc_lake.servers.metastore import MetastoreServer, keep_serving
from cdc_lake.sql_shell import format_table, split_statements

BIN = Path(sys.executable).parent


def cli(lake: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CDC_LAKE_DIR": str(lake)}
    return subprocess.run([str(BIN / "cdc-lake"), *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def server(tmp_path) -> MetastoreServer:
    server = MetastoreServer.for_lake(tmp_path / "lake")
    yield server
    server.stop()  # whatever happened
    assert server.pid() is None


def test_start_reuse_status_stop(server: MetastoreServer) -> None:
    assert cli(server.lake, "metastore", "status").returncode == 1
    started = cli(server.lake, "metastore", "start")
    assert started.returncode == 0, started.stderr
    pid, port = server.pid(), server.port()
    assert pid is not None and port is not None and server.is_running()
    assert server.url() == f"jdbc:derby://127.0.0.1:{port}/metastore_db;create=true"
    # a second start, from another process, reuses the running server
    again = cli(server.lake, "metastore", "start")
    assert "already running" in again.stdout and server.pid() == pid
    status = cli(server.lake, "metastore", "status")
    assert status.returncode == 0 and f"127.0.0.1:{port}" in status.stdout
    assert cli(server.lake, "metastore", "stop").stdout.strip() == "metastore server stopped"
    assert server.pid() is None and not server.is_running()
    # restarted on the port it had, so that a dbt profile rendered before still points at it
    assert server.start() and server.port() == port


def wait_until(condition, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def test_a_killed_server_is_started_again_by_a_watching_process(server: MetastoreServer) -> None:
    """A kill -9 of the server (issue 44's soak fault): a process that uses the lake starts it again
    on the same port, so the profiles already rendered still reach it; a stop on purpose is kept."""
    assert cli(server.lake, "metastore", "start").returncode == 0
    pid, port = server.pid(), server.port()
    keep_serving(server, seconds=0.5)
    # a client connected, as every Spark process is: the killed server's side of it stays in the
    # kernel (FIN_WAIT / TIME_WAIT) and must not keep the port from the new server
    client = socket.create_connection(("127.0.0.1", port))
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: server.is_running() and server.pid() not in (None, pid))
    assert server.port() == port
    client.close()
    assert cli(server.lake, "metastore", "stop").stdout.strip() == "metastore server stopped"
    time.sleep(2.0)  # four looks of the watch
    assert server.pid() is None and not server.is_running()


def test_split_statements_respects_quotes_and_comments() -> None:
    text = "select ';' as a, `x;y` from t -- not here; \n; /* nor; here */ show tables; select 'it\\'s;'; sel"
    statements, rest = split_statements(text)
    assert statements == [
        "select ';' as a, `x;y` from t -- not here;",
        "/* nor; here */ show tables",
        "select 'it\\'s;'",
    ]
    assert rest == " sel"


def test_format_table() -> None:
    lines = format_table(["id", "image"], [["1", None], ["22", "{a -> " + "x" * 20 + "}"]], max_width=12)
    assert lines == [
        "+----+--------------+",
        "| id | image        |",
        "+----+--------------+",
        "| 1  | NULL         |",
        "| 22 | {a -> xxx... |",
        "+----+--------------+",
    ]


def test_a_lake_held_in_embedded_derby_is_named(tmp_path) -> None:
    """Embedded Derby holds an exclusive lock on metastore_db/dbex.lck (a POSIX lock, which Java's
    FileChannel.lock takes on Linux): a child process takes the same lock here, as such a JVM would."""
    lake = tmp_path / "lake"
    (lake / "metastore_db").mkdir(parents=True)
    lock = lake / "metastore_db" / "dbex.lck"
    lock.write_text("")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'r+'); "
         "fcntl.lockf(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(120)", str(lock)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = cli(lake, "metastore", "start")
        assert started.returncode == 1
        assert f"is open in embedded Derby by pid {holder.pid} " in started.stderr, started.stderr
        assert "wait for that process to end (or stop it), then retry" in started.stderr
        assert len(started.stderr.strip().splitlines()) == 1
    finally:
        holder.kill()
        holder.wait()
    assert MetastoreServer.for_lake(lake).pid() is None


def test_two_writing_dbt_commands_take_turns(server: MetastoreServer, tmp_path) -> None:
    """The venv's start-up hook acts on programs named `dbt`: a stand-in that only sleeps shows,
    without Spark, that the first start of a lake starts its server and that a second `dbt build`
    on the same lake and schema waits for the first, saying once who it waits for."""
    fake = tmp_path / "bin" / "dbt"
    fake.parent.mkdir()
    fake.write_text(
        f"#!{sys.executable}\nimport sys, time\nprint('running', flush=True)\ntime.sleep(float(sys.argv[2]))\n"
    )
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CDC_LAKE", "DBT_"))}
    env["CDC_LAKE_DIR"] = str(server.lake)

    def dbt(seconds: str) -> subprocess.Popen:
        return subprocess.Popen([str(fake), "build", seconds], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    first = dbt("6")
    assert first.stdout is not None and first.stdout.readline().strip() == "running"
    assert server.is_running()  # started by the first `dbt`'s start-up hook
    second = dbt("0")
    out, err = second.communicate(timeout=120)
    assert first.poll() is not None, "the second build ran while the first one held the turn"
    first.communicate()
    assert out.strip() == "running"
    assert err.count("cdc_lake: waiting for dbt build") == 1
    assert f"(pid {first.pid}, since " in err and "dbt-cdc_lake.lock" in err, err
