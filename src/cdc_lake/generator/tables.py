"""The simulated schema: MySQL tables in two databases, the DDL run against them (an ALTER, TRUNCATEs,
DROP TABLE + CREATE TABLE), and one Lindorm HBase-style table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from random import Random
from typing import Any

from cdc_lake.generator import values as V
from cdc_lake.generator.model import Column, TableVersion
from cdc_lake.generator.mysql_types import (
    BLOB_TYPE,
    DATE_TYPE,
    DATETIME,
    JSON_TYPE,
    MICROS,
    TEXT_TYPE,
    TIME,
    TIMESTAMP,
    bit_type,
    decimal_type,
    enum_type,
    geometry_type,
    int_type,
    set_type,
    temporal_type,
    varchar_type,
)


def _col(name: str, t: Any, gen: Any = None, nullable: bool = True, null_rate: float = 0.2) -> Column:
    return Column(name, t, gen, nullable=nullable, null_rate=null_rate if nullable else 0.0)


def _now_seconds(rng: Random, now: int) -> int:
    return now * MICROS


def _now_millis(rng: Random, now: int) -> int:
    return now * MICROS + rng.randrange(0, MICROS, 1000)


def _now_micros(rng: Random, now: int) -> int:
    return now * MICROS + (0 if rng.random() < 0.15 else rng.randrange(0, MICROS))


def _email(rng: Random, now: int) -> str:
    user = rng.choice(V.FIRST_NAMES).lower()
    return f"{user}.{rng.randrange(10_000)}{rng.choice(('', '+tag', '_x'))}@example.com"


def _sku(rng: Random, now: int) -> str:
    return f"SKU-{rng.choice(V.PLAIN_WORDS).upper()}-{rng.randrange(1000):03d}"


# Primary keys: key number n (0, 1, 2, ... as new rows are inserted) -> key values. The ranges grow
# slowly with n, so the key space (and the live-row state) stays bounded.
U64_MAX = V.U64_MAX


def order_id_for(n: int) -> int:
    """bigint unsigned order ids: mostly small, every fifth one from the top of the range (n=0 is 2^64-1)."""
    return U64_MAX - n if n % 5 == 0 else 1000 + n


def contact_id_for(n: int) -> int:
    """Signed bigint ids: both extremes first, then positive and negative ids."""
    if n == 0:
        return V.I64_MIN
    if n == 1:
        return V.I64_MAX
    return n if n % 4 else -n


@dataclass
class TableSpec:
    """A MySQL table of the workload: its first version, key maker, and the weight of its traffic."""

    version: TableVersion
    key_for: Callable[[int], tuple[Any, ...]]
    weight: float
    # Columns an update never touches (besides the key) and columns every update may refresh.
    frozen: tuple[str, ...] = ()
    # whether updates may change the primary key (`UPDATE ... SET id = ...`); tables whose key
    # others refer to (orders, by order_items) keep theirs
    key_changes: bool = False
    # whether DDL_PLAN truncates, drops and re-creates it: MySQL sends no row change for the rows
    # those remove, so only the formats that carry DDL can carry this table
    resets: bool = False

    @property
    def keyless(self) -> bool:
        """A table without primary key: `key_for` numbers row instances, identical rows may repeat."""
        return not self.version.pk_names


def build_tables() -> list[TableSpec]:
    customers = TableVersion(
        "shop",
        "customers",
        (
            _col("id", int_type(32), nullable=False),
            _col("name", varchar_type(100), V.text_gen(100), nullable=False),
            _col("email", varchar_type(255), _email),
            _col("tier", enum_type("bronze", "silver", "gold", "platinum"), None, nullable=False),
            _col("tags", set_type("vip", "newsletter", "beta", "wholesale"), None),
            _col("balance", decimal_type(12, 2), None, nullable=False),
            _col("birth_date", DATE_TYPE, V.date_gen, null_rate=0.3),
            _col("created_at", temporal_type(DATETIME, 6), _now_micros, nullable=False),
            _col("updated_at", temporal_type(TIMESTAMP), _now_seconds, nullable=False),
            _col("notes", TEXT_TYPE, V.long_text, null_rate=0.4),
            _col("flags", bit_type(12), None, nullable=False),
            _col("is_active", bit_type(1), None, nullable=False),
            _col("lifetime_points", decimal_type(65, 0), None, null_rate=0.3),
        ),
        ("id",),
    )
    orders = TableVersion(
        "shop",
        "orders",
        (
            _col("order_id", int_type(64, unsigned=True), nullable=False),
            _col("customer_id", int_type(32), None, nullable=False),
            _col("status", enum_type("new", "paid", "shipped", "delivered", "cancelled"), None, nullable=False),
            _col("total", decimal_type(10, 2), None, nullable=False),
            _col("placed_at", temporal_type(DATETIME), _now_seconds, nullable=False),
            _col("shipped_at", temporal_type(DATETIME, 3), _now_millis, null_rate=0.4),
            _col("paid_at", temporal_type(TIMESTAMP, 3), None, null_rate=0.3),
            _col("delivery_window", temporal_type(TIME), None, null_rate=0.3),
            _col("is_gift", bit_type(1), None, nullable=False),
            _col("attrs", JSON_TYPE, V.json_gen, null_rate=0.3),
            _col("external_ref", int_type(64, unsigned=True), None, null_rate=0.3),
        ),
        ("order_id",),
    )
    order_items = TableVersion(
        "shop",
        "order_items",
        (
            _col("order_id", int_type(64, unsigned=True), nullable=False),
            _col("line_no", int_type(16), nullable=False),
            _col("sku", varchar_type(32), _sku, nullable=False),
            _col("qty", int_type(32), V.small_int_gen(-3, 500), nullable=False),
            _col("unit_price", decimal_type(9, 3), None, nullable=False),
            _col("discount", decimal_type(5, 4), None, null_rate=0.5),
            _col("gift_message", TEXT_TYPE, V.long_text, null_rate=0.6),
            _col("label_png", BLOB_TYPE, V.blob_gen, null_rate=0.4),
        ),
        ("order_id", "line_no"),
    )
    contacts = TableVersion(
        "crm",
        "contacts",
        (
            _col("contact_id", int_type(64), nullable=False),
            _col("display_name", varchar_type(200), V.text_gen(200)),
            _col("visits", int_type(32, unsigned=True), None, nullable=False),
            _col("score", int_type(8), None),
            _col("lifetime_value", decimal_type(30, 10), None),
            _col("first_contact", DATE_TYPE, V.date_gen),
            _col("last_seen", temporal_type(DATETIME, 6), V.datetime_gen(6)),
            _col("local_offset", temporal_type(TIME, 2), None),
            _col("consent", set_type("email", "sms", "phone", "post"), None, nullable=False),
            _col("permissions", bit_type(64), None),
            _col("profile", JSON_TYPE, V.json_gen),
            _col("avatar", BLOB_TYPE, V.blob_gen),
            _col("home_location", geometry_type("point"), V.point_gen),
            _col("exact_balance", decimal_type(65, 30), None),
        ),
        ("contact_id",),
    )
    # no primary key: a log table holding identical rows now and then
    audit_log = TableVersion(
        "shop",
        "audit_log",
        (
            _col("event", enum_type("login", "logout", "refund"), None, nullable=False),
            _col("amount", decimal_type(10, 2), None),
            _col("note", varchar_type(40), V.text_gen(40), null_rate=0.5),
        ),
        (),
    )
    # a table emptied now and then (TRUNCATE, DROP TABLE + CREATE TABLE), keyed and keyless
    carts = TableVersion(
        "shop",
        "carts",
        (
            _col("cart_id", int_type(32), nullable=False),
            _col("customer_id", int_type(32), None, nullable=False),
            _col("items", int_type(16, unsigned=True), None, nullable=False),
            _col("touched_at", temporal_type(DATETIME, 3), _now_millis, nullable=False),
        ),
        ("cart_id",),
    )
    cart_events = TableVersion(
        "shop",
        "cart_events",
        (
            _col("kind", enum_type("add", "remove", "checkout"), None, nullable=False),
            _col("sku", varchar_type(32), _sku, null_rate=0.3),
        ),
        (),
    )
    specs = [
        TableSpec(audit_log, lambda n: (n,), 0.08),
        TableSpec(carts, lambda n: (1 + n,), 0.06, resets=True),
        TableSpec(cart_events, lambda n: (n,), 0.04, resets=True),
        TableSpec(customers, lambda n: (1 + n,), 0.3, frozen=("created_at",), key_changes=True),
        TableSpec(orders, lambda n: (order_id_for(n),), 0.3, frozen=("placed_at",)),
        TableSpec(order_items, lambda n: (order_id_for(n // 3), n % 3 + 1), 0.25),
        TableSpec(contacts, lambda n: (contact_id_for(n),), 0.15, key_changes=True),
    ]
    for spec in specs:
        spec.version = _with_default_generators(spec.version)
    return specs


def _with_default_generators(tv: TableVersion) -> TableVersion:
    """Fill in generators derived from the column type where the table definition gave none."""
    cols = []
    for c in tv.columns:
        gen = c.gen
        if gen is None:
            t = c.type
            kind = t.kind
            if kind == "int":
                gen = V.int_range_gen(t)
            elif kind == "decimal":
                gen = V.decimal_gen(t, 8 if t.precision > 8 else None)
                if t.precision > 20:
                    gen = V.decimal_gen(t)
            elif kind == "enum":
                gen = V.enum_gen(t)
            elif kind == "set":
                gen = V.set_gen(t)
            elif kind == "bit":
                gen = V.bit_gen(t)
            elif kind == TIME:
                gen = V.time_gen(t.fsp)
            elif kind == TIMESTAMP:
                gen = V.timestamp_gen(t.fsp)
            elif kind == DATETIME:
                gen = V.datetime_gen(t.fsp)
            else:
                raise ValueError(f"no generator for {tv.qualified}.{c.name}")
        cols.append(Column(c.name, c.type, gen, c.nullable, c.null_rate, c.default))
    return TableVersion(tv.database, tv.table, tuple(cols), tv.pk_names, tv.version)


# The column that ALTER TABLE adds half-way through the run.
ALTER_TABLE = ("shop", "orders")
ALTER_COLUMN = Column("coupon_code", varchar_type(16), V.text_gen(16), nullable=True, null_rate=0.5)


def alter_sql(tv: TableVersion, column: Column) -> str:
    return f"ALTER TABLE `{tv.database}`.`{tv.table}` ADD COLUMN {column.definition}"


# The DDL of a run: (share of the run's changes after which it happens, kind, table). ERASE is a
# DROP TABLE, followed at once by the CREATE TABLE that brings the table back (empty).
DDL_PLAN = (
    (1 / 3, "TRUNCATE", ("shop", "carts")),
    (0.4, "TRUNCATE", ("shop", "cart_events")),
    (0.5, "ALTER", ALTER_TABLE),
    (2 / 3, "ERASE", ("shop", "carts")),
    (0.75, "ERASE", ("shop", "cart_events")),
)


def truncate_sql(tv: TableVersion) -> str:
    return f"TRUNCATE TABLE `{tv.table}`"  # as typed in the table's database: every format names it


def drop_sql(tv: TableVersion) -> str:
    return f"DROP TABLE `{tv.table}` /* generated by server */"  # the binlog's text of a DROP TABLE


def create_sql(tv: TableVersion) -> str:
    columns = [c.definition for c in tv.columns]
    if tv.pk_names:
        columns.append("PRIMARY KEY (" + ", ".join(f"`{n}`" for n in tv.pk_names) + ")")
    return f"CREATE TABLE `{tv.table}` (" + ", ".join(columns) + ")"


# The Lindorm HBase-style table: row key ROW, cells family_qualifier, values raw bytes (UTF-8 text here).
HBASE_NAMESPACE = "default"
HBASE_TABLE = "user_profile"
HBASE_QUALIFIERS = ("f_name", "f_city", "f_visits", "g_note")


def hbase_row_key(n: int) -> str:
    return f"user{n:05d}"


def hbase_cell(rng: Random, qualifier: str) -> str:
    if qualifier == "f_name":
        return f"{rng.choice(V.FIRST_NAMES)} {rng.choice(V.PLAIN_WORDS).title()}"
    if qualifier == "f_city":
        return rng.choice(V.CITIES)
    if qualifier == "f_visits":
        return str(rng.randrange(100_000))
    return V.tricky_string(rng, 80)
