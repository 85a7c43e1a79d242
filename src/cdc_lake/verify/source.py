"""The source side of a verification: a MariaDB/MySQL database read through one consistent
snapshot, with PyMySQL; and what every source offers the comparison (`Source`; PostgreSQL's is
postgres.py; run.parse_source_url picks one by the URL's scheme).

Only aggregates cross the wire until bisection has narrowed a difference to a few buckets: each
query is one scan of the table inside MariaDB, grouped by a prefix of the key's hash. The snapshot
(`START TRANSACTION WITH CONSISTENT SNAPSHOT`, InnoDB's repeatable read) makes every query of a run
see the same rows, and MariaDB reports the binlog position that snapshot stands at.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote, urlparse

from cdc_lake.verify.sql import MARIADB, MARIADB_LAKE, Column, LakeTexts, source_value

PASSWORD_VARIABLES = ("CDC_LAKE_SOURCE_PASSWORD", "MYSQL_PWD")
TABLE_MAP = re.compile(r"\(`?([^`.()]+)`?\.`?([^`()]+?)`?\)\s*$")
# the lake's source_position of a binlog change: `mysql-bin.000001:3204554 row 0`
BINLOG_POSITION = re.compile(r"^(\S+):(\d+)\b")


class SourceError(Exception):
    """The source URL is wrong or the database cannot be read."""


@dataclass(frozen=True)
class SourceUrl:
    """`mysql://user@host:port/database`; the password comes from the environment."""

    user: str
    host: str
    port: int
    database: str

    @classmethod
    def parse(cls, url: str) -> SourceUrl:
        parsed = urlparse(url)
        if parsed.scheme not in ("mysql", "mariadb"):
            raise SourceError(f"{url!r}: expected mysql://user@host:port/database")
        if parsed.password:
            raise SourceError(
                "put the password in $CDC_LAKE_SOURCE_PASSWORD (or $MYSQL_PWD), not in the URL: "
                "command lines end up in shell histories and process lists"
            )
        database = parsed.path.lstrip("/")
        if not database or not parsed.hostname:
            raise SourceError(f"{url!r}: expected mysql://user@host:port/database")
        return cls(unquote(parsed.username or os.environ.get("USER", "root")), parsed.hostname,
                   parsed.port or 3306, unquote(database))

    def __str__(self) -> str:
        return f"mysql://{self.user}@{self.host}:{self.port}/{self.database}"

    def table_names(self, names: list[str]) -> list[str]:
        """`--tables` as the source's names: `db.table` (of this database) or `table`."""
        for name in names:
            database, dot, _ = name.rpartition(".")
            if dot and database != self.database:
                raise SourceError(f"--tables {name}: not in the source database {self.database}")
        return [name.rpartition(".")[2] for name in names]

    def open(self, password: str | None = None) -> SourceDatabase:
        return SourceDatabase(self, password)


@dataclass(frozen=True)
class BinlogPosition:
    file: str
    position: int

    def __str__(self) -> str:
        return f"{self.file}:{self.position}"


@dataclass(frozen=True)
class SourceTable:
    """A source table: `name` is the lake's `table_name`, `database` the lake's `database_name`
    (empty: the source URL's database), `title` what the user calls it (empty: `name`)."""

    name: str
    columns: list[Column]
    key: list[Column]
    database: str = ""
    title: str = ""

    @property
    def keyless(self) -> bool:
        return not self.key

    @property
    def label(self) -> str:
        return self.title or self.name


class Source(Protocol):
    """A source database as the comparison reads it: one snapshot, every aggregate and row
    computed inside it, and the changes the lake cannot have yet."""

    # how the lake's side writes the texts this source writes (dialect, hashes, layouts)
    texts: LakeTexts
    # what changes_after counts, as the report says it ("row events for it in the binlog")
    changes_noun: str
    # Spark ORDER BY over cdc_changelog whose first row is the lake's last applied change
    lake_order: str
    # whether a complete snapshot read from this database can be placed against the stream, and
    # so re-baseline a table (docs/snapshots.md): MySQL's binlog position, not PostgreSQL's LSN
    snapshots_rebaseline: bool

    def begin_snapshot(self) -> None: ...

    def snapshot_text(self) -> str: ...

    def tables(self) -> list[str]: ...

    def lake_database(self, table: str) -> str:
        """The lake's `database_name` of one of `tables()`."""
        ...

    def describe(self, table: str) -> SourceTable: ...

    def buckets(self, table: SourceTable, width: int, within: int,
                prefixes: list[str]) -> dict[str, tuple[int, int]]: ...

    def rows(self, table: SourceTable, width: int, prefixes: list[str]) -> list[tuple[str | None, ...]]: ...

    def changes_after(self, lake_position: str, tables: list[SourceTable]) -> dict[str, int] | None: ...

    def close(self) -> None: ...


class SourceLocation(Protocol):
    """A parsed `--source` URL."""

    database: str

    def table_names(self, names: list[str]) -> list[str]: ...

    def open(self, password: str | None = None) -> Source: ...


class SourceDatabase:
    """One connection, one snapshot: every read of a verification run sees the same rows."""

    texts: LakeTexts = MARIADB_LAKE
    changes_noun = "row events for it in the binlog"
    # the binlog position leads change_order
    lake_order = "change_order desc"
    snapshots_rebaseline = True

    def __init__(self, url: SourceUrl, password: str | None = None) -> None:
        import pymysql

        if password is None:
            password = next((os.environ[v] for v in PASSWORD_VARIABLES if v in os.environ), "")
        self.url = url
        try:
            self.conn = pymysql.connect(host=url.host, port=url.port, user=url.user, password=password,
                                        database=url.database, charset="utf8mb4", autocommit=True)
        except pymysql.MySQLError as exc:
            raise SourceError(f"cannot connect to {url}: {exc}") from exc
        self.snapshot: BinlogPosition | None = None

    def close(self) -> None:
        self.conn.close()

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        with self.conn.cursor() as cursor:
            cursor.execute(sql)
            return list(cursor.fetchall())

    def begin_snapshot(self) -> None:
        """Open the consistent snapshot; times as UTC (timestamps' canonical text is UTC)."""
        self.query("set session time_zone = '+00:00'")
        self.query("set session transaction isolation level repeatable read")
        self.query("start transaction with consistent snapshot, read only")
        # MariaDB: the binlog position of exactly this snapshot (empty without a binlog)
        status = dict(self.query("show status like 'binlog_snapshot_%'"))
        file, position = status.get("Binlog_snapshot_file") or "", status.get("Binlog_snapshot_position")
        self.snapshot = BinlogPosition(file, int(position)) if file and position else None

    def snapshot_text(self) -> str:
        return str(self.snapshot) if self.snapshot else ""

    def tables(self) -> list[str]:
        rows = self.query(
            "select table_name from information_schema.tables where table_schema = database() "
            "and table_type = 'BASE TABLE' order by table_name"
        )
        return [r[0] for r in rows]

    def lake_database(self, table: str) -> str:
        return self.url.database

    def describe(self, table: str) -> SourceTable:
        name = MARIADB.literal(table)
        columns = [
            Column(n, t.lower(), int(p or 0), c)
            for n, t, p, c in self.query(
                "select column_name, data_type, datetime_precision, character_set_name from information_schema.columns "
                f"where table_schema = database() and table_name = {name} order by ordinal_position"
            )
        ]
        if not columns:
            raise SourceError(f"{self.url.database}.{table}: no such table in the source")
        key_names = [
            r[0]
            for r in self.query(
                "select column_name from information_schema.key_column_usage where table_schema = database() "
                f"and table_name = {name} and constraint_name = 'PRIMARY' order by ordinal_position"
            )
        ]
        by_name = {c.name: c for c in columns}
        return SourceTable(table, columns, [by_name[k] for k in key_names])

    def _texts(self, table: SourceTable) -> tuple[str, str]:
        row = MARIADB.row_text([source_value(c) for c in table.columns])
        key = MARIADB.row_text([source_value(c) for c in table.key]) if table.key else row
        return key, row

    def buckets(self, table: SourceTable, width: int, within: int, prefixes: list[str]) -> dict[str, tuple[int, int]]:
        """bucket (`width` hex digits of the key's hash) -> (rows, checksum), for the rows whose
        key hash starts with one of `prefixes` (`within` digits long)."""
        key, row = self._texts(table)
        rows = self.query(
            f"select {MARIADB.bucket(MARIADB.key_hash(key), width)}, count(*), sum({MARIADB.checksum(row)}) "
            f"from {MARIADB.quote(table.name)} where {MARIADB.in_buckets(MARIADB.key_hash(key), within, prefixes)} "
            "group by 1"
        )
        return {str(b): (int(n), int(s or 0) % 2**64) for b, n, s in rows}

    def rows(self, table: SourceTable, width: int, prefixes: list[str]) -> list[tuple[str | None, ...]]:
        """The rows in the given buckets, each column as source_value writes it."""
        key, _ = self._texts(table)
        values = ", ".join(source_value(c) for c in table.columns)
        where = MARIADB.in_buckets(MARIADB.key_hash(key), width, prefixes)
        found = self.query(f"select {values} from {MARIADB.quote(table.name)} where {where}")
        return [tuple(None if v is None else str(v) for v in r) for r in found]

    def changes_after(self, lake_position: str, tables: list[SourceTable]) -> dict[str, int] | None:
        """Row events per table after the lake's last change (its source_position), or None when
        that is no binlog position or the binlog cannot be read (row_events_after)."""
        match = BINLOG_POSITION.match(lake_position)
        if match is None:
            return None
        return self.row_events_after(BinlogPosition(match.group(1), int(match.group(2))), [t.name for t in tables])

    def row_events_after(self, start: BinlogPosition, tables: list[str]) -> dict[str, int] | None:
        """Row events per table between the lake's last change and the snapshot: the changes the
        lake cannot have yet. The transaction holding `start` counts as applied (its events are
        skipped up to its commit). None when the binlog cannot be read (no privilege, purged)."""
        if self.snapshot is None:
            return None
        counts = dict.fromkeys(tables, 0)
        try:
            files = [r[0] for r in self.query("show binary logs")]
        except Exception:  # noqa: BLE001 - no BINLOG MONITOR privilege: the position is unknown
            return None
        if start.file not in files or self.snapshot.file not in files:
            return None
        # None until the first event after `start`: inside a transaction (a row event) its rest was
        # applied with it; at a transaction's start (GTID/BEGIN) nothing is skipped
        in_start_transaction: bool | None = None
        for file in files[files.index(start.file): files.index(self.snapshot.file) + 1]:
            offset = 0
            while True:
                events = self.query(f"show binlog events in {MARIADB.literal(file)} limit {offset}, 10000")
                offset += len(events)
                for _, pos, event_type, _, end_pos, info in events:
                    if file == start.file and int(end_pos) <= start.position:
                        continue
                    if file == self.snapshot.file and int(pos) >= self.snapshot.position:
                        return counts
                    if in_start_transaction is None:
                        in_start_transaction = not starts_transaction(event_type, str(info))
                    if in_start_transaction:
                        in_start_transaction = not ends_transaction(event_type, str(info))
                        continue
                    if event_type == "Table_map":
                        match = TABLE_MAP.search(str(info))
                        if match and match.group(1) == self.url.database and match.group(2) in counts:
                            counts[match.group(2)] += 1
                if len(events) < 10000:
                    break
        return counts


def starts_transaction(event_type: str, info: str) -> bool:
    return event_type in ("Gtid", "Gtid_log_event") or (event_type == "Query" and info.strip().upper() == "BEGIN")


def ends_transaction(event_type: str, info: str) -> bool:
    return event_type == "Xid" or (event_type == "Query" and info.strip().upper() == "COMMIT")
