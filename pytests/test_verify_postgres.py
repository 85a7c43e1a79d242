"""`cdc-lake verify --source postgresql://...` (issue 68).

Unmarked (the default suite, no Spark, no server): the URL, the names of `--tables`, and the SQL
both sides run. Marked `e2e` (make test-integration): a throw-away PostgreSQL server and a lake
built, without Kafka or Debezium, from Debezium-PostgreSQL messages this module writes from the
server's own rows (a snapshot, at the server's WAL position), then: every table equal with one
scan per side (so every value's text is the same on both sides, types at their ends included);
a row changed in the lake found by its key and called `different`; a row deleted from the lake
found through a level of bisection; changes made in PostgreSQL after the lake's position called
`in_flight`, from the WAL (pg_walinspect), and `different` once the WAL cannot be read.
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from decimal import Context, Decimal, localcontext
from pathlib import Path
from typing import Any

import pytest

from cdc_lake import cli
from cdc_lake.testing.harness import Lake, kcat_lines
from cdc_lake.testing.postgresql import PASSWORD, USER, LocalPostgres
from cdc_lake.verify import compare
from cdc_lake.verify.compare import TableResult
from cdc_lake.verify.postgres import PostgresTable, PostgresUrl, changes_sql, lsn_text, pg_lsn
from cdc_lake.verify.postgres_sql import postgres_value
from cdc_lake.verify.run import parse_source_url, verify
from cdc_lake.verify.source import SourceError, SourceTable, SourceUrl
from cdc_lake.verify.sql import (
    POSTGRES,
    POSTGRES_FLOAT4,
    POSTGRES_FLOAT8,
    POSTGRES_LAKE,
    SPARK_MD5,
    Column,
    double_layers,
    layered,
)

# ------------------------------------------------------------------------------ no server, no Spark


def test_postgres_url():
    url = PostgresUrl.parse("postgresql://cdc@db.example:5433/shop")
    assert (url.user, url.host, url.port, url.database, str(url)) == (
        "cdc", "db.example", 5433, "shop", "postgresql://cdc@db.example:5433/shop"
    )
    assert PostgresUrl.parse("postgres://u@h/d").port == 5432
    with pytest.raises(SourceError, match="PGPASSWORD"):
        PostgresUrl.parse("postgresql://cdc:secret@h:5432/shop")
    with pytest.raises(SourceError, match="not supported"):
        PostgresUrl.parse("postgresql://cdc@h:5432/shop?sslmode=disable")
    for wrong in ("postgresql://u@h:5432/", "postgresql://u@h/a/b", "mysql://u@h/d"):
        with pytest.raises(SourceError, match="expected postgresql://"):
            PostgresUrl.parse(wrong)


def test_the_scheme_picks_the_source():
    assert isinstance(parse_source_url("mysql://u@h:3306/d"), SourceUrl)
    assert isinstance(parse_source_url("mariadb://u@h/d"), SourceUrl)
    assert isinstance(parse_source_url("postgresql://u@h/d"), PostgresUrl)
    with pytest.raises(SourceError, match="mysql://.* or postgresql://"):
        parse_source_url("oracle://u@h/d")
    with pytest.raises(SourceError, match="CDC_LAKE_SOURCE_PASSWORD"):
        parse_source_url("mysql://u:p@h/d")


def test_table_names():
    url = PostgresUrl.parse("postgresql://u@h/shop")
    assert url.table_names(["orders", "sales.items", "shop.sales.items"]) == [
        "public.orders", "sales.items", "sales.items"
    ]
    with pytest.raises(SourceError, match="not in the source database shop"):
        url.table_names(["other.sales.items"])
    with pytest.raises(SourceError, match="expected schema.table"):
        url.table_names(["a.b.c.d"])
    assert SourceUrl.parse("mysql://u@h/shop").table_names(["shop.orders", "items"]) == ["orders", "items"]


def test_postgres_texts_per_type():
    def text(data_type: str) -> str:
        return postgres_value(Column('o"k', data_type))

    assert text("int4") == '("o""k"::text)'
    assert text("bpchar") == '(bpcharout("o""k")::text)'  # the padding kept: a cast to text trims it
    assert text("timestamptz").endswith(' || ("o""k" at time zone \'UTC\')::text)')
    assert text("bytea") == '(encode("o""k", \'hex\'))'
    assert text("bool") == '("o""k"::int::text)'
    # integers as numbers, other elements as their text
    assert text("_int4") == '(array_to_json("o""k")::text)'
    assert text("_numeric") == '(array_to_json("o""k"::text[])::text)'
    assert text("some_enum") == '("o""k"::text)'


def test_postgres_row_hashes():
    # PostgreSQL's concat() skips a NULL: its row text uses ||, which keeps it NULL, as Spark's concat
    assert POSTGRES.row_text(["a", "b"]) == "concat_ws(chr(31), coalesce('v' || a, 'n'), coalesce('v' || b, 'n'))"
    assert POSTGRES.key_hash("k") == "left(md5(k), 8)"
    assert SPARK_MD5.key_hash("k") == "left(md5(cast(k as binary)), 8)"
    assert POSTGRES.checksum("r") == "('x' || left(md5(r), 8))::bit(32)::bigint"
    assert SPARK_MD5.checksum("r") == "cast(conv(left(md5(cast(r as binary)), 8), 16, 10) as bigint)"
    assert POSTGRES.literal("it's") == "'it''s'" and POSTGRES.quote("a b") == '"a b"'
    assert POSTGRES_LAKE.float_layouts == {"float4": POSTGRES_FLOAT4, "float8": POSTGRES_FLOAT8}


def test_wal_positions_and_the_in_flight_query():
    assert pg_lsn(0x16_B374D848) == "'16/B374D848'::pg_lsn"
    assert lsn_text(26346472) == "lsn 26346472 (0/19203E8)"
    sql = changes_sql("f('0/10'::pg_lsn)", 16, ">=", 4096, {"public.t": PostgresTable(16391, 1663, 16384, 16398)})
    assert "where start_lsn >= '0/10'::pg_lsn and start_lsn < '0/1000'::pg_lsn" in sql
    assert "('public.t', 'rel 1663/16384/16398\\M', 'relids( [0-9]+)* 16391\\M')" in sql
    assert "('Heap2', 'MULTI_INSERT')" in sql and "xid in (select xid from committed)" in sql


# ------------------------------------------------------------------------------ against PostgreSQL

DATABASE = "shop"
SOURCE_SYSTEM = "pgv"


def decimal_bytes(text: str, scale: int) -> str:
    """A Connect Decimal: the unscaled value's big-endian two's complement, base64."""
    with localcontext(Context(prec=1000)):  # the default context rounds to 28 digits
        unscaled = int(Decimal(text).scaleb(scale))
    return base64.b64encode(unscaled.to_bytes(unscaled.bit_length() // 8 + 1, "big", signed=True)).decode()


def variable_scale(text: str) -> dict[str, Any]:
    scale = max(-Decimal(text).as_tuple().exponent, 0)  # type: ignore[operator]
    return {"scale": scale, "value": decimal_bytes(text, scale)}


def as_float(text: str) -> float:
    return float(text)


# column, its SQL type, the Connect field schema Debezium's PostgreSQL connector gives it (default
# settings), the SQL that reads the value as Debezium sends it, and a last step in Python
Encoder = Callable[[str], Any] | None
COLUMNS: dict[str, list[tuple[str, str, dict[str, Any], str, Encoder]]] = {
    "public.orders": [
        ("id", "integer primary key", {"type": "int32"}, "id", None),
        ("big", "bigint", {"type": "int64"}, "big", None),
        ("tiny", "smallint", {"type": "int16"}, "tiny", None),
        ("note", "text", {"type": "string"}, "note", None),
        ("code", "char(4)", {"type": "string"}, "code", None),
        ("label", "varchar(20)", {"type": "string"}, "label", None),
        ("amount", "numeric(30,2)", {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
                                     "parameters": {"scale": "2", "connect.decimal.precision": "30"}},
         "amount::text", lambda v: decimal_bytes(v, 2)),
        ("measure", "numeric", {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal"},
         "measure::text", variable_scale),
        ("paid", "boolean", {"type": "boolean"}, "paid", None),
        ("placed", "date", {"type": "int32", "name": "io.debezium.time.Date"}, "placed - date '1970-01-01'", None),
        ("updated", "timestamp", {"type": "int64", "name": "io.debezium.time.MicroTimestamp"},
         "(extract(epoch from updated) * 1000000)::bigint", None),
        ("stamped", "timestamp(3)", {"type": "int64", "name": "io.debezium.time.Timestamp"},
         "(extract(epoch from stamped) * 1000)::bigint", None),
        ("at_utc", "timestamptz", {"type": "string", "name": "io.debezium.time.ZonedTimestamp"},
         "to_char(at_utc at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')", None),
        ("starts", "time", {"type": "int64", "name": "io.debezium.time.MicroTime"},
         "(extract(epoch from starts) * 1000000)::bigint", None),
        ("payload", "bytea", {"type": "bytes"}, "translate(encode(payload, 'base64'), E'\\n', '')", None),
        ("ref", "uuid", {"type": "string", "name": "io.debezium.data.Uuid"}, "ref::text", None),
        ("doc", "jsonb", {"type": "string", "name": "io.debezium.data.Json"}, "doc::text", None),
        ("ratio", "double precision", {"type": "double"}, "ratio::text", as_float),
        ("small", "real", {"type": "float"}, "small::text", as_float),
    ],
    "sales.items": [
        ("order_id", "integer", {"type": "int32"}, "order_id", None),
        ("line", "smallint", {"type": "int16"}, "line", None),
        ("sku", "varchar", {"type": "string"}, "sku", None),
        ("qty", "integer", {"type": "int32"}, "qty", None),
    ],
    "public.events": [
        ("kind", "text", {"type": "string"}, "kind", None),
        ("n", "integer", {"type": "int32"}, "n", None),
    ],
    "public.bulk": [
        ("id", "integer primary key", {"type": "int32"}, "id", None),
        ("v", "text", {"type": "string"}, "v", None),
    ],
}
KEYS = {"public.orders": ["id"], "sales.items": ["order_id", "line"], "public.events": [], "public.bulk": ["id"]}
ODD_TEXT = "O'Brien \"x\" \\ ✓ \t\n\u001f end"
SETUP = [
    "create extension pg_walinspect",
    "create schema sales",
    *(
        f"create table {table} ({', '.join(f'{c} {t}' for c, t, *_ in columns)}"
        + (", primary key (order_id, line)" if table == "sales.items" else "")
        # a generated column: logical decoding does not send it, verify leaves it out
        + (", sku_upper text generated always as (upper(sku)) stored" if table == "sales.items" else "")
        + ")"
        for table, columns in COLUMNS.items()
    ),
    "insert into orders values "
    "(1, 42, 7, 'first', 'ab', 'label', 12.5, 1.50, true, '2024-02-29', '2024-02-29 13:05:00.12', "
    " '2024-02-29 13:05:00.5', '2024-02-29 13:05:00.5+01', '13:05:07.25', '\\x00ff10', "
    " 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"b\": [1, 2.50, \"x\"],  \"a\": null}', 3.14, 3.14), "
    f"(2, 9223372036854775807, -32768, {POSTGRES.literal(ODD_TEXT)}, 'a', '', -0.01, "
    " 12345678901234567890.123456789, false, '1900-03-01', '1999-12-31 23:59:59.999999', "
    " '1970-01-01 00:00:00', '1999-12-31 23:59:59.999999+05:30', '23:59:59.999999', '\\x', "
    " '00000000-0000-0000-0000-000000000000', '[]', 1e20, 1.234567e+06), "
    "(3, -9223372036854775808" + ", null" * 17 + "), "
    "(4, 0, 0, '', 'abcd', 'x', 0, 0, false, '9999-12-31', '2000-01-01 00:00:00.000001', "
    " '2038-01-19 03:14:07.999', '1969-12-31 23:59:59+00', '00:00:00', '\\x00', "
    " 'ffffffff-ffff-ffff-ffff-ffffffffffff', '{\"k\": {\"n\": -1.5e-7}}', 1.5e-07, 1e-05), "
    "(5, 1, 1, 'e', 'e', 'e', 99999999999999999999999999.99, -1e-20, true, '2000-02-29', "
    " '2000-02-29 00:00:00', '2000-02-29 00:00:00.001', '2000-02-29 00:00:00.000001+00', '12:00:00.5', "
    " '\\xdeadbeef', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', '\"text\"', 123456789012345, 16777216), "
    "(6, 2, 2, 'f', 'f', 'f', 1, 1, true, '2001-01-01', '2001-01-01 00:00:00', '2001-01-01 00:00:00', "
    " '2001-01-01 00:00:00+00', '01:00:00', '\\x01', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a13', 'null', "
    " -2.5e300, 0.0001)",
    "insert into sales.items (order_id, line, sku, qty) values (1, 1, 'sku-1', 2), (1, 2, 'sku-2', 1), "
    "(2, 1, 'sku-1', null)",
    "insert into events values ('click', 1), ('click', 1), ('view', null)",
    "insert into bulk select i, 'row ' || i from generate_series(1, 600) as i",
]


def connect_schema(columns: list[tuple[str, str, dict[str, Any], str, Encoder]]) -> dict[str, Any]:
    row = {"type": "struct", "optional": True,
           "fields": [{**schema, "optional": True, "field": name} for name, _, schema, _, _ in columns]}
    return {"type": "struct", "name": "Envelope", "fields": [
        {**row, "field": "before"}, {**row, "field": "after"},
        {"type": "struct", "optional": False, "name": "io.debezium.connector.postgresql.Source", "field": "source",
         "fields": [{"type": "string", "field": f} for f in ("connector", "name", "db", "schema", "table")]},
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"},
    ]}


def snapshot_messages(conn: Any, table: str, lsn: int, now_ms: int) -> tuple[list[str | None], list[str]]:
    """Kafka keys and values of a Debezium snapshot of `table`, every record at `lsn`."""
    columns = COLUMNS[table]
    cursor = conn.cursor()
    cursor.execute(f"select {', '.join(sql for *_, sql, _ in columns)} from {table}")
    keys, values = [], []
    schema, name = table.split(".")
    for row in cursor.fetchall():
        after = {
            column: value if value is None or encode is None else encode(str(value))
            for (column, _, _, _, encode), value in zip(columns, row, strict=True)
        }
        keys.append(json.dumps({k: after[k] for k in KEYS[table]}) if KEYS[table] else None)
        source = {"version": "2.7.3.Final", "connector": "postgresql", "name": SOURCE_SYSTEM, "ts_ms": now_ms,
                  "snapshot": "true", "db": DATABASE, "schema": schema, "table": name, "txId": 700, "lsn": lsn,
                  "xmin": None}
        payload = {"before": None, "after": after, "source": source, "op": "r", "ts_ms": now_ms}
        values.append(json.dumps({"schema": connect_schema(columns), "payload": payload}, ensure_ascii=False))
    return keys, values


@pytest.fixture(scope="module")
def server() -> Iterator[LocalPostgres]:
    folder = Path(tempfile.mkdtemp(prefix="cdc_lake_verify_pg_"))
    try:
        with LocalPostgres(folder / "postgres") as server:
            server.create_database(DATABASE)
            server.execute(DATABASE, *SETUP)
            yield server
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def landed(server, lake) -> Lake:
    """The lake after a Debezium snapshot of every table at the server's WAL position."""
    with closing(server.connect(DATABASE)) as conn:
        cursor = conn.cursor()
        cursor.execute("select pg_current_wal_lsn() - '0/0'::pg_lsn")
        lsn = int(cursor.fetchone()[0])
        now_ms = int(time.time() * 1000)
        for table in COLUMNS:
            keys, values = snapshot_messages(conn, table, lsn, now_ms)
            lake.land("debezium", kcat_lines(values, f"{SOURCE_SYSTEM}.{table}", keys=keys))
    lake.build("--select", "+cdc_current", data_tests=False, typed_tables=False)
    return lake


def source_url(server: LocalPostgres) -> PostgresUrl:
    return PostgresUrl(USER, server.host, server.port, DATABASE)


def run_verify(server: LocalPostgres, lake: Lake, tables: list[str] | None = None) -> dict[str, TableResult]:
    verification = verify(lake.spark, source_url(server), lake.schema, lake.raw_schema, tables=tables,
                          password=PASSWORD)
    print(verification.as_text())
    return {r.label: r for r in verification.results}


@pytest.mark.e2e
def test_the_lakes_float_text_is_laid_out_as_postgresql_prints_it(server, spark):
    doubles = ["1e20", "1.5e-7", "0.0001", "0.00001", "123456789012345", "1e15", "-2.5e300", "0.1", "1",
               "0", "3.14", "9.99e14", "1.7976931348623157e308", "2.2250738585072014e-308", "NaN", "Infinity",
               "-Infinity", "-1e-20", "12345.678", "4.9e-324"]
    floats = ["1e20", "1.5e-7", "0.0001", "0.00001", "123456", "1234567", "16777216", "0.1", "1", "0", "3.14",
              "NaN", "Infinity", "-Infinity", "-1e-20", "12345.678", "3.4028235e38", "1.1754944e-38"]
    for data_type, layout, cast, numbers in (("float8", POSTGRES_FLOAT8, "double", doubles),
                                             ("float4", POSTGRES_FLOAT4, "float", floats)):
        with closing(server.connect(DATABASE)) as conn:
            cursor = conn.cursor()
            cursor.execute("select x, x::" + data_type + "::text from unnest(array["
                           + ", ".join(f"'{n}'" for n in numbers) + "]) as x")
            postgres = dict(cursor.fetchall())
        values = ", ".join(f"('{n}')" for n in numbers)
        query = layered(f"select n, cast(cast(n as {cast}) as string) as t from values {values} as v(n)",
                        double_layers("t", "m", layout))
        lake = {r["n"]: r["m"] for r in spark.sql(f"select n, m from ({query})").collect()}
        differ = {n: (postgres[n], lake[n]) for n in numbers if postgres[n] != lake[n]}
        # Java 17's Double.toString and Float.toString are not always the shortest (the smallest
        # subnormal double, the smallest normal float): the rows' numbers decide those
        assert differ == ({"4.9e-324": ("5e-324", "4.9e-324")} if data_type == "float8" else
                          {"1.1754944e-38": ("1.1754944e-38", "1.17549435e-38")}), data_type


@pytest.mark.e2e
def test_every_table_equal_with_one_scan(server, landed):
    results = run_verify(server, landed)
    assert set(results) == set(COLUMNS)
    assert {t: [(d.key, d.columns) for d in r.differences] for t, r in results.items() if r.status != "equal"} == {}
    assert {t: (r.source_rows, r.lake_rows) for t, r in results.items()} == {
        "public.orders": (6, 6), "sales.items": (3, 3), "public.events": (3, 3), "public.bulk": (600, 600)
    }
    # every value's text the same on both sides: the checksums agreed, nothing was pulled
    assert {r.scans for r in results.values()} == {1}
    assert {(r.database, r.table) for r in results.values()} >= {("shop.sales", "items"), ("shop.public", "orders")}
    recorded = landed.rows(
        "select database_name, table_name, status from {raw_schema}.verification_results "
        f"where source_system = '{SOURCE_SYSTEM}'"
    )
    assert sorted((r["database_name"], r["table_name"], r["status"]) for r in recorded) == [
        ("shop.public", "bulk", "equal"), ("shop.public", "events", "equal"), ("shop.public", "orders", "equal"),
        ("shop.sales", "items", "equal"),
    ]


@pytest.mark.e2e
def test_a_row_changed_in_the_lake_is_found_by_its_key(server, landed, monkeypatch, capsys):
    landed.spark.sql(
        f"update {landed.schema}.cdc_history set image = map_concat(map_filter(image, (k, v) -> k != 'note'), "
        "map('note', 'changed in the lake')) where table_name = 'orders' and primary_key['id'] = '4'"
    )
    landed._activate()
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    code = cli.main(["verify", "--source", str(source_url(server)), "--tables", "orders", "--output", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["equal"] is False
    (orders,) = report["tables"]
    # the WAL holds no change of it after the lake's position: a real difference, not one in flight
    assert (orders["database"], orders["table"], orders["status"], orders["differing_keys"],
            orders["changes_in_flight"]) == ("shop.public", "orders", "different", 1, 0)
    assert orders["samples"] == [{"key": "id=4", "kind": "values_differ",
                                  "columns": {"note": {"source": "", "lake": "changed in the lake"}}}]


@pytest.mark.e2e
def test_a_row_deleted_from_the_lake_is_found_through_bisection(server, landed, monkeypatch):
    monkeypatch.setattr(compare, "PULL_ROWS", 32)
    landed.spark.sql(
        f"delete from {landed.schema}.cdc_history where table_name = 'bulk' and primary_key['id'] = '17'"
    )
    result = run_verify(server, landed, ["public.bulk"])["public.bulk"]
    assert (result.status, result.differing_keys, result.lake_rows, result.in_flight) == ("different", 1, 599, 0)
    assert [(d.key, d.kind) for d in result.differences] == [("id=17", "missing_in_lake")]
    # the whole table, then 256 buckets, then the rows of the one that differs
    assert result.scans == 3


@pytest.mark.e2e
def test_changes_not_in_the_lake_yet_are_in_flight(server, landed, capsys):
    server.execute(
        DATABASE,
        "update bulk set v = 'moved' where id = 18",
        "insert into events values ('click', 1)",
        # a rolled-back change is no change
        "begin; update sales.items set qty = 9; rollback",
    )
    results = run_verify(server, landed)
    statuses = {t: (r.status, r.in_flight) for t, r in results.items()}
    assert statuses == {
        "public.bulk": ("in_flight", 1), "public.events": ("in_flight", 1),
        "public.orders": ("different", 0), "sales.items": ("equal", 0),
    }
    assert [d.key for d in results["public.bulk"].differences] == ["id=17", "id=18"]
    assert [(d.key, d.kind) for d in results["public.events"].differences] == [
        ("row(kind=click, n=1)", "missing_in_lake")
    ]
    out = capsys.readouterr().out
    assert "1 row changes for it in the WAL after the lake's last change" in out
    assert "public.bulk" in out and "source snapshot at lsn " in out


@pytest.mark.e2e
def test_without_pg_walinspect_a_difference_is_different(server, landed):
    server.execute(DATABASE, "drop extension pg_walinspect")
    try:
        result = run_verify(server, landed, ["public.bulk"])["public.bulk"]
    finally:
        server.execute(DATABASE, "create extension pg_walinspect")
    assert (result.status, result.in_flight, result.differing_keys) == ("different", None, 2)


def test_source_table_labels():
    table = SourceTable("items", [Column("id", "int4")], [], database="shop.sales", title="sales.items")
    assert (table.label, table.keyless) == ("sales.items", True)
    assert SourceTable("t", [], []).label == "t"
