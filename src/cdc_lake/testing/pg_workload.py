"""The scripted SQL workload of the PostgreSQL end-to-end test (PostgreSQL → Debezium → Kafka →
cdc_lake), and its truth.

The workload runs in rounds against a real PostgreSQL server: before the connectors start (their
initial snapshot), while they stream, and after the first build (incremental). After every
committed transaction the `Recorder` reads each table the transaction touched as PostgreSQL's own
text (the output function's text of every column, in UTC): the row states the database reports, in commit order,
are the truth the lake is compared with (`pg_values` turns them into the lake's canonical text).

What it covers, each for a reason of its own:
- every type of `TYPES_COLUMNS` at both ends of its range, NULL in every column, ±Infinity/NaN
  floats and ±infinity dates and timestamps;
- replica identity DEFAULT (an update carries no before image, a delete only the key) and FULL
  (both images whole), on tables with a primary key, and a keyless table (FULL, multiset rows);
- TOASTed `text`, `jsonb` and `bytea` values over 8 kB stored out of line (STORAGE EXTERNAL, random
  md5 text, so neither compression nor inline storage can keep them in the row) that stay
  unchanged while other columns of their rows are updated: with DEFAULT identity Debezium then
  sends its placeholder `__debezium_unavailable_value` for them;
- TRUNCATE of a table with live rows, then new inserts; an update of the primary key;
- two transactions interleaved on two connections over one table (the lake sees commit order);
- one table name in two schemas (`public.items`, `other.items`);
- a large transaction (`bulk`);
- a Debezium incremental snapshot (`IncrementalSnapshot`) of `public.accounts` whose chunk window
  has updates, a delete and an insert of that table's rows inside it, and changes after it.

Every statement is the same in each database the workload runs in: `e2e` keeps each table's own
replica identity, `e2e_full` sets every table to FULL (the identity a variant of the settings
matrix reads; replica identity is a table's, not a connector's).

A row changes at most once per transaction: the lake keeps one version per change, the truth one
state per committed transaction, and the two agree only so.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

SCHEMAS = ("public", "other")
# md5 hex of consecutive numbers: incompressible enough that pglz gives up, here ~13 kB
TOAST_TEXT_PARTS = 400

TYPES_COLUMNS = [
    ("id", "integer primary key"),
    ("c_smallint", "smallint"), ("c_int", "integer"), ("c_bigint", "bigint"),
    ("c_numeric", "numeric(20,5)"), ("c_numeric_free", "numeric"), ("c_money", "money"),
    ("c_real", "real"), ("c_double", "double precision"), ("c_bool", "boolean"),
    ("c_text", "text"), ("c_varchar", "varchar(100)"), ("c_char", "char(10)"), ("c_bytea", "bytea"),
    ("c_uuid", "uuid"), ("c_json", "json"), ("c_jsonb", "jsonb"), ("c_xml", "xml"),
    ("c_int_array", "integer[]"), ("c_text_array", "text[]"), ("c_hstore", "hstore"),
    ("c_interval", "interval"), ("c_date", "date"), ("c_time", "time"), ("c_timetz", "timetz"),
    ("c_timestamp", "timestamp"), ("c_timestamptz", "timestamptz"),
    ("c_bit1", "bit(1)"), ("c_bit", "bit(10)"), ("c_varbit", "varbit(64)"),
    ("c_inet", "inet"), ("c_cidr", "cidr"), ("c_macaddr", "macaddr"), ("c_enum", "mood"),
]
TYPES_NAMES = [name for name, _ in TYPES_COLUMNS]

# SQL literals per row, in TYPES_COLUMNS' order. Each type at the ends of what Debezium carries:
# an interval beyond 2^53 microseconds (about 285 years) passes through a double and one beyond
# 2^63 saturates, and a timestamp after 294247 AD overflows MicroTimestamp; the lake rejects a
# saturated or overflowed value with its column (docs/canonical_values.md), so they are not here
ROW_MIN = [
    "1", "-32768", "-2147483648", "-9223372036854775808", "-999999999999999.99999",
    "-123456789012345678901234567890.123456789012345678901234567890", "-92233720368547758.08",
    "-3.4028235e38", "-1.7976931348623157e308", "false", "''", "''", "''", "'\\x'",
    "'00000000-0000-0000-0000-000000000000'", "'[]'", "'{}'", "'<a/>'", "'{}'", "'{}'", "''",
    "'-285 years'", "'4713-01-01 BC'", "'00:00:00'", "'00:00:00+15:59'", "'4713-01-01 00:00:00 BC'",
    "'4713-01-01 00:00:00+00 BC'", "B'0'", "B'0000000000'", "B''", "'0.0.0.0'", "'0.0.0.0/0'",
    "'00:00:00:00:00:00'", "'sad'",
]
ROW_MAX = [
    "2", "32767", "2147483647", "9223372036854775807", "999999999999999.99999",
    "0.000000000000000000000000000001", "92233720368547758.07", "3.4028235e38", "1.7976931348623157e308",
    "true", "'ÿ Grüße ✓ 😀'", "'zzzzzzzzzz'", "'zzzzzzzzzz'", "'\\xffffffffffffffffffffffffffffffff'",
    "'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'{\"k\": [1, 2.5, \"x\"], \"n\": null}'",
    "'{\"a\": 1, \"b\": [1, 2], \"s\": \"x: y, z\"}'", "'<r a=\"1\">x &amp; y</r>'",
    "'{1,NULL,-2147483648,2147483647}'", "'{\"a\",NULL,\"b c\",\"\"}'", "'\"a\"=>\"1\", \"b\"=>NULL'",
    "'285 years'", "'5874897-12-31'", "'24:00:00'", "'24:00:00-15:59'", "'294247-01-01 23:59:59.999999'",
    "'294276-12-31 23:59:59.999999+00'", "B'1'", "B'1111111111'", f"B'{'1' * 64}'",
    "'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'", "'255.255.255.255/32'", "'ff:ff:ff:ff:ff:ff'", "'happy'",
]
ROW_NULLS = ["3", *["null"] * (len(TYPES_NAMES) - 1)]
ROW_TEXT = [
    "4", "-1", "42", "-5", "12.50000", "3.14159", "1234.5", "3.14", "0.1", "true",
    "'O''Brien \"x\" 😀 日本語 line1\nline2\ttab\\'", "'Grüße ✓'", "'ab'", "'\\x00ff10'",
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'{\"a\":1,  \"b\":[1,2]}'",
    "'{\"z\": {\"y\": [true, null]}, \"a\": 1.50}'",
    "'<doc>ü</doc>'", "'{7}'", "'{\"x,y\",\"q\\\"uote\"}'", "'\"k\"=>\"v\"'", "'1 year 2 mons 3 days 04:05:06.789'",
    "'2024-02-29'", "'13:05:00.12'", "'13:05:00.5+05:30'", "'2024-02-29 13:05:00.12'",
    "'2024-03-01 00:15:00.5+05:30'", "B'1'", "B'0000000101'", "B'101'", "'192.168.0.1/24'", "'10.0.0.0/8'",
    "'08:00:2b:01:02:03'", "'ok'",
]
# the special values of floats, dates and timestamps
ROW_INFINITY = [
    "5", "0", "0", "0", "0", "0", "0", "'NaN'", "'Infinity'", "false", "'x'", "'x'", "'x'", "'\\x00'",
    "'00000000-0000-0000-0000-000000000001'", "'null'", "'null'", "'<a/>'", "'{NULL}'", "'{NULL}'",
    "'\"\"=>\"\"'", "'0'", "'infinity'", "'00:00:00.000001'", "'00:00:00+00'", "'infinity'", "'infinity'",
    "B'0'", "B'0000000001'", "B'0'", "'::'", "'::/0'", "'00:00:00:00:00:01'", "'sad'",
]
ROW_MINUS_INFINITY = [
    "6", "0", "0", "0", "-0.00001", "-0.5", "-0.01", "'-Infinity'", "'NaN'", "false", "'x'", "'x'", "'x'",
    "'\\x00'", "'00000000-0000-0000-0000-000000000002'", "'0'", "'0'", "'<a/>'", "'{NULL,NULL}'",
    "'{NULL,NULL}'", "''", "'-1 day -00:00:00.000001'", "'-infinity'", "'23:59:59.999999'",
    "'23:59:59.999999-00:30'", "'-infinity'", "'-infinity'", "B'1'", "B'1000000000'", "B'0101'", "'::1'",
    "'2001:db8::/32'", "'01:02:03:04:05:06'", "'happy'",
]

# table -> (column definitions, replica identity in the `e2e` database)
TABLES: dict[str, tuple[str, str]] = {
    "public.types": (", ".join(f"{n} {t}" for n, t in TYPES_COLUMNS), "default"),
    "public.accounts": ("id bigint primary key, owner text, balance numeric(12,2), status varchar(10)", "default"),
    "public.accounts_full": ("id bigint primary key, owner text, balance numeric(12,2), status varchar(10)",
                             "full"),
    "public.docs": ("id integer primary key, version integer, note text, body text, payload jsonb, blob bytea",
                    "default"),
    "public.events_nokey": ("kind varchar(10), amount integer", "full"),
    "public.truncated": ("id integer primary key, v text", "default"),
    "public.items": ("id integer primary key, name text, qty integer", "default"),
    "other.items": ("id integer primary key, name text, price numeric(8,2)", "default"),
    "public.bulk": ("id integer primary key, v text, n numeric(12,3)", "default"),
    "public.sync_marker": ("id integer primary key, round_no integer", "default"),
}
TOASTED = ("body", "payload", "blob")
# Debezium's signaling table (`signal.data.collection`, the `source` channel: the connector reads
# signals from the WAL, so the table is captured like any other). An `execute-snapshot` row starts
# an incremental snapshot, and each connector writes its chunk windows' watermarks here. Not in
# TABLES: the connectors write to it too, so the Recorder has no truth for it; its rows land as
# ordinary rows of an ordinary table (reconciled, never rejected, and equal under verify).
SIGNAL_TABLE = "public.debezium_signal"
SIGNAL_COLUMNS = "id varchar(64) primary key, type varchar(32) not null, data varchar(2048)"


@dataclass
class Transaction:
    """Statements committed together; `tables` are the tables (`schema.table`) whose rows they change."""

    statements: list[str]
    tables: list[str] = field(default_factory=list)
    label: str = ""


@dataclass
class Interleaved:
    """Two transactions on two connections whose statements alternate (`steps`: connection 0 or 1
    and a statement); connection `first_commit` commits first. Each commit is a state of `tables`."""

    steps: list[tuple[int, str]]
    tables: list[str]
    first_commit: int = 1
    label: str = "interleaved"


@dataclass
class IncrementalSnapshot:
    """An `execute-snapshot` signal (incremental) for `table`, with `statements` committed inside
    every connector's first chunk window. The signal is committed while a second connection holds
    `table` ACCESS EXCLUSIVE: each connector writes its window's open watermark, then waits on the
    lock for the chunk's first query (its maximum key). Once every connector's window is open,
    `statements` run in the lock's transaction and commit, so they stream between the watermarks:
    Debezium drops their keys from the chunk and sends the others as reads (`op: r`,
    `source.snapshot: incremental`) at the close watermark's place in the WAL. The step ends when
    every connector has closed two windows: `table` (under the chunk size) fits the first, and the
    second reads nothing and ends the snapshot."""

    table: str
    statements: list[str]
    label: str = "incremental snapshot"


Step = Transaction | Interleaved | IncrementalSnapshot


def row(values: Sequence[str]) -> str:
    return "(" + ", ".join(values) + ")"


def insert(table: str, rows: Iterable[Sequence[str]]) -> str:
    return f"insert into {table} values " + ", ".join(row(r) for r in rows)


def toast_text(seed: int, parts: int = TOAST_TEXT_PARTS) -> str:
    """SQL for ~13 kB of random-looking hex text, different per seed (computed by the server)."""
    return f"(select string_agg(md5(i::text || '-{seed}'), '' order by i) from generate_series(1, {parts}) i)"


def toast_row(row_id: int, seed: int) -> list[str]:
    text = toast_text(seed)
    return [
        str(row_id), "1", "'first'", text, f"jsonb_build_object('seed', {seed}, 'data', {toast_text(seed + 1)})",
        # hex decodes to half its length: twice the parts for as many bytes
        f"decode({toast_text(seed + 2, 2 * TOAST_TEXT_PARTS)}, 'hex')",
    ]


def setup_round(identity_full: bool) -> list[Transaction]:
    """Schemas, the enum and hstore, and every table (all exist before the connectors start, so a
    `filtered` publication lists them), with their replica identity and out-of-line storage."""
    statements = [
        "create extension if not exists hstore",
        "create schema other",
        "create type mood as enum ('sad', 'ok', 'happy')",
    ]
    for table, (columns, identity) in TABLES.items():
        statements.append(f"create table {table} ({columns})")
        if identity_full or identity == "full":
            statements.append(f"alter table {table} replica identity full")
    statements += [f"alter table public.docs alter column {c} set storage external" for c in TOASTED]
    statements.append(f"create table {SIGNAL_TABLE} ({SIGNAL_COLUMNS})")
    return [Transaction(statements, label="schema")]


def snapshot_round() -> list[Transaction]:
    """Rows that exist before the connectors start: they arrive through the initial snapshot."""
    accounts = [["1", "'ann'", "10.00", "'open'"], ["2", "'bob'", "20.50", "'open'"], ["3", "'cy'", "0.01", "null"]]
    return [
        Transaction([insert("public.types", [ROW_MIN, ROW_MAX])], ["public.types"], label="snapshot types"),
        Transaction([
            insert("public.accounts", accounts), insert("public.accounts_full", accounts),
            insert("public.events_nokey", [["'click'", "1"], ["'click'", "1"], ["'view'", "null"]]),
            insert("public.truncated", [["1", "'a'"], ["2", "'b'"]]),
            insert("public.items", [["1", "'public one'", "5"]]),
            insert("other.items", [["1", "'other one'", "9.99"]]),
        ], ["public.accounts", "public.accounts_full", "public.events_nokey", "public.truncated", "public.items",
            "other.items"], label="snapshot rest"),
        Transaction([insert("public.docs", [toast_row(1, 100)])], ["public.docs"], label="snapshot toast"),
    ]


def account_changes(table: str) -> list[Step]:
    """Updates, deletes and a key change of one accounts table (DEFAULT or FULL identity)."""
    return [
        Transaction([f"update {table} set balance = balance + 1, status = 'busy' where id = 1"], [table]),
        Transaction([f"delete from {table} where id = 2"], [table], label="delete"),
        Transaction([f"update {table} set id = 30 where id = 3"], [table], label="key change"),
        Transaction([insert(table, [["2", "'bob again'", "1.00", "'open'"]])], [table], label="re-insert"),
    ]


def streaming_round(large_rows: int) -> list[Step]:
    """Changes streamed from the WAL after the snapshot."""
    return [
        Transaction([insert("public.types", [ROW_NULLS, ROW_TEXT, ROW_INFINITY, ROW_MINUS_INFINITY])],
                    ["public.types"], label="insert nulls, text and infinities"),
        Transaction(["update public.types set c_int = 7, c_text = 'updated ✓', c_jsonb = '{\"u\": true}' "
                     "where id = 4"], ["public.types"], label="update types"),
        Transaction(["update public.types set id = 40 where id = 4"], ["public.types"], label="types key change"),
        Transaction(["delete from public.types where id = 1"], ["public.types"], label="types delete"),
        *account_changes("public.accounts"),
        *account_changes("public.accounts_full"),
        # TOAST: new out-of-line rows, then updates that leave the toasted columns alone
        Transaction([insert("public.docs", [toast_row(2, 200), toast_row(3, 300)])], ["public.docs"],
                    label="toast insert"),
        Transaction(["update public.docs set version = version + 1, note = 'second' where id in (1, 2)"],
                    ["public.docs"], label="toast unchanged"),
        Transaction([f"update public.docs set version = version + 1, body = {toast_text(900)} where id = 1"],
                    ["public.docs"], label="toast one changed"),
        Transaction(["update public.docs set note = 'third' where id = 1"], ["public.docs"],
                    label="toast unchanged again"),
        Transaction(["delete from public.docs where id = 3"], ["public.docs"], label="toast delete"),
        # keyless (FULL): one of two identical rows goes; a row is updated
        Transaction(["delete from public.events_nokey where ctid = (select min(ctid) from public.events_nokey "
                     "where kind = 'click')"], ["public.events_nokey"], label="keyless delete one of two"),
        Transaction(["update public.events_nokey set amount = 2 where kind = 'view'"], ["public.events_nokey"]),
        Transaction([insert("public.events_nokey", [["'buy'", "5"], ["'buy'", "5"]])], ["public.events_nokey"]),
        # TRUNCATE of live rows, then rows again (one key that existed before)
        Transaction(["truncate table public.truncated"], ["public.truncated"], label="truncate"),
        Transaction([insert("public.truncated", [["2", "'after'"], ["3", "'after'"]])], ["public.truncated"]),
        # one table name in two schemas
        Transaction(["update public.items set qty = 6 where id = 1",
                     "update other.items set price = 10.01 where id = 1",
                     insert("public.items", [["2", "'public two'", "1"]]),
                     insert("other.items", [["2", "'other two'", "0.50"]])],
                    ["public.items", "other.items"], label="items in two schemas"),
        # two transactions interleaved on one table: B commits first though A began first
        Interleaved([
            (0, "update public.accounts set balance = 100.00 where id = 1"),
            (1, insert("public.accounts", [["10", "'from b'", "1.00", "'new'"]])),
            (0, insert("public.accounts", [["11", "'from a'", "2.00", "'new'"]])),
            (1, "update public.accounts set status = 'by b' where id = 30"),
        ], ["public.accounts"], first_commit=1),
        *large_transaction(large_rows),
    ]


def large_transaction(rows: int) -> list[Transaction]:
    if rows <= 0:
        return []
    return [Transaction([
        "insert into public.bulk select i, 'row ' || i, round(i / 7.0, 3) from generate_series(1, "
        f"{rows}) i",
    ], ["public.bulk"], label=f"large transaction: {rows} rows")]


def incremental_round() -> list[Step]:
    """After the first build: more changes on the same rows (the lake continues from its state)."""
    return [
        Transaction([insert("public.types", [[("1" if i == 0 else v) for i, v in enumerate(ROW_TEXT)]])],
                    ["public.types"], label="re-insert a deleted key"),
        Transaction(["update public.types set c_real = 1.5, c_date = '2000-01-01', c_enum = null where id = 2"],
                    ["public.types"]),
        Transaction(["update public.types set c_smallint = 0 where id in (3, 40)",
                     "delete from public.types where id = 6"], ["public.types"]),
        Transaction(["update public.docs set version = 10 where id = 2"], ["public.docs"],
                    label="toast unchanged after a build"),
        Transaction(["delete from public.docs where id = 1"], ["public.docs"], label="toast delete after a build"),
        Transaction(["update public.accounts set id = 40 where id = 30"], ["public.accounts"], label="key change"),
        # Debezium's incremental snapshot: keys 2, 11, 40 are read; 1, 10, 12 change in the window
        IncrementalSnapshot("public.accounts", [
            "update public.accounts set balance = balance + 5 where id = 1",
            "delete from public.accounts where id = 10",
            insert("public.accounts", [["12", "'in the window'", "3.00", "'new'"]]),
        ]),
        # a streamed change after the window to a key the snapshot read: it lands over the read
        Transaction(["update public.accounts set owner = 'bob after the snapshot' where id = 2"],
                    ["public.accounts"], label="update after the incremental snapshot"),
        Transaction(["update public.accounts_full set owner = 'ann 2' where id = 1"], ["public.accounts_full"]),
        Transaction(["truncate table public.truncated, public.items"], ["public.truncated", "public.items"],
                    label="truncate two tables"),
        Transaction([insert("public.truncated", [["3", "'again'"]])], ["public.truncated"]),
        Transaction([insert("public.events_nokey", [["'click'", "1"], ["'click'", "1"]])], ["public.events_nokey"]),
        Transaction(["update public.bulk set v = 'changed' where id <= 10"], ["public.bulk"]),
    ]


def value_text(data_type: str, name: str) -> str:
    """The truth's text of a column: what PostgreSQL's output function prints for it, as a client
    reading `SELECT *` gets it (`format('%s', v)` calls the type's output function; a cast to text
    would not: it trims char(n)'s padding and adds inet's /128); money as its numeric (its own text
    is locale-formatted, `$1,234.50`)."""
    quoted = '"' + name + '"'
    value = f"{quoted}::numeric" if data_type == "money" else quoted
    return f"case when {quoted} is null then null else format('%s', {value}) end"


@dataclass
class Recorder:
    """Runs steps in one database and keeps, per table, the rows PostgreSQL reports after each commit."""

    server: Any
    database: str
    # table -> [(transaction number, [row dicts of column -> text])]
    states: dict[str, list[tuple[int, list[dict[str, str | None]]]]] = field(default_factory=dict)
    committed: int = 0
    columns: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # the Debezium connectors reading this database: each writes its own incremental snapshot windows
    connectors: int = 1

    def __post_init__(self) -> None:
        self.connections = [self.server.connect(self.database), self.server.connect(self.database)]

    def close(self) -> None:
        for conn in self.connections:
            conn.close()

    def run(self, steps: Iterable[Step]) -> None:
        for step in steps:
            if isinstance(step, Interleaved):
                self._interleaved(step)
                continue
            if isinstance(step, IncrementalSnapshot):
                self._incremental_snapshot(step)
                continue
            cursor = self.connections[0].cursor()
            cursor.execute("begin")
            for statement in step.statements:
                cursor.execute(statement)
            cursor.execute("commit")
            self._committed(step.tables)

    def _interleaved(self, step: Interleaved) -> None:
        cursors = [c.cursor() for c in self.connections]
        for cursor in cursors:
            cursor.execute("begin")
        for connection, statement in step.steps:
            cursors[connection].execute(statement)
        for connection in (step.first_commit, 1 - step.first_commit):
            cursors[connection].execute("commit")
            self._committed(step.tables)

    def _incremental_snapshot(self, step: IncrementalSnapshot, timeout: float = 120.0) -> None:
        # a connector waiting on the lock keeps its replication stream alive (Debezium's keepalive
        # thread), so the wait may be as long as a loaded machine needs
        holder = self.connections[1].cursor()
        opened, closed = self._windows()
        holder.execute("begin")
        holder.execute(f"lock table {step.table} in access exclusive mode")
        try:
            signal = json.dumps({"data-collections": [step.table], "type": "incremental"})
            self.connections[0].cursor().execute(
                f"insert into {SIGNAL_TABLE} values (%s, 'execute-snapshot', %s)", (str(uuid.uuid4()), signal))
            self._committed([])
            self._wait_for_windows(opened + self.connectors, closed, timeout)
            for statement in step.statements:
                holder.execute(statement)
        except BaseException:
            holder.execute("rollback")
            raise
        holder.execute("commit")
        self._committed([step.table])
        self._wait_for_windows(opened + 2 * self.connectors, closed + 2 * self.connectors, timeout)

    def _windows(self) -> tuple[int, int]:
        """Incremental snapshot windows opened and closed so far (their watermark rows)."""
        cursor = self.connections[0].cursor()
        cursor.execute(f"select count(*) filter (where type = 'snapshot-window-open'), "
                       f"count(*) filter (where type = 'snapshot-window-close') from {SIGNAL_TABLE}")
        opened, closed = cursor.fetchone()
        return opened, closed

    def _wait_for_windows(self, opened: int, closed: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while (found := self._windows()) != (opened, closed):
            if time.monotonic() > deadline:
                raise AssertionError(f"incremental snapshot windows (opened, closed): expected {(opened, closed)} "
                                     f"within {timeout:.0f}s, found {found}")
            time.sleep(0.1)

    def _committed(self, tables: Iterable[str]) -> None:
        self.committed += 1
        for table in tables:
            self.states.setdefault(table, []).append((self.committed, self.select(table)))

    def table_columns(self, table: str) -> list[tuple[str, str]]:
        """(column, type as `format_type` prints it) in column order."""
        if table not in self.columns:
            cursor = self.connections[0].cursor()
            cursor.execute(
                "select a.attname, format_type(a.atttypid, a.atttypmod) from pg_attribute a "
                "where a.attrelid = %s::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum",
                (table,),
            )
            self.columns[table] = [(name, data_type) for name, data_type in cursor.fetchall()]
        return self.columns[table]

    def select(self, table: str) -> list[dict[str, str | None]]:
        """`SELECT *` of a table as PostgreSQL's text of each value: timestamps in UTC, intervals
        in ISO 8601 (`P1Y2M3DT4H5M6.789S`: each field on its own, whatever the sign)."""
        columns = self.table_columns(table)
        cursor = self.connections[0].cursor()
        cursor.execute("set timezone = 'UTC'")
        cursor.execute("set intervalstyle = 'iso_8601'")
        cursor.execute(f"select {', '.join(value_text(t, c) for c, t in columns)} from {table}")
        return [dict(zip([c for c, _ in columns], values, strict=True)) for values in cursor.fetchall()]

    def mark(self, round_no: int) -> None:
        """A change every connector must have sent before its topics are read."""
        self.run([Transaction([
            f"insert into public.sync_marker values (1, {round_no}) "
            "on conflict (id) do update set round_no = excluded.round_no"], ["public.sync_marker"])])
