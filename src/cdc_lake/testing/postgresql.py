"""One throw-away PostgreSQL server (Debian's `postgresql` package) on 127.0.0.1, for the end-to-end
test PostgreSQL → Debezium → Kafka → cdc_lake and for `cdc-lake verify --source postgresql://`.

The server gets a data directory of its own (`initdb`), a free TCP port, its unix socket beside
its data, and writes a logical WAL (`wal_level=logical`) with replication slots and WAL senders
for several Debezium connectors at once. It never touches the machine's own cluster or its
configuration (no `pg_ctlcluster`, no /etc/postgresql).

    with LocalPostgres(folder) as server:      # starts, and stops whatever happens
        server.create_database("shop")
        with closing(server.connect("shop")) as conn: ...

PostgreSQL refuses to run as root. When this process is root (CI, the developers' machines), the
server runs as the unprivileged `postgres` account (`setpriv`), and its data directory lives in a
private folder that account owns (`tempfile.mkdtemp`, linked as `<folder>/data`), because the
callers' temporary folders are root's and closed to other users; that folder is removed when the
object goes away. The log stays in `folder`.

Debezium and the tests log in as `USER`/`PASSWORD`, the cluster's bootstrap superuser (`initdb
-U`): superuser so the connector may create its publication FOR ALL TABLES and its slot, and the
workload may create extensions (hstore); REPLICATION comes with it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from cdc_lake.servers.ports import HOST, free_port
from cdc_lake.servers.supervisor import LocalServer

if TYPE_CHECKING:
    import pg8000.dbapi

START_TIMEOUT = 60.0
# the bootstrap superuser: Debezium's and the tests' login over TCP (scram-sha-256)
USER = "cdc"
PASSWORD = "cdc"
# several connectors (one per Debezium setting variant) each hold a slot and a WAL sender, and
# `cdc-lake verify` or a snapshot may open more
MAX_SLOTS = 16
# who runs the server when this process is root
SERVICE_ACCOUNTS = ("postgres", "nobody")


class PostgresError(Exception):
    """The server could not be installed, started or reached."""


def bin_dir() -> Path:
    """The newest installed PostgreSQL's binaries (Debian keeps them out of PATH, per version)."""
    found = sorted(
        (p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/postgres")),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not found:
        raise PostgresError("postgres not found: install Debian's postgresql (apt-get install -y postgresql)")
    return found[-1]


def _service_account() -> pwd.struct_passwd | None:
    """The account the server runs as: None (this process's own) unless this process is root."""
    if os.geteuid() != 0:
        return None
    for name in SERVICE_ACCOUNTS:
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PostgresError(f"running as root and none of {SERVICE_ACCOUNTS} exists to run PostgreSQL")


class LocalPostgres(LocalServer):
    """A PostgreSQL server whose data lives in `folder` (or a private folder linked there, as root)."""

    name = "postgres"
    error = PostgresError

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.host = HOST
        self.port = 0
        self.account = _service_account()
        self._runtime: Path | None = None

    # ------------------------------------------------------------------ files

    @property
    def runtime(self) -> Path:
        """The folder of the data directory and the socket, owned by the account the server runs as."""
        if self._runtime is None:
            if self.account is None:
                self._runtime = self.folder
            else:
                self._runtime = Path(tempfile.mkdtemp(prefix="cdc_lake_pg_"))
                os.chown(self._runtime, self.account.pw_uid, self.account.pw_gid)
                weakref.finalize(self, shutil.rmtree, str(self._runtime), True)
        return self._runtime

    @property
    def data_dir(self) -> Path:
        return self.runtime / "data"

    @property
    def socket_dir(self) -> Path:
        """Where the server's unix socket lives (`psql -h <socket_dir> -p <port>`)."""
        return self.runtime

    def _as_account(self, command: list[str]) -> list[str]:
        if self.account is None:
            return command
        # setpriv execs the command itself: the pid the supervisor holds is the postmaster's
        return ["setpriv", f"--reuid={self.account.pw_uid}", f"--regid={self.account.pw_gid}",
                "--init-groups", "--", *command]

    def _install(self) -> None:
        if (self.data_dir / "PG_VERSION").exists():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.account is not None and not (self.folder / "data").exists():
            (self.folder / "data").symlink_to(self.data_dir)
        password_file = self.runtime / "initdb.password"
        password_file.write_text(PASSWORD + "\n")
        if self.account is not None:
            os.chown(password_file, self.account.pw_uid, self.account.pw_gid)
        try:
            result = subprocess.run(
                self._as_account([
                    str(bin_dir() / "initdb"), "-D", str(self.data_dir), "-U", USER, f"--pwfile={password_file}",
                    # the socket trusts local users (an admin's psql); TCP, replication included, needs the password
                    "--auth-local=trust", "--auth-host=scram-sha-256",
                    # byte-wise collation and UTF-8 whatever the machine's locale
                    "--encoding=UTF8", "--no-locale", "--no-sync",
                ]),
                capture_output=True, text=True, check=False, cwd=self.runtime,
            )
        finally:
            password_file.unlink(missing_ok=True)
        if result.returncode != 0:
            raise PostgresError(f"initdb failed: {result.stderr or result.stdout}")

    # ------------------------------------------------------------------ the server

    def command(self) -> list[str]:
        settings = {
            "listen_addresses": self.host,
            "port": str(self.port),
            "unix_socket_directories": str(self.socket_dir),
            # what Debezium's pgoutput plugin needs: logical decoding, a slot and a WAL sender per connector
            "wal_level": "logical",
            "max_replication_slots": str(MAX_SLOTS),
            "max_wal_senders": str(MAX_SLOTS),
            "max_connections": "60",
            # a test server: durability is not needed, speed on a 2-core machine is
            "fsync": "off",
            "full_page_writes": "off",
            "shared_buffers": "64MB",
            # timestamptz and now() in UTC, as the lake's values are
            "timezone": "UTC",
            "log_timezone": "UTC",
            "logging_collector": "off",
        }
        options = [part for key, value in settings.items() for part in ("-c", f"{key}={value}")]
        return self._as_account([str(bin_dir() / "postgres"), "-D", str(self.data_dir), *options])

    def working_dir(self) -> Path | None:
        return self.runtime

    def ready(self) -> bool:
        try:
            self.connect("postgres").close()
        except Exception:  # noqa: BLE001 - not up yet: refused, starting up, or auth not ready
            return False
        return True

    def start(self, timeout: float = START_TIMEOUT) -> LocalPostgres:
        self._install()
        self.port = free_port()
        return super().start(timeout)

    def stop(self, timeout: float = 30.0, grace: float = 0.0) -> bool:
        """Fast shutdown first (SIGINT: clients, Debezium's WAL senders too, are disconnected and
        the server stops cleanly), then the supervisor's SIGTERM/SIGKILL of the group."""
        pid = self.pid()
        if pid is not None:
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            grace = max(grace, 20.0)
        return super().stop(timeout, grace)

    # ------------------------------------------------------------------ clients

    def url(self, database: str) -> str:
        """A libpq-style URL of `database`, without the password (`cdc-lake verify --source`)."""
        return f"postgresql://{USER}@{self.host}:{self.port}/{database}"

    def connect(self, database: str, autocommit: bool = True) -> pg8000.dbapi.Connection:
        """A DB-API connection (pg8000, pure Python) as `USER` over TCP."""
        import pg8000.dbapi

        conn = pg8000.dbapi.connect(
            user=USER, password=PASSWORD, host=self.host, port=self.port, database=database, timeout=60,
        )
        conn.autocommit = autocommit
        return conn

    def execute(self, database: str, *statements: str) -> None:
        """Run statements in `database`, each committed on its own."""
        conn = self.connect(database)
        try:
            cursor = conn.cursor()
            for statement in statements:
                cursor.execute(statement)
        finally:
            conn.close()

    def create_database(self, name: str) -> None:
        """CREATE DATABASE `name` (UTF-8, from template0: no objects but the defaults)."""
        quoted = '"' + name.replace('"', '""') + '"'
        self.execute("postgres", f"create database {quoted} template template0 encoding 'UTF8'")
