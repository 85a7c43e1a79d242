"""Lindorm data subscription, "Debezium format v2" (specs/lindorm_debezium.md, conformance/lindorm/).

Lindorm is not MySQL: the SQL tables of the workload are sent as a Lindorm wide table holding them
would send them, with no binlog position, GTID or MySQL column types. Each value is a JSON number where
Lindorm has an exact numeric type, else its canonical text (see `converter` and docs/formats.md).
Topic `lindorm.<namespace>.<table>` (namespace = the MySQL database name), Kafka key = the primary key
as a JSON object of the same values; the value always carries the full schema.

The HBase-style table `default.user_profile` has the row key column `ROW` and cells named
`<family>_<qualifier>`; every value is base64 of the raw bytes (UTF-8 text here); a deleted cell is
absent from `after`.
"""

from __future__ import annotations

from collections.abc import Callable
from random import Random
from typing import Any

from cdc_lake.generator.encoders.base import PARTITIONS, SERVER_NAME, Encoder, b64, encode, malform_with
from cdc_lake.generator.kafka import CHANGE, Framed
from cdc_lake.generator.model import HBaseChange, Image, TableVersion, Transaction
from cdc_lake.generator.mysql_types import BIT, BLOB, DATETIME, INT, TIMESTAMP, ColType
from cdc_lake.generator.tables import HBASE_QUALIFIERS

FMT = "lindorm"
VERSION = "v2.0"
INSTANCE = f"ld-{SERVER_NAME}"
_TIMESTAMP = {"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp", "version": 1}


def converter(t: ColType) -> tuple[dict[str, Any], Callable[[Any], Any] | None]:
    """(schema without optional/field, native -> JSON value) for a MySQL type in a Lindorm table.

    A converter of None means: the canonical text, as a JSON string.
    """
    k = t.kind
    canonical = None
    if k == INT:
        if t.unsigned and t.bits == 64:
            return {"type": "string"}, canonical  # Lindorm has no unsigned BIGINT
        bits = t.bits * 2 if t.unsigned else t.bits
        return {"type": f"int{bits}"}, lambda v: v
    if k in (DATETIME, TIMESTAMP) and t.fsp <= 3:
        return _TIMESTAMP, lambda v: v // 1000  # Lindorm TIMESTAMP: epoch milliseconds
    if k == BIT:
        if t.bits == 1:
            return {"type": "boolean"}, bool
        if t.bits < 64:
            return {"type": "int64"}, lambda v: v
    if k == BLOB:
        return {"type": "bytes"}, b64  # VARBINARY: base64 of the bytes
    return {"type": "string"}, canonical


def _field(base: dict[str, Any], optional: bool, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": base["type"], "optional": optional}
    for k in ("name", "version"):
        if k in base:
            out[k] = base[k]
    out["field"] = name
    return out


def _schema(fields: list[dict[str, Any]]) -> str:
    source = [
        {"type": "string", "optional": False, "field": "version"},
        {"type": "string", "optional": False, "field": "db"},
        {"type": "string", "optional": False, "field": "namespace"},
        {"type": "string", "optional": False, "field": "table"},
        {"type": "int64", "optional": False, "field": "ts_ms"},
    ]
    schema = {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": False, "field": "ts_ms"},
            {"type": "struct", "fields": fields, "optional": True, "field": "before"},
            {"type": "struct", "fields": fields, "optional": True, "field": "after"},
            {"type": "struct", "fields": source, "optional": False, "field": "source"},
        ],
        "optional": False,
    }
    return encode(schema)


class _TableMeta:
    def __init__(self, tv: TableVersion) -> None:
        self.topic = f"lindorm.{tv.database}.{tv.table}"
        self.db_json = encode(tv.database)
        self.table_json = encode(tv.table)
        convs = [converter(c.type) for c in tv.columns]
        self.names = tv.names
        self.fns = [fn for _, fn in convs]
        self.pk = [(tv.names[i], convs[i][1], i) for i in tv.pk_idx]
        fields = [_field(base, c.nullable, c.name) for c, (base, _) in zip(tv.columns, convs, strict=True)]
        self.value = Framed('{"schema":' + _schema(fields) + ',"payload":', "}")


class LindormEncoder(Encoder):
    fmt = FMT

    def __init__(self, sink: Any, seed: int) -> None:
        super().__init__(sink, seed)
        fields = [{"type": "bytes", "optional": q != "ROW", "field": q} for q in ("ROW", *HBASE_QUALIFIERS)]
        self.hbase_value = Framed('{"schema":' + _schema(fields) + ',"payload":', "}")

    def _meta(self, tv: TableVersion) -> _TableMeta:
        meta = tv.cache.get(FMT)
        if meta is None:
            meta = tv.cache[FMT] = _TableMeta(tv)
        return meta

    @staticmethod
    def _row(meta: _TableMeta, image: Image | None) -> str:
        """The image as JSON text (cached on the image)."""
        if image is None:
            return "null"
        row = image.cached(FMT)
        if row is None:
            canon = image.canon()
            row = image.store(
                FMT,
                encode(
                    {
                        name: canon[name] if fn is None or v is None else fn(v)
                        for name, fn, v in zip(meta.names, meta.fns, image.values, strict=True)
                    }
                ),
            )
        return row

    def transaction(self, tx: Transaction) -> None:
        emit = self.sink.emit
        commit_ms = str(tx.commit_s * 1000)
        for ev in tx.events:
            tv = ev.table
            meta = self._meta(tv)
            source = ',"source":{"version":"' + VERSION + '","db":"' + INSTANCE + '","namespace":' + meta.db_json
            source += ',"table":' + meta.table_json + ',"ts_ms":' + commit_ms + "}}"
            # a key-changing update as a delete of the old key and a create of the new one
            for ch in (half for change in ev.changes for half in change.halves()):
                captured = self.capture_ms(tx.commit_s)
                payload = (
                    '{"op":"'
                    + ch.op
                    + '","ts_ms":'
                    + str(captured)
                    + ',"before":'
                    + self._row(meta, ch.before)
                    + ',"after":'
                    + self._row(meta, ch.after)
                    + source
                )
                key = encode(
                    {name: ch.key_canon[name] if fn is None else fn(ch.image.values[i]) for name, fn, i in meta.pk}
                ) if meta.pk else None  # no Kafka key for a table without primary key
                emit(meta.topic, ch.partition_hash % PARTITIONS, key, (meta.value, payload), captured, CHANGE)
                self.rows += 1

    def hbase(self, ch: HBaseChange) -> None:
        captured = self.capture_ms(ch.commit_s)
        row = b64(ch.row.encode())

        def cells(image: dict[str, str] | None) -> dict[str, str] | None:
            if image is None:
                return None
            return {"ROW": row, **{q: b64(v.encode()) for q, v in image.items()}}

        payload = {
            "op": ch.op,
            "ts_ms": captured,
            "before": cells(ch.before),
            "after": cells(ch.after),
            "source": {
                "version": VERSION,
                "db": INSTANCE,
                "namespace": ch.namespace,
                "table": ch.table,
                "ts_ms": ch.commit_s * 1000,
            },
        }
        topic = f"lindorm.{ch.namespace}.{ch.table}"
        self.sink.emit(
            topic,
            ch.partition_hash % PARTITIONS,
            encode({"ROW": row}),
            (self.hbase_value, encode(payload)),
            captured,
            CHANGE,
        )
        self.rows += 1

    @staticmethod
    def malform(value: str, rng: Random) -> tuple[str, str]:
        def wrong_type(obj: dict[str, Any]) -> str:
            payload = obj["payload"]
            field = "after" if payload.get("after") is not None else "before"
            payload[field] = list(payload[field].values())
            return f"wrong type: payload.{field} is an array, not an object"

        def unknown_op(obj: dict[str, Any]) -> str:
            obj["payload"]["op"] = "z"
            return "unknown op 'z'"

        return malform_with(value, rng, wrong_type, unknown_op)
