"""The source side of a verification against PostgreSQL: one database read through one snapshot,
with pg8000 (pure Python), under the same contract as the MariaDB side (source.py).

- **Snapshot**: a `REPEATABLE READ READ ONLY` transaction; its first statement takes the snapshot
  and reads the server's WAL position (`pg_current_wal_lsn()`, on a standby the replay position):
  every transaction the snapshot sees committed at or before it.
- **Tables**: `schema.table` (a bare name is in schema `public`); by default every ordinary table
  of every schema but the system's. In the lake a table is `database_name` `<database>.<schema>`
  (Debezium's source.db and source.schema) and `table_name` the table. Generated columns are left
  out: PostgreSQL's logical decoding (before 18) does not send them.
- **Counts and checksums** are computed inside PostgreSQL as against MariaDB, over the canonical
  texts of postgres_sql.py; PostgreSQL has no CRC-32 before version 18, so both sides hash the
  texts with MD5 (sql.POSTGRES, sql.SPARK_MD5).
- **In flight**: a table that differs is `in_flight` when the WAL between the lake's last applied
  change and the snapshot holds committed row changes of it. Debezium's `source.lsn` of a streamed
  change is the LSN of the WAL record it decoded, so the records after the lake's greatest LSN are
  the changes it cannot have (after a snapshot read, whose LSN is the snapshot's, the records from
  that LSN on). They are read with the `pg_walinspect` extension (PostgreSQL 15+): heap inserts,
  updates, deletes, multi-inserts and truncates on the table's file, by transactions whose commit
  record is in the same stretch of WAL. Without the extension (or the right to run it: superuser
  or pg_read_server_files) or once the WAL is recycled, the check is skipped and a difference is
  `different`, as against a MariaDB whose binlog cannot be read. The WAL position alone does not
  tell: it moves on with every commit, checkpoint and vacuum of the whole server, so "the WAL is
  past the lake" would call every difference in flight.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from cdc_lake.verify.postgres_sql import postgres_value
from cdc_lake.verify.source import SourceError, SourceTable
from cdc_lake.verify.sql import POSTGRES, POSTGRES_LAKE, Column, LakeTexts

PASSWORD_VARIABLES = ("CDC_LAKE_SOURCE_PASSWORD", "PGPASSWORD")
SCHEMES = ("postgresql", "postgres")
DEFAULT_SCHEMA = "public"
LAKE_LSN = re.compile(r"^lsn (\d+)\b")
# the WAL records of a row change Debezium decodes (record_type without its `+INIT` flag)
ROW_CHANGES = (
    ("Heap", "INSERT"), ("Heap", "UPDATE"), ("Heap", "HOT_UPDATE"), ("Heap", "DELETE"), ("Heap", "TRUNCATE"),
    ("Heap2", "MULTI_INSERT"),
)
SETTINGS = {
    "TimeZone": "UTC", "DateStyle": "ISO, YMD", "IntervalStyle": "postgres", "extra_float_digits": "1",
    "standard_conforming_strings": "on", "bytea_output": "hex",
}


@dataclass(frozen=True)
class PostgresUrl:
    """`postgresql://user@host:port/database`; the password comes from the environment."""

    user: str
    host: str
    port: int
    database: str

    @classmethod
    def parse(cls, url: str) -> PostgresUrl:
        expected = f"{url!r}: expected postgresql://user@host:port/database"
        parsed = urlparse(url)
        if parsed.scheme not in SCHEMES:
            raise SourceError(expected)
        if parsed.password:
            raise SourceError(
                "put the password in $CDC_LAKE_SOURCE_PASSWORD (or $PGPASSWORD), not in the URL: "
                "command lines end up in shell histories and process lists"
            )
        if parsed.query or parsed.fragment:
            raise SourceError(f"{url!r}: connection parameters (?...) are not supported")
        database = parsed.path.lstrip("/")
        if not database or "/" in database or not parsed.hostname:
            raise SourceError(expected)
        try:
            port = parsed.port or 5432
        except ValueError as exc:
            raise SourceError(f"{expected}: {exc}") from exc
        user = unquote(parsed.username or os.environ.get("PGUSER") or os.environ.get("USER", "postgres"))
        return cls(user, parsed.hostname, port, unquote(database))

    def __str__(self) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.database}"

    def table_names(self, names: list[str]) -> list[str]:
        """`--tables` as `schema.table`: a bare name is in schema public; `database.schema.table`
        must name this database."""
        found = []
        for name in names:
            parts = name.split(".")
            if len(parts) == 3:
                if parts[0] != self.database:
                    raise SourceError(f"--tables {name}: not in the source database {self.database}")
                parts = parts[1:]
            if len(parts) == 1:
                parts = [DEFAULT_SCHEMA, *parts]
            if len(parts) != 2 or not all(parts):
                raise SourceError(f"--tables {name}: expected schema.table")
            found.append(".".join(parts))
        return found

    def open(self, password: str | None = None) -> PostgresDatabase:
        return PostgresDatabase(self, password)


@dataclass(frozen=True)
class PostgresTable:
    """Where a table's rows live, for the WAL records that change it."""

    oid: int
    tablespace: int
    database: int
    filenode: int


class PostgresDatabase:
    """One connection, one snapshot: every read of a verification run sees the same rows."""

    texts: LakeTexts = POSTGRES_LAKE
    changes_noun = "row changes for it in the WAL"
    # the greatest LSN the lake applied (change_order leads with the commit before each change's
    # transaction: its last row is not the greatest LSN when transactions interleave); at one LSN a
    # streamed change (its record applied) before a snapshot read (the records from it on not)
    lake_order = (
        "cast(regexp_extract(source_position, '^lsn ([0-9]+)', 1) as bigint) desc nulls last, "
        "instr(source_position, ' snapshot ') = 0 desc"
    )
    # a snapshot read carries no commit LSN: it sorts before the stream (docs/snapshots.md)
    snapshots_rebaseline = False

    def __init__(self, url: PostgresUrl, password: str | None = None) -> None:
        import pg8000.dbapi

        if password is None:
            password = next((os.environ[v] for v in PASSWORD_VARIABLES if v in os.environ), None)
        self.url = url
        try:
            self.conn = pg8000.dbapi.connect(user=url.user, password=password, host=url.host, port=url.port,
                                             database=url.database, timeout=3600,
                                             application_name="cdc-lake verify")
        except (pg8000.dbapi.Error, OSError) as exc:
            raise SourceError(f"cannot connect to {url}: {exc}") from exc
        self.conn.autocommit = True
        self.snapshot: int | None = None
        self._relations: dict[str, PostgresTable] = {}
        self._schemas: dict[str, str] = {}

    def close(self) -> None:
        self.conn.close()

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """Run SQL as it is (no parameters: pg8000's simple query, no placeholder rewriting)."""
        cursor = self.conn.cursor()
        try:
            cursor.execute(sql)
            return list(cursor.fetchall()) if cursor.description else []
        finally:
            cursor.close()

    def begin_snapshot(self) -> None:
        """Open the snapshot and read the WAL position it stands at."""
        for name, value in SETTINGS.items():
            self.query(f"set {name} = {POSTGRES.literal(value)}")
        self.query("begin transaction isolation level repeatable read read only")
        # the transaction's first statement takes its snapshot, then reads the position: every
        # transaction the snapshot sees committed at or before it
        ((lsn,),) = self.query(
            "select (case when pg_is_in_recovery() then pg_last_wal_replay_lsn() else pg_current_wal_lsn() end)"
            " - '0/0'::pg_lsn"
        )
        self.snapshot = int(lsn)

    def snapshot_text(self) -> str:
        return "" if self.snapshot is None else lsn_text(self.snapshot)

    def tables(self) -> list[str]:
        rows = self.query(
            "select n.nspname || '.' || c.relname, n.nspname from pg_class c "
            "join pg_namespace n on n.oid = c.relnamespace "
            # ordinary tables, partitions included (Debezium sends a partition's changes as its own)
            "where c.relkind = 'r' and n.nspname not in ('pg_catalog', 'information_schema') "
            "and n.nspname !~ '^pg_(toast|temp_)' order by 1"
        )
        self._schemas.update((str(label), str(schema)) for label, schema in rows)
        return [r[0] for r in rows]

    def lake_database(self, table: str) -> str:
        """`<database>.<schema>`, as Debezium's source.db and source.schema make it."""
        return f"{self.url.database}.{self._schemas.get(table, table.partition('.')[0])}"

    def describe(self, table: str) -> SourceTable:
        found = self.query(
            "select c.oid, n.nspname, c.relname, coalesce(nullif(c.reltablespace, 0), d.dattablespace), d.oid, "
            "pg_relation_filenode(c.oid) from pg_class c join pg_namespace n on n.oid = c.relnamespace "
            "join pg_database d on d.datname = current_database() "
            f"where c.relkind in ('r', 'p') and n.nspname || '.' || c.relname = {POSTGRES.literal(table)}"
        )
        if not found:
            raise SourceError(f"{self.url.database}.{table}: no such table in the source")
        oid, schema, name, tablespace, database, filenode = found[0]
        self._relations[table] = PostgresTable(int(oid), int(tablespace), int(database), int(filenode or 0))
        columns = [
            Column(n, t)
            for n, t in self.query(
                # a domain is compared as its base type, an array as `_<element>`
                "select a.attname, coalesce(b.typname, t.typname) from pg_attribute a "
                "join pg_type t on t.oid = a.atttypid left join pg_type b on t.typtype = 'd' and b.oid = t.typbasetype "
                f"where a.attrelid = {int(oid)} and a.attnum > 0 and not a.attisdropped and a.attgenerated = '' "
                "order by a.attnum"
            )
        ]
        key_names = [
            r[0]
            for r in self.query(
                "select a.attname from pg_index i cross join unnest(i.indkey) with ordinality as k(attnum, n) "
                "join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum "
                f"where i.indrelid = {int(oid)} and i.indisprimary order by k.n"
            )
        ]
        by_name = {c.name: c for c in columns}
        return SourceTable(name, columns, [by_name[k] for k in key_names if k in by_name],
                           database=f"{self.url.database}.{schema}", title=table)

    def _relation(self, table: SourceTable) -> str:
        return f"{POSTGRES.quote(table.database.rpartition('.')[2])}.{POSTGRES.quote(table.name)}"

    def _digests(self, table: SourceTable) -> str:
        """The table's rows as the MD5 of their key text and of their row text (one MD5 when the
        row is its key); `offset 0` keeps PostgreSQL from computing them again at each use."""
        row = POSTGRES.row_text([postgres_value(c) for c in table.columns])
        if table.keyless:
            digests = f"{POSTGRES.digest(row)} as key_digest, null::text as row_digest"
        else:
            key = POSTGRES.row_text([postgres_value(c) for c in table.key])
            digests = f"{POSTGRES.digest(key)} as key_digest, {POSTGRES.digest(row)} as row_digest"
        return f"(select {digests} from {self._relation(table)} offset 0) as digests"

    def buckets(self, table: SourceTable, width: int, within: int, prefixes: list[str]) -> dict[str, tuple[int, int]]:
        """bucket (`width` hex digits of the key's hash) -> (rows, checksum), for the rows whose
        key hash starts with one of `prefixes` (`within` digits long)."""
        key_hash = "key_digest"
        checksum = POSTGRES.digest_number("coalesce(row_digest, key_digest)")
        rows = self.query(
            f"select {POSTGRES.bucket(key_hash, width)}, count(*), sum({checksum}) from {self._digests(table)} "
            f"where {POSTGRES.in_buckets(key_hash, within, prefixes)} group by 1"
        )
        return {str(b): (int(n), int(s or 0) % 2**64) for b, n, s in rows}

    def rows(self, table: SourceTable, width: int, prefixes: list[str]) -> list[tuple[str | None, ...]]:
        """The rows in the given buckets, each column as postgres_value writes it."""
        key = POSTGRES.row_text([postgres_value(c) for c in table.key or table.columns])
        values = ", ".join(postgres_value(c) for c in table.columns)
        where = POSTGRES.in_buckets(POSTGRES.key_hash(key), width, prefixes)
        found = self.query(f"select {values} from {self._relation(table)} where {where}")
        return [tuple(None if v is None else str(v) for v in r) for r in found]

    def changes_after(self, lake_position: str, tables: list[SourceTable]) -> dict[str, int] | None:
        """Committed row changes per table (by its label) in the WAL after the lake's last applied
        change and up to the snapshot: the changes the lake cannot have yet. None when the WAL
        cannot be read (no pg_walinspect or no right to it, WAL recycled) or the lake's position
        is not an LSN."""
        match = LAKE_LSN.match(lake_position)
        if match is None or self.snapshot is None:
            return None
        start = int(match.group(1))
        # a snapshot read's LSN is the snapshot's: a record starting there is not in it
        after = ">=" if " snapshot " in f" {lake_position} " else ">"
        functions = dict(self.query(
            "select p.proname, quote_ident(n.nspname) || '.' || quote_ident(p.proname) from pg_proc p "
            "join pg_namespace n on n.oid = p.pronamespace where p.proname in "
            "('pg_get_wal_records_info', 'pg_get_wal_records_info_till_end_of_wal') "
            "and has_function_privilege(p.oid, 'execute')"
        ))
        if "pg_get_wal_records_info" not in functions:
            return None
        counts = {t.label: 0 for t in tables}
        ((flushed,),) = self.query(
            "select (case when pg_is_in_recovery() then pg_last_wal_replay_lsn() else pg_current_wal_flush_lsn() end)"
            " - '0/0'::pg_lsn"
        )
        if start >= min(self.snapshot, int(flushed)):
            return counts
        # PostgreSQL 15 refuses an end at or past the flushed WAL; later versions stop there themselves
        if "pg_get_wal_records_info_till_end_of_wal" in functions:
            records = f"{functions['pg_get_wal_records_info_till_end_of_wal']}({pg_lsn(start)})"
        else:
            records = f"{functions['pg_get_wal_records_info']}({pg_lsn(start)}, {pg_lsn(self.snapshot)})"
        self.query("savepoint cdc_lake_wal")
        try:
            found = self.query(changes_sql(records, start, after, self.snapshot, {
                t.label: self._relations[t.label] for t in tables if t.label in self._relations
            }))
        except Exception:  # noqa: BLE001 - WAL recycled, no right to read it: the position is unknown
            self.query("rollback to savepoint cdc_lake_wal")
            return None
        self.query("release savepoint cdc_lake_wal")
        counts.update({str(label): int(n) for label, n in found})
        return counts


def changes_sql(records: str, start: int, after: str, end: int, relations: dict[str, PostgresTable]) -> str:
    """PostgreSQL: per table, the row-change WAL records after `start` (`after`: `>` or `>=`)
    and before `end` whose transaction (or the transaction of which it is a subtransaction)
    commits in that stretch, from `records`, a call of pg_walinspect's record listing."""
    if not relations:
        return "select null, 0 where false"
    kinds = ", ".join(f"({POSTGRES.literal(rm)}, {POSTGRES.literal(kind)})" for rm, kind in ROW_CHANGES)
    # a record's blocks name the table's file (`rel <tablespace>/<database>/<file>`), a TRUNCATE its oid
    word_end = "\\M"
    tables = ", ".join(
        f"({POSTGRES.literal(label)}, {POSTGRES.literal(f'rel {r.tablespace}/{r.database}/{r.filenode}{word_end}')}, "
        f"{POSTGRES.literal(f'relids( [0-9]+)* {r.oid}{word_end}')})"
        for label, r in relations.items()
    )
    return f"""with wal as materialized (
    select start_lsn, xid, resource_manager as rm, split_part(record_type, '+', 1) as kind, description, block_ref
    from {records}
    where start_lsn {after} {pg_lsn(start)} and start_lsn < {pg_lsn(end)}
), committed as (
    select xid from wal where rm = 'Transaction' and kind in ('COMMIT', 'COMMIT_PREPARED')
    union all
    select sub::xid from wal,
        regexp_split_to_table(trim(substring(description from 'subxacts: ([0-9 ]+)')), ' +') as sub
    where rm = 'Transaction' and kind in ('COMMIT', 'COMMIT_PREPARED') and description ~ 'subxacts: [0-9]'
), changes as (
    select kind, description, block_ref from wal
    where (rm, kind) in ({kinds}) and xid in (select xid from committed)
)
select t.label, count(c.kind) from (values {tables}) as t(label, rel, relids)
left join changes as c on c.block_ref ~ t.rel or (c.kind = 'TRUNCATE' and c.description ~ t.relids)
group by t.label"""


def pg_lsn(lsn: int) -> str:
    """A pg_lsn literal (`'16/B374D848'::pg_lsn`) of an LSN as a number."""
    return f"'{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}'::pg_lsn"


def lsn_text(lsn: int) -> str:
    """An LSN as the lake's source_position writes it, and as PostgreSQL does."""
    return f"lsn {lsn} ({lsn >> 32:X}/{lsn & 0xFFFFFFFF:X})"
