"""The lake's Hive metastore database, served by Derby's network server so that processes share it.

Embedded Derby admits one process per database: a second `dbt build`, or `cdc-lake land` during a
build, used to fail after a minute of log lines. So the `local` target's metastore database
(`$CDC_LAKE_DIR/metastore_db`, the same files embedded Derby wrote) is served by one Derby network
server process per lake, and every Spark process connects to it over JDBC on loopback:

- started on first use by whichever process needs the lake (`cdc-lake land|sql|consume|...`,
  the test session, and `dbt`/`sqlfluff` through the venv's start-up hook, see `cdc_lake.hook`);
  a start lock makes concurrent first uses start one server;
- on a free 127.0.0.1 port, recorded with its pid in `$CDC_LAKE_DIR/metastore/server.json` and
  reused by every later process (the same port again after a restart when it is still free);
- stopped by `cdc-lake metastore stop` (Derby's own clean shutdown, then SIGTERM/SIGKILL), which
  marks it stopped on purpose;
- started again, on the same port, by any process that uses the lake when it finds the server gone
  without that mark (a kill -9, a crash): each such process watches it every few seconds
  (`keep_serving`), so a running consumer or build waits out the outage instead of hanging on a
  port nobody serves any more. Derby's client reconnects on its own once the port answers again.

Each process learns the server through two environment variables that profiles/profiles.yml
reads, CDC_LAKE_METASTORE_URL and CDC_LAKE_METASTORE_DRIVER (set by `ensure_server`); without
them the profile falls back to embedded Derby (the cluster's Thrift Server uses that).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cdc_lake.env import jvm_dir, lake_dir
from cdc_lake.servers.ports import free_port, port_is_free, port_open
from cdc_lake.servers.processes import cmdline, is_alive, lock_holder
from cdc_lake.servers.supervisor import LocalServer

HOST = "127.0.0.1"
MAIN_CLASS = "org.apache.derby.drda.NetworkServerControl"
CLIENT_DRIVER = "org.apache.derby.jdbc.ClientDriver"
DATABASE = "metastore_db"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
URL_VAR = "CDC_LAKE_METASTORE_URL"
WATCH_SECONDS = 5.0
DRIVER_VAR = "CDC_LAKE_METASTORE_DRIVER"


class MetastoreError(RuntimeError):
    """The metastore server could not be started; the message says why and what to do."""


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    return str(Path(home) / "bin" / "java") if home else "java"


class MetastoreServer(LocalServer):
    """The Derby network server of one lake; detached: it outlives the process that started it, and
    every later one finds it by the pid and port in `server.json`."""

    name = "metastore server"
    error = MetastoreError
    poll_seconds = 0.2

    def __init__(self, lake: Path) -> None:
        super().__init__(Path(lake) / "metastore")
        self.lake = Path(lake).resolve()
        self._next_port: int | None = None  # the port the start in progress serves on

    @classmethod
    def for_lake(cls, lake: Path | None = None) -> MetastoreServer:
        return cls((lake or lake_dir()).resolve())

    @property
    def state_file(self) -> Path:
        return self.folder / "server.json"

    @property
    def output_file(self) -> Path:
        return self.folder / "server.log"

    def _state(self) -> dict[str, int]:
        try:
            return {k: int(v) for k, v in json.loads(self.state_file.read_text()).items()}
        except (FileNotFoundError, ValueError, TypeError):
            return {}

    def pid(self) -> int | None:
        """The recorded pid while that process is alive and is this lake's server (not a reused pid)."""
        pid = self._state().get("pid")
        if pid and is_alive(pid):
            args = cmdline(pid)
            if MAIN_CLASS in args and f"-Dderby.system.home={self.lake}" in args:
                return pid
        return None

    def record(self, pid: int) -> None:
        self.state_file.write_text(json.dumps({"pid": pid, "port": self._next_port}))

    def port(self) -> int | None:
        return self._state().get("port")

    def is_running(self) -> bool:
        port = self.port()
        return self.pid() is not None and port is not None and port_open(port, HOST)

    def url(self) -> str:
        port = self.port()
        if port is None:
            raise MetastoreError(f"no metastore server was ever started for {self.lake}")
        return f"jdbc:derby://{HOST}:{port}/{DATABASE};create=true"

    def client_env(self) -> dict[str, str]:
        """The variables profiles/profiles.yml reads to reach this server."""
        return {URL_VAR: self.url(), DRIVER_VAR: CLIENT_DRIVER}

    def derby_command(self, port: int, action: str = "start") -> list[str]:
        """Derby's NetworkServerControl: `start` serves the lake's databases, `shutdown` asks the
        server on `port` to stop cleanly."""
        jars = jvm_dir("derby")
        if not any(jars.glob("derbynet-*.jar")):
            raise MetastoreError(f"Derby network server jars not found in {jars}: run `make setup`")
        # Loopback only; Derby's default security manager is for servers reachable by others and
        # would forbid the database files' folder unless given a policy.
        options = ["-noSecurityManager"] if action == "start" else []
        return [
            _java(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
            f"-Dderby.system.home={self.lake}",
            f"-Dderby.stream.error.file={self.lake / 'derby.log'}",
            "-cp", str(jars / "*"), MAIN_CLASS, action, "-h", HOST, "-p", str(port), *options,
        ]

    def command(self) -> list[str]:
        assert self._next_port is not None, "start() chooses the port"
        return self.derby_command(self._next_port)

    def working_dir(self) -> Path:
        return self.lake

    def ready(self) -> bool:
        return self._next_port is not None and port_open(self._next_port, HOST)

    @contextmanager
    def _start_lock(self) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / "start.lock", "a+", encoding="ascii") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def start(self, timeout: float = START_TIMEOUT) -> bool:  # type: ignore[override]
        """Start the server unless it runs; True when this call started it. Raises MetastoreError."""
        with self._start_lock():
            return self._start_unlocked(timeout)

    def revive(self, timeout: float = START_TIMEOUT) -> bool:
        """Start the server again when it died without being stopped on purpose (a kill -9, a
        crash); True when this call started it. A server that runs but does not answer is left
        alone (it may be busy)."""
        with self._start_lock():
            state = self._state()
            if not state.get("pid") or state.get("stopped") or self.pid() is not None:
                return False
            return self._start_unlocked(timeout)

    def _start_unlocked(self, timeout: float) -> bool:
        if self.is_running():
            return False
        stale = self.pid()
        if stale is not None:
            raise MetastoreError(
                f"the metastore server of {self.lake} (pid {stale}) runs but does not answer on port "
                f"{self.port()}; stop it with `cdc-lake metastore stop` and retry"
            )
        holder = embedded_holder(self.lake)
        if holder is not None:
            raise MetastoreError(
                f"{self.lake / DATABASE} is open in embedded Derby by pid {holder[0]} ({holder[1]}); "
                "wait for that process to end (or stop it), then retry"
            )
        previous = self.port()
        self._next_port = previous if previous is not None and port_is_free(previous, HOST) else free_port(HOST)
        self.lake.mkdir(parents=True, exist_ok=True)
        # not a child to wait for: it outlives this process (the supervisor starts it in a session of its own)
        super().start(timeout)
        return True

    def forget(self) -> None:
        """Mark the server stopped on purpose: the processes watching it do not start it again."""
        state = self._state()
        if state:
            self.state_file.write_text(json.dumps({**state, "stopped": 1}))

    def stop(self, timeout: float = STOP_TIMEOUT, grace: float = 0.0) -> bool:
        """Shut the server down (Derby's clean shutdown, then SIGTERM, then SIGKILL); True if it ran."""
        with self._start_lock():
            self.forget()  # first: a watching process must not start it again while it stops
        port, running = self.port(), self.pid() is not None
        if running and port is not None:
            # Derby's own shutdown closes the database cleanly (no log recovery at the next boot)
            try:
                subprocess.run(self.derby_command(port, "shutdown"), capture_output=True, timeout=timeout, check=False)
            except subprocess.TimeoutExpired:
                pass
        # the shutdown request above may be enough: give it `timeout` seconds before SIGTERM
        super().stop(timeout, grace=max(grace, timeout))
        return running


def embedded_holder(lake: Path) -> tuple[int, str] | None:
    """The process that holds the lake's metastore in embedded Derby, if one does: (pid, command).

    Embedded Derby keeps an exclusive lock on `metastore_db/dbex.lck` while it has the database
    booted; that process is found by its open file.
    """
    lock = lake / DATABASE / "dbex.lck"
    if not lock.exists():
        return None
    try:
        with open(lock, "rb") as handle:
            fcntl.lockf(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.lockf(handle, fcntl.LOCK_UN)
        return None
    except OSError:
        pass
    holder = lock_holder(lock)
    if holder is None:  # locked, but by no process whose open files this user may list
        return -1, "a process this user cannot see"
    return holder[0], holder[1][:160]


_watched: set[Path] = set()


def keep_serving(server: MetastoreServer, seconds: float = WATCH_SECONDS) -> None:
    """Watch `server` from a daemon thread of this process for as long as it lives, starting it
    again when it dies (`revive`); once per lake and process."""
    if server.lake in _watched:
        return
    _watched.add(server.lake)

    def watch() -> None:
        while True:
            time.sleep(seconds)
            if not server.state_file.exists():  # a lake removed (a test's): nothing to watch
                continue
            try:
                if server.revive():
                    print(f"cdc_lake: the metastore server of {server.lake} was gone; started again on "
                          f"{HOST}:{server.port()}", file=sys.stderr, flush=True)
            except Exception as exc:  # noqa: BLE001 - the watch goes on; the next look may succeed
                print(f"cdc_lake: the metastore server could not be started again: {exc}", file=sys.stderr)

    threading.Thread(target=watch, name="cdc_lake metastore watch", daemon=True).start()


def ensure_server(lake: Path | None = None) -> MetastoreServer:
    """Start the lake's server if needed, point this process's profile rendering at it, and keep
    it serving while this process lives (`keep_serving`)."""
    server = MetastoreServer.for_lake(lake)
    if server.start():
        print(f"cdc_lake: metastore server started on {HOST}:{server.port()} for {server.lake} "
              "(`cdc-lake metastore stop` stops it)", file=sys.stderr)
    os.environ.update(server.client_env())
    keep_serving(server)
    return server


def ensure_local_metastore() -> MetastoreServer | None:
    """`ensure_server` for the current lake, unless CDC_LAKE_METASTORE=embedded asks for the
    one-process embedded Derby of earlier versions."""
    if os.environ.get("CDC_LAKE_METASTORE", "server") == "embedded":
        return None
    return ensure_server()


def stop_servers_under(root: Path) -> list[Path]:
    """Stop every lake's metastore server whose lake lies under `root` (test clean-up); their lakes."""
    stopped = []
    for state in root.rglob("metastore/server.json"):
        server = MetastoreServer.for_lake(state.parent.parent)
        if server.stop():
            stopped.append(server.lake)
    return stopped
