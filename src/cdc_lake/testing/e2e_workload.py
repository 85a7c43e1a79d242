"""The scripted SQL workload of the end-to-end test (MariaDB → Debezium → Kafka → cdc_lake), and its truth.

The workload runs in rounds of transactions against a real MariaDB server. After every committed
transaction the `Recorder` SELECTs each table the transaction touched: the row states the database
itself reports, in commit order, are the truth the lake is compared with (never the project's code).

What it covers: every integer width signed and unsigned at both extremes, decimal(65,30), float,
double, bit(1), bit(64), date, datetime(6), timestamp(6) written under a session time zone other
than UTC, time(6) negative and over 24 h, year, char, varchar, text, a 1 MB mediumtext, binary,
varbinary, blob, enum, set, json, geometry; NULL in every column; non-ASCII text and emoji; inserts,
updates, deletes, primary-key changes, a composite key, a keyless table, multi-row statements,
multi-statement transactions, a large transaction; rows that exist before the connector starts
(the initial snapshot); ALTER TABLE add/drop/rename/modify column, TRUNCATE, DROP TABLE and
re-create; and an ALTER TABLE ADD COLUMN on each of the two tables of SCHEMA_CHANGE_TABLES, whose
option `schema_changes` the test sets (docs/table_options.md, "Schema changes").

A row changes at most once per transaction: the lake keeps one version per change, the truth one
state per committed transaction, and the two agree only so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

DATABASE = "e2e"
# timestamps are written in this zone; the binlog holds UTC instants, the truth is read in UTC
WRITE_TIME_ZONE = "+05:30"
# 1 MiB of UTF-8 (10 bytes per unit), 2-, 3- and 4-byte characters
MEGABYTE_TEXT = "ü€😀x" * 104_857 + "x" * 6

TYPES_COLUMNS = """
    id int not null primary key,
    c_tinyint tinyint, c_tinyint_u tinyint unsigned,
    c_smallint smallint, c_smallint_u smallint unsigned,
    c_mediumint mediumint, c_mediumint_u mediumint unsigned,
    c_int int, c_int_u int unsigned,
    c_bigint bigint, c_bigint_u bigint unsigned,
    c_decimal decimal(65,30), c_float float, c_double double,
    c_bit1 bit(1), c_bit64 bit(64),
    c_date date, c_datetime datetime(6), c_timestamp timestamp(6) null, c_time time(6), c_year year,
    c_char char(10), c_varchar varchar(100), c_text text, c_mediumtext mediumtext,
    c_binary binary(4), c_varbinary varbinary(16), c_blob blob,
    c_enum enum('small','medium','large'), c_set set('a','b','c'), c_json json, c_geometry geometry
"""

TYPES_NAMES = [
    "id", "c_tinyint", "c_tinyint_u", "c_smallint", "c_smallint_u", "c_mediumint", "c_mediumint_u", "c_int",
    "c_int_u", "c_bigint", "c_bigint_u", "c_decimal", "c_float", "c_double", "c_bit1", "c_bit64", "c_date",
    "c_datetime", "c_timestamp", "c_time", "c_year", "c_char", "c_varchar", "c_text", "c_mediumtext", "c_binary",
    "c_varbinary", "c_blob", "c_enum", "c_set", "c_json", "c_geometry",
]

# SQL literals per row (timestamps in WRITE_TIME_ZONE)
ROW_MIN = [
    "1", "-128", "0", "-32768", "0", "-8388608", "0", "-2147483648", "0", "-9223372036854775808", "0",
    "-99999999999999999999999999999999999.999999999999999999999999999999", "-3.40282e38",
    "-1.7976931348623157e308", "b'0'", "b'0'", "'1000-01-01'", "'1000-01-01 00:00:00.000000'",
    "'1970-01-01 05:30:01.000000'", "'-838:59:59.000000'", "1901", "''", "''", "''", "''", "x'00000000'", "x''",
    "x''", "'small'", "''", "'[]'", "ST_GeomFromText('POINT(0 0)')",
]
ROW_MAX = [
    "2", "127", "255", "32767", "65535", "8388607", "16777215", "2147483647", "4294967295", "9223372036854775807",
    "18446744073709551615", "99999999999999999999999999999999999.999999999999999999999999999999", "3.40282e38",
    "1.7976931348623157e308", "b'1'", "b'1111111111111111111111111111111111111111111111111111111111111111'",
    "'9999-12-31'", "'9999-12-31 23:59:59.999999'", "'2038-01-19 08:44:07.999999'", "'838:59:59.000000'", "2155",
    "'zzzzzzzzzz'", "'ÿ'", "'~'", "'~'", "x'ffffffff'", "x'ffffffffffffffffffffffffffffffff'", "x'ff00ff'",
    "'large'", "'a,b,c'", "'{\"k\": [1, 2.5, \"x\"], \"n\": null}'",
    "ST_GeomFromText('LINESTRING(0 0, 1.5 -2, 1e10 3)', 4326)",
]
ROW_NULLS = ["3", *["null"] * (len(TYPES_NAMES) - 1)]
ROW_TEXT = [
    "4", "-1", "1", "-2", "2", "-3", "3", "-4", "4", "-5", "5", "0.000000000000000000000000000001", "3.14", "0.1",
    "b'1'", "b'101'", "'2024-02-29'", "'2024-02-29 13:05:00.120000'", "'2024-03-01 00:15:00.500000'",
    "'-00:00:01.250000'", "2024", "'Grüße ✓'", "'O''Brien \"x\" 😀 日本語'", "'line1\\nline2\\ttab\\\\'",
    "REPEAT('é', 3)", "x'00ff1000'", "x'000102'", "x'deadbeef00'", "'medium'", "'a,c'",
    "'{\"a\":1,\"b\":[1,2],\"s\":\"x: y, z\"}'", "ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))')",
]


@dataclass
class Transaction:
    """Statements committed together; `tables` are the tables whose rows they change."""

    statements: list[str]
    tables: list[str] = field(default_factory=list)
    # DDL changes no row image: the truth records the table but expects no new version
    ddl: bool = False
    label: str = ""


# The end-to-end tests' tables as first created: name -> column definitions
TABLE_COLUMNS = {
    "types": TYPES_COLUMNS,
    "orders": "order_id bigint unsigned not null, line_no smallint not null, qty int, price decimal(10,2), "
    "note varchar(20), primary key (order_id, line_no)",
    "events_nokey": "kind varchar(10), amount int",
    "truncated": "id int primary key, v varchar(10)",
    "recreated": "id int primary key, v varchar(10)",
    "sync_marker": "id int primary key, round_no int",
    "schema_ignored": "id int primary key, v varchar(10)",
    "schema_held": "id int primary key, v varchar(10)",
}
# tables whose option schema_changes is not evolve, -> (mode, the column their ALTER TABLE adds)
SCHEMA_CHANGE_TABLES = {"schema_ignored": ("ignore_new_columns", "extra"), "schema_held": ("fail", "extra")}


def insert(table: str, rows: Iterable[list[str]]) -> str:
    return f"insert into {DATABASE}.{table} values " + ", ".join("(" + ", ".join(r) + ")" for r in rows)


def create_tables(names: Iterable[str]) -> list[Transaction]:
    """The database and the named tables of TABLE_COLUMNS."""
    db = DATABASE
    return [
        Transaction([f"create database {db} character set utf8mb4"], ddl=True),
        Transaction([f"create table {db}.{name} ({TABLE_COLUMNS[name]})" for name in names], ddl=True),
    ]


def snapshot_round() -> list[Transaction]:
    """Tables and rows that exist before the connector starts: they arrive through the snapshot."""
    return [
        *create_tables(TABLE_COLUMNS),
        Transaction([insert("types", [ROW_MIN, ROW_MAX])], ["types"], label="snapshot types"),
        Transaction([
            insert("orders", [[str(o), str(n), str(n), f"{n}.50", "'snap'"] for o in (1, 2) for n in (1, 2)]),
            insert("events_nokey", [["'click'", "1"], ["'click'", "1"], ["'view'", "null"]]),
            insert("truncated", [["1", "'a'"], ["2", "'b'"]]),
            insert("recreated", [["1", "'old'"], ["2", "'old'"]]),
        ], ["orders", "events_nokey", "truncated", "recreated"], label="snapshot rest"),
        Transaction([insert(t, [["1", "'snap'"], ["2", "'snap'"]]) for t in SCHEMA_CHANGE_TABLES],
                    list(SCHEMA_CHANGE_TABLES), label="snapshot schema-change tables"),
    ]


def streaming_round(large_rows: int) -> list[Transaction]:
    """Changes read from the binlog after the snapshot."""
    db = DATABASE
    return [
        Transaction([insert("types", [ROW_NULLS, ROW_TEXT])], ["types"], label="insert nulls and text"),
        Transaction([f"insert into {db}.types (id, c_mediumtext, c_varchar) values (5, '{MEGABYTE_TEXT}', 'big')"],
                    ["types"], label="1 MB mediumtext"),
        # one statement changing several rows; then a multi-statement transaction on two tables
        Transaction([f"update {db}.orders set qty = qty + 10, note = 'multi' where order_id = 1"], ["orders"]),
        Transaction([
            insert("orders", [["3", "1", "7", "70.00", "'new'"], ["3", "2", "8", "80.00", "null"]]),
            f"delete from {db}.orders where order_id = 2 and line_no = 2",
            f"update {db}.types set c_int = 42, c_varchar = 'updated ✓', c_json = '{{\"u\": true}}' where id = 4",
            insert("events_nokey", [["'click'", "1"], ["'buy'", "5"]]),
        ], ["orders", "types", "events_nokey"], label="multi-statement"),
        # primary-key changes: a delete of the old key and an insert of the new one
        Transaction([f"update {db}.types set id = 40 where id = 4"], ["types"], label="key change"),
        Transaction([f"update {db}.orders set line_no = 9 where order_id = 3 and line_no = 2"], ["orders"]),
        # keyless: one of two identical rows goes; an identical row is updated
        Transaction([f"delete from {db}.events_nokey where kind = 'click' limit 1"], ["events_nokey"]),
        Transaction([f"update {db}.events_nokey set amount = 2 where kind = 'view'"], ["events_nokey"]),
        Transaction([f"update {db}.types set c_timestamp = '2000-06-15 12:00:00.000001', c_time = '100:00:00.5', "
                     f"c_float = -0.0001, c_double = 1e-300, c_decimal = -0.5 where id = 2"], ["types"]),
        Transaction([f"delete from {db}.types where id = 1"], ["types"], label="delete"),
        Transaction([f"update {db}.types set c_mediumtext = 'small now' where id = 5"], ["types"]),
        # DDL on the composite-key table; CDC sends no row images for DDL, so every row is changed
        # afterwards, which brings the new column's value to the lake
        Transaction([f"alter table {db}.orders add column shipped date null"], ["orders"], ddl=True),
        Transaction([f"alter table {db}.orders modify column note varchar(40)"], ["orders"], ddl=True),
        Transaction([f"alter table {db}.orders rename column qty to quantity"], ["orders"], ddl=True),
        Transaction([f"update {db}.orders set quantity = quantity + 1, shipped = '2024-05-01'"], ["orders"]),
        Transaction([f"alter table {db}.orders drop column shipped"], ["orders"], ddl=True),
        Transaction([f"update {db}.orders set quantity = quantity + 1 where order_id = 3"], ["orders"]),
        Transaction([f"truncate table {db}.truncated"], ["truncated"], ddl=True),
        Transaction([insert("truncated", [["2", "'after'"], ["3", "'after'"]])], ["truncated"]),
        # a change, the ALTER TABLE, then changes that carry the new column, on each table of
        # SCHEMA_CHANGE_TABLES
        Transaction([f"update {db}.{t} set v = 'before' where id = 1" for t in SCHEMA_CHANGE_TABLES],
                    list(SCHEMA_CHANGE_TABLES)),
        *[Transaction([f"alter table {db}.{t} add column {c} int"], [t], ddl=True)
          for t, (_, c) in SCHEMA_CHANGE_TABLES.items()],
        *[Transaction([f"update {db}.{t} set v = 'after', {c} = 1 where id = 1", insert(t, [["3", "'new'", "3"]])],
                      [t], label=f"{t}: new column") for t, (_, c) in SCHEMA_CHANGE_TABLES.items()],
        Transaction([f"drop table {db}.recreated"], ["recreated"], ddl=True),
        Transaction([f"create table {db}.recreated (id int primary key, v varchar(10), extra int)"],
                    ["recreated"], ddl=True),
        Transaction([insert("recreated", [["2", "'new'", "7"], ["5", "'new'", "null"]])], ["recreated"]),
        *large_transaction(large_rows),
    ]


def large_transaction(rows: int) -> list[Transaction]:
    if rows <= 0:
        return []
    db = DATABASE
    return [
        Transaction([f"create table {db}.bulk (id int primary key, v varchar(20), n decimal(12,3))"], ddl=True),
        Transaction([
            f"insert into {db}.bulk select seq, concat('row ', seq), seq / 7 from {db}.seq_1_to_{rows}",
        ], ["bulk"], label=f"large transaction: {rows} rows"),
    ]


def incremental_round() -> list[Transaction]:
    """After the first build: more changes on the same rows."""
    db = DATABASE
    return [
        Transaction([insert("types", [[("1" if i == 0 else v) for i, v in enumerate(ROW_TEXT)]])], ["types"],
                    label="re-insert a deleted key"),
        Transaction([f"update {db}.types set c_bit64 = b'1{'0' * 63}', "
                     "c_bigint_u = 9223372036854775808, c_set = 'b', c_enum = null, c_geometry = null where id = 2"],
                    ["types"]),
        Transaction([f"update {db}.types set c_tinyint = 0, c_time = '23:59:59.999999' where id in (3, 40)",
                     f"delete from {db}.types where id = 5"], ["types"]),
        Transaction([f"update {db}.orders set order_id = 4 where order_id = 1"], ["orders"], label="key change"),
        Transaction([insert("events_nokey", [["'click'", "1"], ["'click'", "1"]])], ["events_nokey"]),
        Transaction([f"delete from {db}.truncated where id = 2"], ["truncated"]),
        Transaction([f"update {db}.recreated set extra = 8 where id = 2"], ["recreated"]),
        Transaction([f"update {db}.{t} set v = 'again', {c} = 2 where id = 2"
                     for t, (_, c) in SCHEMA_CHANGE_TABLES.items()], list(SCHEMA_CHANGE_TABLES)),
    ]


@dataclass
class Recorder:
    """Runs transactions and keeps, per table, the rows MariaDB reports after each commit."""

    connection: Any
    # table -> [(transaction number, ddl, [row dicts])]
    states: dict[str, list[tuple[int, bool, list[dict[str, Any]]]]] = field(default_factory=dict)
    committed: int = 0
    ddl_statements: list[str] = field(default_factory=list)

    def run(self, transactions: Iterable[Transaction]) -> None:
        with self.connection.cursor() as cursor:
            cursor.execute(f"set session time_zone = '{WRITE_TIME_ZONE}'")
            for txn in transactions:
                cursor.execute("start transaction")
                for statement in txn.statements:
                    cursor.execute(statement)
                    if txn.ddl:
                        self.ddl_statements.append(statement)
                cursor.execute("commit")
                self.committed += 1
                for table in txn.tables:
                    self.states.setdefault(table, []).append((self.committed, txn.ddl, self.select(table)))

    def select(self, table: str) -> list[dict[str, Any]]:
        """`SELECT *` of a table in UTC (an empty list when the table does not exist)."""
        with self.connection.cursor() as cursor:
            cursor.execute("set session time_zone = '+00:00'")
            try:
                cursor.execute(f"show tables from {DATABASE} like '{table}'")
                if not cursor.fetchall():
                    return []
                cursor.execute(f"select * from {DATABASE}.{table}")
                names = [d[0] for d in cursor.description]
                return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            finally:
                cursor.execute(f"set session time_zone = '{WRITE_TIME_ZONE}'")

    def mark(self, round_no: int) -> None:
        """A change every connector must have sent before its topics are read."""
        self.run([Transaction([f"replace into {DATABASE}.sync_marker values (1, {round_no})"], ["sync_marker"])])
