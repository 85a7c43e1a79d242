"""A DB-API connection to the Spark Thrift Server of dbt's `thrift` target, and the landing
executor that runs `cdc_lake.landing` over it.

Host, port, user and auth come from the `thrift` target of profiles/profiles.yml (which reads them
from CDC_LAKE_THRIFT_* environment variables), so `cdc-lake land --target thrift`, the cluster health
check and `dbt --target thrift` always talk to the same server.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from cdc_lake.landing import Executor, raw_schema
from cdc_lake.spark import profile_output
from cdc_lake.sqltext import qualified_name, sql_string


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


# On a cluster the metastore belongs to the Thrift Server (embedded Derby admits one process, and a
# real metastore should not be opened by every client), so landing goes over the same connection
# dbt uses: the records are sent as `insert into <staging table> values (...)` batches, which the
# landing's one MERGE then reads.
_STAGING_COLUMNS = (
    "line_no bigint, kafka_topic string, kafka_partition int, kafka_offset bigint, "
    "kafka_timestamp_ms bigint, kafka_key string, kafka_value string, "
    "kafka_headers array<struct<key: string, value: string>>"
)
BATCH_ROWS = 2000
BATCH_BYTES = 4 * 1024 * 1024


class ThriftExecutor(Executor):
    """`cdc_lake.landing`'s SQL through a DB-API cursor on a Spark Thrift Server. A batch is a
    parquet table beside the raw tables (a Thrift session has nowhere else to gather rows sent in
    many statements), dropped after the landing."""

    def __init__(self, cursor: Any, batch_rows: int = BATCH_ROWS, batch_bytes: int = BATCH_BYTES) -> None:
        self.cursor = cursor
        self.batch_rows = batch_rows
        self.batch_bytes = batch_bytes

    def execute(self, statement: str) -> None:
        self.cursor.execute(statement)

    def query(self, statement: str) -> list[tuple[Any, ...]]:
        self.cursor.execute(statement)
        return [tuple(row) for row in self.cursor.fetchall()]

    @contextmanager
    def stage_records(self, records: Iterable[dict[str, Any]]) -> Iterator[str]:
        staging = qualified_name(raw_schema(), f"landing_{uuid.uuid4().hex}")
        self.execute(f"create table {staging} ({_STAGING_COLUMNS}) using parquet")
        try:
            rows: list[str] = []
            size = 0
            for line_no, record in enumerate(records, start=1):
                rows.append(_values_row(line_no, record))
                size += len(rows[-1])
                if len(rows) >= self.batch_rows or size >= self.batch_bytes:
                    self.execute(f"insert into {staging} values\n" + ",\n".join(rows))
                    rows, size = [], 0
            if rows:
                self.execute(f"insert into {staging} values\n" + ",\n".join(rows))
            yield f"""(
                select
                    kafka_topic, kafka_partition, kafka_offset, timestamp_millis(kafka_timestamp_ms) as kafka_timestamp,
                    kafka_key, kafka_value, kafka_headers, line_no as batch_order
                from {staging}
            )"""
        finally:
            self.execute(f"drop table if exists {staging}")


def _values_row(line_no: int, record: dict[str, Any]) -> str:
    """A record as a row of `insert ... values`, in `_STAGING_COLUMNS` order."""
    return (
        f"({line_no}, {sql_string(record['kafka_topic'])}, {_sql_int(record['kafka_partition'])}, "
        f"{_sql_int(record['kafka_offset'])}, {_sql_int(record['kafka_timestamp_ms'])}, "
        f"{sql_string(record['kafka_key'])}, {sql_string(record['kafka_value'])}, "
        f"{_sql_headers(record['kafka_headers'])})"
    )


def _sql_int(value: int | None) -> str:
    return "null" if value is None else str(int(value))


def _sql_headers(headers: list[dict[str, str | None]] | None) -> str:
    if headers is None:
        return "cast(null as array<struct<key: string, value: string>>)"
    if not headers:
        return "cast(array() as array<struct<key: string, value: string>>)"
    pairs = ", ".join(
        f"named_struct('key', {sql_string(h['key'])}, 'value', {sql_string(h['value'])})" for h in headers
    )
    return f"array({pairs})"
