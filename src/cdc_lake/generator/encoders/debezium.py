"""dtle's Debezium-compatible Kafka output (specs/dtle_debezium.md) with Debezium's MySQL type mapping.

Per row change one record on topic `cdclake.<db>.<table>`: key = {schema, payload: primary key},
value = {schema, payload: {before, after, source, op, ts_ms}} in Kafka Connect's JsonConverter layout.
A delete is followed by a tombstone on the same key: mostly dtle's value text
`{"schema":null,"payload":null}`, sometimes a Kafka null value (Debezium proper). DDL goes to the
schema-change topic `cdclake.schema-changes` (key null) as dtle writes it, except a TRUNCATE: one
op `t` record on the table's topic, as Debezium sends it with `skipped.operations=none`.

The tables of NUMERIC_DECIMAL_TABLES come from a second connector whose JsonConverter has
`decimal.format=NUMERIC`: their Connect Decimals (decimal columns, and BIGINT UNSIGNED in
Debezium's precise mode) are JSON numbers with all their digits instead of base64 text. Short
integers such as `1234` are valid base64 too: a decoder must go by the JSON type.
The tables of EMBEDDED_ENGINE_TABLES come from an embedded engine (Flink CDC) that writes
`file: ""`, `pos: 0`, `row: 0` on every record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from random import Random
from typing import Any

from cdc_lake.generator.encoders.base import (
    PARTITIONS,
    SERVER_ID,
    SERVER_NAME,
    Encoder,
    b64,
    encode,
    malform_with,
    twos_complement,
)
from cdc_lake.generator.kafka import CHANGE, DDL, TOMBSTONE, Framed
from cdc_lake.generator.model import DdlEvent, Image, TableVersion, Transaction
from cdc_lake.generator.mysql_types import (
    BIT,
    BLOB,
    DATE,
    DATETIME,
    DECIMAL,
    ENUM,
    GEOMETRY,
    INT,
    JSON,
    SET,
    TEXT,
    TIME,
    TIMESTAMP,
    VARCHAR,
    ColType,
    iso_instant,
    set_labels,
)
from cdc_lake.generator.snapshots import Snapshot

FMT = "debezium"
DTLE_VERSION = "0.0.1"
SCHEMA_TOPIC = f"{SERVER_NAME}.schema-changes"
DTLE_TOMBSTONE = '{"schema":null,"payload":null}'
NULL_TOMBSTONE_RATE = 0.3

_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

SOURCE_FIELDS = [
    {"type": "string", "optional": True, "field": "version"},
    {"type": "string", "optional": False, "field": "name"},
    {"type": "int64", "optional": False, "field": "server_id"},
    {"type": "int64", "optional": False, "field": "ts_sec"},
    {"type": "string", "optional": True, "field": "gtid"},
    {"type": "string", "optional": False, "field": "file"},
    {"type": "int64", "optional": False, "field": "pos"},
    {"type": "int32", "optional": False, "field": "row"},
    {"type": "boolean", "optional": True, "field": "snapshot"},
    {"type": "int64", "optional": True, "field": "thread"},
    {"type": "string", "optional": True, "field": "db"},
    {"type": "string", "optional": True, "field": "table"},
    {"type": "int64", "optional": True, "field": "ts_ms"},
]


# Debezium 2's `source.snapshot` (the records of --snapshot-after-gap): a string enum, not dtle's boolean
ENUM_SNAPSHOT_FIELD = {
    "type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
    "parameters": {"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},
    "field": "snapshot",
}


def _logical(type_: str, name: str, parameters: dict[str, str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": type_, "name": name, "version": 1}
    if parameters:
        schema["parameters"] = parameters
    return schema


def _decimal_schema(scale: int, precision: int) -> dict[str, Any]:
    return _logical(
        "bytes",
        "org.apache.kafka.connect.data.Decimal",
        {"scale": str(scale), "connect.decimal.precision": str(precision)},
    )


def _json_compact(text: str) -> str:
    """Debezium reads JSON columns from the binlog's binary JSON and prints them without spaces."""
    return _compact(json.loads(text))


NUMERIC_DECIMAL_TABLES = {("shop", "orders"), ("crm", "contacts")}
# Tables read by an embedded engine (Flink CDC and the like): `file: ""`, `pos: 0`, `row: 0` on
# every record, so the source position tells no two changes apart.
EMBEDDED_ENGINE_TABLES = {("crm", "contacts")}
# A JSON number is written as this marker string, then unquoted (the JSON encoder has no raw numbers).
_NUMBER_MARK = "\u0001#"
_MARKED_NUMBER = re.compile(r'"\\u0001#(-?[0-9.]+)"')


def _decimal_text(unscaled: int, scale: int) -> str:
    """The exact decimal text of an unscaled integer: (-1250, 2) -> "-12.50"."""
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    text = digits if scale == 0 else digits[:-scale] + "." + digits[-scale:]
    return ("-" if unscaled < 0 else "") + text


def unmark_numbers(text: str) -> str:
    """The JSON text with the marked Decimals as JSON numbers (decimal.format=NUMERIC)."""
    return _MARKED_NUMBER.sub(r"\1", text) if "\\u0001#" in text else text


_GEOMETRY_SCHEMA = {
    "type": "struct",
    "name": "io.debezium.data.geometry.Geometry",
    "version": 1,
    "fields": [
        {"type": "bytes", "optional": False, "field": "wkb"},
        {"type": "int32", "optional": True, "field": "srid"},
    ],
}


def _geometry_value(internal: bytes) -> dict[str, Any]:
    srid = int.from_bytes(internal[:4], "little")
    return {"wkb": b64(internal[4:]), "srid": srid or None}


def converter(t: ColType, numeric_decimals: bool = False) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    """(Connect schema without optional/field, native value -> JSON value) per Debezium's MySQL mapping;
    `numeric_decimals`: Connect Decimals as (marked) JSON numbers, see `unmark_numbers`."""
    k = t.kind
    if k == INT:
        if t.unsigned and t.bits == 64:  # bigint.unsigned.handling.mode=precise
            if numeric_decimals:
                return _decimal_schema(0, 20), lambda v: _NUMBER_MARK + str(v)
            return _decimal_schema(0, 20), lambda v: b64(twos_complement(v))
        if t.bits <= 16:
            type_ = "int16" if t.bits == 8 or not t.unsigned else "int32"
        elif t.bits == 32:
            type_ = "int64" if t.unsigned else "int32"
        else:
            type_ = "int64"
        return {"type": type_}, lambda v: v
    if k == DECIMAL:
        if numeric_decimals:
            return _decimal_schema(t.scale, t.precision), lambda v: _NUMBER_MARK + _decimal_text(v, t.scale)
        return _decimal_schema(t.scale, t.precision), lambda v: b64(twos_complement(v))
    if k in (VARCHAR, TEXT):
        return {"type": "string"}, lambda v: v
    if k == JSON:
        return _logical("string", "io.debezium.data.Json"), _json_compact
    if k == DATE:
        return _logical("int32", "io.debezium.time.Date"), lambda v: v
    if k == DATETIME:
        if t.fsp <= 3:
            return _logical("int64", "io.debezium.time.Timestamp"), lambda v: v // 1000
        return _logical("int64", "io.debezium.time.MicroTimestamp"), lambda v: v
    if k == TIMESTAMP:
        return _logical("string", "io.debezium.time.ZonedTimestamp"), iso_instant
    if k == TIME:
        return _logical("int64", "io.debezium.time.MicroTime"), lambda v: v
    if k == ENUM:
        labels = t.labels
        return (
            _logical("string", "io.debezium.data.Enum", {"allowed": ",".join(labels)}),
            lambda v: labels[v - 1],
        )
    if k == SET:
        return (
            _logical("string", "io.debezium.data.EnumSet", {"allowed": ",".join(t.labels)}),
            lambda v: set_labels(t, v),
        )
    if k == BIT:
        if t.bits == 1:
            return {"type": "boolean"}, bool
        n_bytes = (t.bits + 7) // 8
        return (
            _logical("bytes", "io.debezium.data.Bits", {"length": str(t.bits)}),
            lambda v: b64(v.to_bytes(n_bytes, "little")),
        )
    if k == BLOB:
        return {"type": "bytes"}, b64
    if k == GEOMETRY:
        # every spatial type, POINT included, is io.debezium.data.geometry.Geometry in the MySQL
        # connector: the WKB without MySQL's SRID prefix, and the SRID (null when 0)
        return _GEOMETRY_SCHEMA, _geometry_value
    raise ValueError(f"no Debezium mapping for {t.mysql_type}")


def _field_schema(base: dict[str, Any], optional: bool, name: str) -> dict[str, Any]:
    """JsonConverter key order: type, [fields,] optional, name, version, parameters, field."""
    out: dict[str, Any] = {"type": base["type"]}
    if "fields" in base:
        out["fields"] = base["fields"]
    out["optional"] = optional
    for k in ("name", "version", "parameters"):
        if k in base:
            out[k] = base[k]
    out["field"] = name
    return out


class _TableMeta:
    def __init__(self, tv: TableVersion, enum_snapshot: bool = False, server: str = SERVER_NAME) -> None:
        prefix = f"{server}.{tv.database}.{tv.table}"
        self.topic = prefix
        self.db_json = encode(tv.database)
        self.table_json = encode(tv.table)
        self.numeric = (tv.database, tv.table) in NUMERIC_DECIMAL_TABLES
        self.embedded = (tv.database, tv.table) in EMBEDDED_ENGINE_TABLES
        convs = [converter(c.type, self.numeric) for c in tv.columns]
        self.names = tv.names
        self.fns = [fn for _, fn in convs]
        fields = [_field_schema(base, c.nullable, c.name) for c, (base, _) in zip(tv.columns, convs, strict=True)]
        key_fields = [fields[i] for i in tv.pk_idx]
        self.pk = [(tv.names[i], convs[i][1], i) for i in tv.pk_idx]
        value_struct = {"type": "struct", "fields": fields, "optional": True, "name": f"{prefix}.Value"}
        schema = {
            "type": "struct",
            "fields": [
                {**value_struct, "field": "before"},
                {**value_struct, "field": "after"},
                {
                    "type": "struct",
                    "fields": [
                        ENUM_SNAPSHOT_FIELD if enum_snapshot and f["field"] == "snapshot" else f
                        for f in SOURCE_FIELDS
                    ],
                    "optional": False,
                    "name": "io.debezium.connector.mysql.Source",
                    "field": "source",
                },
                {"type": "string", "optional": False, "field": "op"},
                {"type": "int64", "optional": True, "field": "ts_ms"},
            ],
            "optional": False,
            "name": f"{prefix}.Envelope",
            "version": 1,
        }
        key_schema = {"type": "struct", "fields": key_fields, "optional": False, "name": f"{prefix}.Key"}
        self.value = Framed('{"schema":' + encode(schema) + ',"payload":', "}")
        self.key = Framed('{"schema":' + encode(key_schema) + ',"payload":', "}")


class DebeziumEncoder(Encoder):
    fmt = FMT
    # `source.snapshot` as Debezium 2's string enum (`"false"`, `"last"`, ...) instead of dtle's
    # boolean: set for --snapshot-after-gap, whose snapshots carry Debezium 2's markers, from a
    # connector of its own name (its topics and source_system apart from the usual workload's)
    enum_snapshot = False
    server_name = SERVER_NAME

    def _meta(self, tv: TableVersion) -> _TableMeta:
        meta = tv.cache.get(FMT)
        if meta is None:
            meta = tv.cache[FMT] = _TableMeta(tv, self.enum_snapshot, self.server_name)
        return meta

    @staticmethod
    def _struct(meta: _TableMeta, image: Image | None) -> str:
        """The image as the JSON text of its Connect struct (cached on the image)."""
        if image is None:
            return "null"
        struct = image.cached(FMT)
        if struct is None:
            struct = image.store(
                FMT,
                unmark_numbers(
                    encode(
                        {
                            name: None if v is None else fn(v)
                            for name, fn, v in zip(meta.names, meta.fns, image.values, strict=True)
                        }
                    )
                ),
            )
        return struct

    def transaction(self, tx: Transaction) -> None:
        captured = self.capture_ms(tx.commit_s)
        emit = self.sink.emit
        # source struct: the constant parts around pos/row/db/table, built once per transaction
        common_head = (
            ',"source":{"version":"'
            + DTLE_VERSION
            + '","name":"'
            + self.server_name
            + '","server_id":'
            + str(SERVER_ID)
            + ',"ts_sec":'
            + str(tx.commit_s)
            + ',"gtid":"'
            + tx.gtid
            + '","file":"'
        )
        source_head = common_head + tx.file + '","pos":'
        embedded_position = common_head + '","pos":0,"row":'
        source_tail = (
            (',"snapshot":"false","thread":' if self.enum_snapshot else ',"snapshot":false,"thread":')
            + str(tx.thread_id)
            + ',"db":%s,"table":%s,"ts_ms":'
            + str(tx.commit_s * 1000)
            + '},"op":"%s","ts_ms":'
            + str(captured)
            + "}"
        )
        for ev in tx.events:
            tv = ev.table
            meta = self._meta(tv)
            pos = source_head + str(ev.pos) + ',"row":'
            # a key-changing update goes out as Debezium sends it: delete (+ tombstone), create
            for ch in (half for change in ev.changes for half in change.halves()):
                position = embedded_position + "0" if meta.embedded else pos + str(ch.row)
                payload = (
                    '{"before":'
                    + self._struct(meta, ch.before)
                    + ',"after":'
                    + self._struct(meta, ch.after)
                    + position
                    + source_tail % (meta.db_json, meta.table_json, ch.op)
                )
                values = ch.image.values
                # a table without primary key: records without a Kafka key
                key = (meta.key, unmark_numbers(encode({name: fn(values[i]) for name, fn, i in meta.pk}))) if (
                    meta.pk
                ) else None
                partition = ch.partition_hash % PARTITIONS
                emit(meta.topic, partition, key, (meta.value, payload), captured, CHANGE)
                self.rows += 1
                if ch.op == "d":
                    tombstone = None if self.rng.random() < NULL_TOMBSTONE_RATE else DTLE_TOMBSTONE
                    emit(meta.topic, partition, key, tombstone, captured, TOMBSTONE)

    def snapshot(self, run: Snapshot) -> None:
        """A snapshot's reads as Debezium writes them: op `r`, no before image, every row at the
        snapshot's binlog position (row 0), `source.snapshot` its marker, `source.ts_ms` the
        snapshot's time."""
        for read in run.reads:
            tv = read.table
            meta = self._meta(tv)
            source = {
                "version": DTLE_VERSION, "name": self.server_name, "server_id": SERVER_ID, "ts_sec": run.commit_s,
                "gtid": None, "file": run.file, "pos": run.pos, "row": 0, "snapshot": read.marker,
                "thread": None, "db": tv.database, "table": tv.table, "ts_ms": run.commit_s * 1000,
            }
            captured = self.capture_ms(run.commit_s)
            payload = (
                '{"before":null,"after":' + self._struct(meta, read.image)
                + ',"source":' + encode(source) + ',"op":"r","ts_ms":' + str(captured) + "}"
            )
            values = read.image.values
            key = (meta.key, unmark_numbers(encode({name: fn(values[i]) for name, fn, i in meta.pk}))) if (
                meta.pk
            ) else None
            self.sink.emit(meta.topic, read.partition_hash % PARTITIONS, key, (meta.value, payload), captured, CHANGE)
            self.rows += 1

    def ddl(self, ddl: DdlEvent) -> None:
        captured = self.capture_ms(ddl.commit_s)
        if ddl.kind == "TRUNCATE":
            self._truncate(ddl, captured)
            return
        value = {
            "source": {"server": self.server_name},
            "position": {
                "ts_sec": ddl.commit_s,
                "file": ddl.file,
                "pos": ddl.pos,
                "gtids": f"{ddl.server_uuid}:1-{ddl.gtid_no}",
                "snapshot": False,
            },
            "databaseName": ddl.table.database,
            "ddl": ddl.sql,
            "tableChanges": [],
        }
        self.sink.emit(f"{self.server_name}.schema-changes", 0, None, encode(value), captured, DDL)

    def _truncate(self, ddl: DdlEvent, captured: int) -> None:
        """A TRUNCATE as Debezium sends it with `skipped.operations=none`: one op `t` record on the
        table's topic, without key, before or after image."""
        tv = ddl.table
        meta = self._meta(tv)
        source = {
            "version": DTLE_VERSION, "name": self.server_name, "server_id": SERVER_ID, "ts_sec": ddl.commit_s,
            "gtid": ddl.gtid, "file": ddl.file, "pos": ddl.pos, "row": 0, "snapshot": False,
            "thread": ddl.thread_id, "db": tv.database, "table": tv.table, "ts_ms": ddl.commit_s * 1000,
        }
        payload = encode({"before": None, "after": None, "source": source, "op": "t", "ts_ms": captured})
        self.sink.emit(meta.topic, 0, None, (meta.value, payload), captured, DDL)

    @staticmethod
    def malform(value: str, rng: Random) -> tuple[str, str]:
        def wrong_type(obj: dict[str, Any]) -> str:
            payload = obj["payload"]
            field = "after" if payload.get("after") is not None else "before"
            payload[field] = encode(payload[field])
            return f"wrong type: payload.{field} is a string, not a struct"

        def unknown_op(obj: dict[str, Any]) -> str:
            obj["payload"]["op"] = "x"
            return "unknown op 'x'"

        return malform_with(value, rng, wrong_type, unknown_op)
