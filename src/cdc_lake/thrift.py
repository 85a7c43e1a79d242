"""A DB-API connection to the Spark Thrift Server of dbt's `thrift` target.

Host, port, user and auth come from the `thrift` target of profiles/profiles.yml (which reads them
from CDC_LAKE_THRIFT_* environment variables), so `cdc-lake land --target thrift`, the cluster health
check and `dbt --target thrift` always talk to the same server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cdc_lake.spark import profile_output


@dataclass(frozen=True)
class ThriftTarget:
    host: str
    port: int
    user: str
    auth: str

    @classmethod
    def from_profile(cls) -> ThriftTarget:
        output = profile_output("thrift")
        return cls(
            host=str(output["host"]),
            port=int(output["port"]),
            user=str(output.get("user") or "cdc_lake"),
            auth=str(output.get("auth") or "NONE").upper(),
        )

    def __str__(self) -> str:
        return f"{self.user}@{self.host}:{self.port} (auth {self.auth})"


def connect(target: ThriftTarget | None = None, timeout: float | None = None) -> Any:
    """Open a PyHive connection; `timeout` (seconds) bounds every socket read, for health checks.

    NONE (SASL PLAIN, HiveServer2's default) and NOSASL are built here so the socket timeout can be
    set; other auth modes (LDAP, KERBEROS, ...) are left to PyHive, without a timeout.
    """
    from pyhive import hive
    from thrift.transport import TSocket, TTransport

    target = target or ThriftTarget.from_profile()
    if target.auth not in ("NONE", "NOSASL"):
        return hive.connect(host=target.host, port=target.port, username=target.user, auth=target.auth)
    sock = TSocket.TSocket(target.host, target.port)
    if timeout is not None:
        sock.setTimeout(timeout * 1000)
    if target.auth == "NOSASL":
        transport = TTransport.TBufferedTransport(sock)
    else:
        import thrift_sasl

        def sasl_client() -> Any:
            # PLAIN needs some password in NONE mode; the server ignores it.
            return hive.get_installed_sasl(
                host=target.host, sasl_auth="PLAIN", username=target.user, password="x"
            )

        transport = thrift_sasl.TSaslClientTransport(sasl_client, "PLAIN", sock)
    return hive.Connection(thrift_transport=transport, username=target.user)
