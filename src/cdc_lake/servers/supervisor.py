"""One way to run a local server: every server process cdc_lake starts is a `LocalServer`.

The product's (the lake's metastore, the Kafka broker, the standalone cluster's daemons) and the
end-to-end rig's (MariaDB, Kafka Connect, Canal). A server says what it runs (`command`), when it is
ready (`ready`) and where it logs (`log_file`); the base starts it in a session of its own (so its
children stop with it) with its output appended to a file, waits until it is ready or reports its
death with the tail of its log, and stops it: SIGTERM to its process group, SIGKILL after a timeout.

Two lifetimes. An owned server lives as long as the object that started it (tests use it as a
context manager, which stops it whatever happens). A detached one outlives the command that started
it (`cdc-lake metastore start`, `cdc-lake kafka start`, `cdc-lake cluster start`): it records its pid
(`record`), later commands find it again (`pid`), and `forget` drops the record once it is stopped.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import ClassVar, TypeVar

from cdc_lake.servers.processes import stop_group

Server = TypeVar("Server", bound="LocalServer")

START_TIMEOUT = 90.0
STOP_TIMEOUT = 30.0


class ServerError(RuntimeError):
    """A server did not start, or stopped running."""


class LocalServer:
    """A server process whose files live in `folder`. Subclasses define `command` and usually
    `ready`; detached servers also `record`, `pid` and `forget`."""

    name: ClassVar[str] = "server"  # in messages, and the output file's name
    error: ClassVar[type[Exception]] = ServerError
    poll_seconds: ClassVar[float] = 0.5

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder).resolve()
        self.process: subprocess.Popen[bytes] | None = None

    # ------------------------------------------------------------------ what a server says

    def command(self) -> list[str]:
        raise NotImplementedError

    def ready(self) -> bool:
        """True once the server serves; polled while it starts."""
        return True

    def environment(self) -> dict[str, str] | None:
        """The process's environment; None inherits this one's."""
        return None

    def working_dir(self) -> Path | None:
        return None

    @property
    def output_file(self) -> Path:
        """Where the process's stdout and stderr are appended."""
        return self.folder / f"{self.name}.out"

    @property
    def log_file(self) -> Path:
        """The log a failure quotes; the output file unless the server writes a log of its own."""
        return self.output_file

    # ------------------------------------------------------------------ where a detached server keeps its pid

    def record(self, pid: int) -> None:
        """Keep the pid of a process just started (a detached server writes it down)."""

    def pid(self) -> int | None:
        """The pid of this server's running process, if any."""
        if self.process is not None and self.process.poll() is None:
            return self.process.pid
        return None

    def forget(self) -> None:
        """Drop the record of a stopped process."""

    # ------------------------------------------------------------------ life cycle

    def launch(self) -> subprocess.Popen[bytes]:
        """Start the process (no waiting)."""
        command = self.command()
        self.output_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self.output_file, "ab") as out:
            out.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(command)}\n".encode())
            out.flush()
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env=self.environment(), cwd=self.working_dir(), start_new_session=True,
            )
        self.record(self.process.pid)
        return self.process

    def wait_ready(self, process: subprocess.Popen[bytes], timeout: float) -> None:
        """Until `ready()`; raises `error` with the log's tail if `process` dies or time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            exited = process.poll()
            if exited is not None:
                raise self.error(f"{self.name} (pid {process.pid}) exited during start-up with {exited}: "
                                 f"{self.log_tail()}")
            if self.ready():
                return
            time.sleep(self.poll_seconds)
        self.stop()
        raise self.error(f"{self.name} did not come up within {timeout:.0f}s: {self.log_tail()}")

    def start(self: Server, timeout: float = START_TIMEOUT) -> Server:
        self.wait_ready(self.launch(), timeout)
        return self

    def check_alive(self) -> None:
        if self.pid() is None:
            raise self.error(f"{self.name} is not running: {self.log_tail()}")

    def stop(self, timeout: float = STOP_TIMEOUT, grace: float = 0.0) -> bool:
        """Stop the process and its group: wait `grace` seconds for it to end by itself (after a
        shutdown request of the subclass's), then SIGTERM, then SIGKILL after `timeout`. True if
        it ran."""
        pid = self.pid()
        if pid is not None:
            stop_group(pid, timeout, grace)
        if self.process is not None:
            try:
                self.process.wait(timeout=10)  # collect the status of the process stopped above
            except subprocess.TimeoutExpired:
                pass
            self.process = None
        self.forget()
        return pid is not None

    def log_tail(self, chars: int = 3000) -> str:
        for path in (self.log_file, self.output_file):
            if path.exists() and path.stat().st_size:
                return path.read_text(errors="replace")[-chars:]
        return "(no log)"

    def __enter__(self: Server) -> Server:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
