"""What Debezium's PostgreSQL connector writes in the before image of a key-only delete, measured
(issue 76): the records of pytests/fixtures/postgres/debezium_pg_key_only.jsonl.

Under REPLICA IDENTITY DEFAULT a delete's WAL record holds the key alone; the connector fills
every other column from its Connect schema: the column's default where it has one, null for a
nullable column, and for a NOT NULL column the fallback of its type's converter, a zero in the
type's own encoding (`1970-01-01T00:00:00Z` for timestamptz, a point at 0,0, ...). The lake must
know those forms to keep the row's last real values (macro `key_only_image`).

One PostgreSQL 15 server, a KRaft broker and a Kafka Connect worker (the project's rig) start in a
temporary folder. The tables:
- `notnull_types`: every type of the end-to-end workload and more (point, ltree, citext, isbn,
  ranges, tsvector, macaddr8, oid, a domain, time(3), arrays of many element types), all NOT NULL,
  no default; one row inserted with ordinary values, then deleted;
- `notnull_defaults`: columns with defaults (constants, now(), current_date, gen_random_uuid(),
  a sequence, one nullable column with a default), inserted and deleted the same way;
- `nullable_full`: REPLICA IDENTITY FULL, nullable columns holding 0, '', false and an empty
  array: the delete's before image is whole, and where the schema says the columns are nullable
  it is not a key-only one (without a schema it looks like one).
Each table is read by four connectors (`VARIANTS`): Debezium's defaults, the same without schemas,
and two sets of other modes. Every record of their topics is written as `kcat -C -J` lines.

    .venv/bin/python -m cdc_lake.testing.pg_key_only pytests/fixtures/postgres/debezium_pg_key_only.jsonl

takes about a minute; nothing in the test suites runs it (the fixture is its result).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from cdc_lake.servers.kafka_broker import LocalKafka, wait_for_message
from cdc_lake.testing.kafka_connect import KafkaConnect, debezium_postgres
from cdc_lake.testing.pg_workload import ROW_TEXT, TYPES_COLUMNS
from cdc_lake.testing.postgresql import PASSWORD, USER, LocalPostgres

DATABASE = "keyonly"
# (column, type, the inserted value's SQL literal): the workload's types with its ordinary row, then more
NOT_NULL_COLUMNS: list[tuple[str, str, str]] = [
    (name, data_type, value) for (name, data_type), value in zip(TYPES_COLUMNS[1:], ROW_TEXT[1:], strict=True)
] + [
    ("c_point", "point", "'(1.5,-2.25)'"),
    ("c_ltree", "ltree", "'a.b.c'"),
    ("c_citext", "citext", "'MiXeD'"),
    ("c_isbn", "isbn", "'978-0-306-40615-7'"),
    ("c_int4range", "int4range", "'[1,5)'"),
    ("c_tstzrange", "tstzrange", "'[2024-01-01 00:00+00,2024-02-01 00:00+00)'"),
    ("c_daterange", "daterange", "'[2024-01-01,2024-02-01)'"),
    ("c_numrange", "numrange", "'[1.5,2.5]'"),
    ("c_tsvector", "tsvector", "'a fat cat'"),
    ("c_macaddr8", "macaddr8", "'08:00:2b:01:02:03:04:05'"),
    ("c_oid", "oid", "42"),
    ("c_time3", "time(3)", "'13:05:00.12'"),
    ("c_timestamp3", "timestamp(3)", "'2024-02-29 13:05:00.12'"),
    ("c_timestamptz3", "timestamptz(3)", "'2024-02-29 13:05:00.12+00'"),
    ("c_numeric_array", "numeric(5,2)[]", "'{1.10}'"),
    ("c_uuid_array", "uuid[]", "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'"),
    ("c_jsonb_array", "jsonb[]", "array['{\"a\":1}'::jsonb]"),
    ("c_timestamptz_array", "timestamptz[]", "'{\"2020-04-01 11:51:02+00\"}'"),
    ("c_bytea_array", "bytea[]", "array['\\x0102'::bytea]"),
    ("c_enum_array", "mood[]", "'{sad,happy}'"),
    ("c_domain", "posint", "5"),
    ("c_name", "name", "'nm'"),
    ("c_char1", '"char"', "'q'"),
    ("c_bpchar1", "char", "'z'"),
    ("c_float_array", "float8[]", "'{1.5}'"),
    ("c_date_array", "date[]", "'{2024-02-29}'"),
    ("c_time_array", "time[]", "'{13:05:00}'"),
    ("c_citext_array", "citext[]", "'{Ab}'"),
    ("c_ltree_array", "ltree[]", "'{a.b}'"),
]
# (column, definition, the inserted value's SQL)
DEFAULT_COLUMNS: list[tuple[str, str, str]] = [
    ("d_text", "text not null default 'dflt'", "'real text'"),
    ("d_int", "integer not null default 7", "8"),
    ("d_ts", "timestamptz not null default now()", "'2024-02-29 13:05:00.12+00'"),
    ("d_ts_const", "timestamptz not null default '2020-01-01 00:00:00+00'", "'2024-02-29 13:05:00.12+00'"),
    ("d_date", "date not null default current_date", "'2024-02-29'"),
    ("d_uuid", "uuid not null default gen_random_uuid()", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"),
    ("d_bool", "boolean not null default true", "false"),
    ("d_jsonb", "jsonb not null default '{\"a\": 1}'", "'{\"b\": 2}'"),
    ("d_num", "numeric(10,2) not null default 1.5", "2.25"),
    ("d_num_free", "numeric not null default 1.5", "2.25"),
    ("d_enum", "mood not null default 'ok'", "'sad'"),
    ("d_arr", "integer[] not null default '{1,2}'", "'{3}'"),
    ("d_interval", "interval not null default '1 day'", "'2 days'"),
    ("d_seq", "bigserial not null", "default"),
    ("d_nullable", "text default 'x'", "'y'"),
]
# nullable columns holding values that look like fallbacks, REPLICA IDENTITY FULL
FULL_COLUMNS: list[tuple[str, str, str]] = [
    ("f_int", "integer", "0"), ("f_text", "text", "''"), ("f_bool", "boolean", "false"),
    ("f_int_array", "integer[]", "'{}'"),
]
TABLES = {
    "notnull_types": NOT_NULL_COLUMNS,
    "notnull_defaults": DEFAULT_COLUMNS,
    "nullable_full": FULL_COLUMNS,
}
# connector name (topic prefix) -> (schemas.enable, settings)
VARIANTS: dict[str, tuple[bool, dict[str, str]]] = {
    "ko_default": (True, {}),
    "ko_noschema": (False, {}),
    "ko_modes": (True, {"decimal.handling.mode": "string", "time.precision.mode": "connect",
                        "interval.handling.mode": "string", "hstore.handling.mode": "map",
                        "binary.handling.mode": "base64"}),
    "ko_modes2": (True, {"decimal.handling.mode": "double", "time.precision.mode": "isostring",
                         "binary.handling.mode": "hex"}),
}


def setup_statements() -> list[str]:
    statements = [
        "create extension hstore", "create extension ltree", "create extension citext", "create extension isn",
        "create type mood as enum ('sad', 'ok', 'happy')",
        "create domain posint as integer check (value > 0)",
        "create table marker (id integer primary key)",
    ]
    for table, columns in TABLES.items():
        nullness = " not null" if table == "notnull_types" else ""
        statements.append(f"create table {table} (id integer primary key, "
                          + ", ".join(f"{name} {definition}{nullness}" for name, definition, _ in columns) + ")")
    statements.append("alter table nullable_full replica identity full")
    return statements


def change_statements() -> list[str]:
    """One row per table inserted, then deleted (two transactions each), then the end marker."""
    statements = []
    for table, columns in TABLES.items():
        statements.append(f"insert into {table} values (1, " + ", ".join(value for _, _, value in columns) + ")")
    statements += [f"delete from {table} where id = 1" for table in TABLES]
    return [*statements, "insert into marker values (-1)"]


def _payload(value: dict) -> dict:
    return value.get("payload", value)


def capture(out: Path) -> int:
    """Run the tables' changes through the connectors and write their records to `out`; returns
    how many were written."""
    os.environ["TZ"] = "UTC"
    time.tzset()
    folder = Path(tempfile.mkdtemp(prefix="cdc_lake_pg_key_only_"))
    broker = LocalKafka(folder / "kafka")
    server = LocalPostgres(folder / "postgres")
    worker: KafkaConnect | None = None
    try:
        broker.start()
        server.start()
        server.create_database(DATABASE)
        server.execute(DATABASE, *setup_statements())
        connectors = [
            debezium_postgres(name, topic_prefix=name, port=server.port, user=USER, password=PASSWORD,
                              database=DATABASE, schemas=["public"], schemas_enable=schemas, settings=settings)
            for name, (schemas, settings) in VARIANTS.items()
        ]
        worker = KafkaConnect(folder / "connect", broker.bootstrap, connectors).start()
        worker.wait_running()
        # a connector streams once its (empty) snapshot is done: a marker insert it streams says so
        for n, name in enumerate(VARIANTS):
            for attempt in range(60):
                server.execute(DATABASE, f"insert into marker values ({100 * n + attempt + 1})")
                if wait_for_message(broker.bootstrap, f"{name}.public.marker", lambda v: _payload(v).get("op") == "c",
                                    timeout=5, while_alive=worker.check_alive):
                    break
            else:
                raise AssertionError(f"{name} does not stream: {worker.log_tail()}")
        for statement in change_statements():
            server.execute(DATABASE, statement)
        for name in VARIANTS:
            if not wait_for_message(broker.bootstrap, f"{name}.public.marker",
                                    lambda v: (_payload(v).get("after") or {}).get("id") == -1,
                                    timeout=120, while_alive=worker.check_alive):
                raise AssertionError(f"{name}: the changes were not captured: {worker.log_tail()}")
        time.sleep(2.0)
        return _dump(broker.bootstrap, out)
    finally:
        if worker is not None:
            worker.stop()
        server.stop()
        broker.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _dump(bootstrap: str, out: Path) -> int:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "cdc-lake-pg-key-only",
                         "enable.auto.commit": False})
    written = 0
    with open(out, "w", encoding="utf-8") as handle:
        for name in VARIANTS:
            for table in TABLES:
                topic = f"{name}.public.{table}"
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
                consumer.assign([TopicPartition(topic, 0, low)])
                for _ in range(high - low):
                    message = consumer.poll(10)
                    if message is None:
                        raise AssertionError(f"{topic}: a record did not arrive")
                    handle.write(json.dumps({
                        "topic": topic, "partition": 0, "offset": message.offset(), "tstype": "create",
                        "ts": message.timestamp()[1], "broker": 0,
                        "key": None if message.key() is None else message.key().decode(),
                        "payload": None if message.value() is None else message.value().decode(),
                    }, ensure_ascii=False) + "\n")
                    written += 1
    consumer.close()
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lake.testing.pg_key_only",
        description="Capture what Debezium's PostgreSQL connector writes for key-only deletes of NOT NULL "
                    "columns (real PostgreSQL, Kafka and Kafka Connect in a temporary folder).")
    parser.add_argument("out", type=Path, help="the kcat -C -J lines file to write")
    args = parser.parse_args(argv)
    print(f"{capture(args.out)} records written to {args.out}")


if __name__ == "__main__":
    main()
