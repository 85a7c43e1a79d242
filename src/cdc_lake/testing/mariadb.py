"""One throw-away MariaDB server (Debian's `mariadb-server` package) on 127.0.0.1, for the end-to-end test.

The server gets its own data directory (`mariadb-install-db`), a free TCP port and a socket in its
folder, and writes a row-based binlog with full images, which is what Debezium reads. It never
touches the machine's own MariaDB service or its files (`--no-defaults`: no /etc/mysql config).

    with LocalMariaDB(folder) as server:     # starts, and stops whatever happens
        with server.connect() as conn: ...
"""

from __future__ import annotations

import getpass
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from cdc_lake.servers.ports import free_port
from cdc_lake.servers.supervisor import LocalServer

if TYPE_CHECKING:
    import pymysql

START_TIMEOUT = 60.0
# the account Debezium and the test use (over TCP); root stays on the socket
USER = "cdc"
PASSWORD = "cdc"


class MariaDBError(Exception):
    """The server could not be installed, started or reached."""


def server_binary() -> str:
    for name in ("mariadbd", "mysqld"):
        path = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
        if path:
            return path
    raise MariaDBError("mariadbd not found: install Debian's mariadb-server (apt-get install -y mariadb-server)")


class LocalMariaDB(LocalServer):
    """A MariaDB server whose data, binlog, socket and logs live in `folder`."""

    name = "mariadbd"
    error = MariaDBError

    def __init__(self, folder: Path, server_id: int = 1) -> None:
        super().__init__(folder)
        self.server_id = server_id
        self.port = 0

    @property
    def socket(self) -> Path:
        return self.folder / "mysqld.sock"

    @property
    def log_file(self) -> Path:
        return self.folder / "error.log"

    def _install(self) -> None:
        data = self.folder / "data"
        if (data / "mysql").exists():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            ["mariadb-install-db", "--no-defaults", f"--datadir={data}", f"--user={getpass.getuser()}",
             "--auth-root-authentication-method=socket", "--skip-test-db"],
            capture_output=True, text=True, check=False,
        )
        if result.returncode != 0:
            raise MariaDBError(f"mariadb-install-db failed: {result.stderr or result.stdout}")

    def command(self) -> list[str]:
        return [
            server_binary(), "--no-defaults", f"--datadir={self.folder / 'data'}", f"--user={getpass.getuser()}",
            f"--port={self.port}", "--bind-address=127.0.0.1", f"--socket={self.socket}",
            f"--pid-file={self.folder / 'mariadbd.pid'}", f"--log-error={self.log_file}",
            # what Debezium needs: a row-based binlog with every column of both images
            f"--log-bin={self.folder / 'data' / 'mysql-bin'}", "--binlog-format=ROW", "--binlog-row-image=FULL",
            f"--server-id={self.server_id}",
            # the 1 MB mediumtext and the large transaction fit
            "--max-allowed-packet=64M", "--innodb-buffer-pool-size=128M", "--innodb-log-file-size=128M",
            "--skip-name-resolve", "--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci",
        ]

    def ready(self) -> bool:
        # serving once root, on the socket, can create the account Debezium and the test use
        return self.socket.exists() and self._root_sql(
            f"create user if not exists '{USER}'@'%' identified by '{PASSWORD}';"
            f"grant all privileges on *.* to '{USER}'@'%' with grant option;"
        )

    def start(self, timeout: float = START_TIMEOUT) -> LocalMariaDB:
        self._install()
        self.port = free_port()
        return super().start(timeout)

    def _root_sql(self, sql: str) -> bool:
        result = subprocess.run(
            ["mariadb", "--no-defaults", f"--socket={self.socket}", "-uroot", "-e", sql],
            capture_output=True, text=True, check=False,
        )
        return result.returncode == 0

    def connect(self, database: str | None = None, autocommit: bool = True) -> pymysql.connections.Connection:
        import pymysql

        return pymysql.connect(
            host="127.0.0.1", port=self.port, user=USER, password=PASSWORD, database=database,
            charset="utf8mb4", autocommit=autocommit, max_allowed_packet=64 * 1024 * 1024,
        )
