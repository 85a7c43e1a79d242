"""KafkaRiverCanal messages (specs/kafka_river_canal.md, conformance/kafkarivercanal/).

One message per row change on topic `krc.<db>`, key null, serialised by Gson: fields whose value is
null are left out. So a NULL column has `"null":true` and no `v`; an updated column whose old value was
NULL has `"updated":true` and no `origin_val`. `updated`/`origin_val` appear only in update messages.
No DDL is carried (the tool only parses insert, update and delete).
"""

from __future__ import annotations

from random import Random
from typing import Any

from cdc_lake.generator.encoders.base import PARTITIONS, Encoder, encode, malform_with
from cdc_lake.generator.jsontext import quote
from cdc_lake.generator.kafka import CHANGE
from cdc_lake.generator.model import TableVersion, Transaction

FMT = "kafka_river_canal"
EVENTS = {"c": "i", "u": "u", "d": "d"}


class _TableMeta:
    def __init__(self, tv: TableVersion) -> None:
        self.topic = f"krc.{tv.database}"
        self.cols = [(c.name, c.type.mysql_type) for c in tv.columns]
        # `{"n":...,"t":...,` of every column, encoded once
        self.heads = ['{"n":' + encode(name) + ',"t":' + encode(type_) + "," for name, type_ in self.cols]
        # no `keys` for a table without primary key
        self.tail = (',"keys":' + encode(list(tv.pk_names)) if tv.pk_names else "") + "}"
        self.head = ',"db":' + encode(tv.database) + ',"table":' + encode(tv.table) + ',"event":"'


class KafkaRiverCanalEncoder(Encoder):
    fmt = FMT

    def _meta(self, tv: TableVersion) -> _TableMeta:
        meta = tv.cache.get(FMT)
        if meta is None:
            meta = tv.cache[FMT] = _TableMeta(tv)
        return meta

    def transaction(self, tx: Transaction) -> None:
        emit = self.sink.emit
        time_ms = tx.commit_s * 1000
        file = tx.file
        for ev in tx.events:
            tv = ev.table
            meta = self._meta(tv)
            binlog = f"{ev.pos}@{file}"
            for ch in ev.changes:
                captured = self.capture_ms(tx.commit_s)
                heads = meta.heads
                if ch.op == "u":
                    assert ch.before is not None and ch.after is not None
                    before_values, after_values = ch.before.values, ch.after.values
                    before_text = ch.before.text()
                    parts = []
                    for i, value in enumerate(ch.after.text()):
                        updated = before_values[i] != after_values[i]
                        part = heads[i]
                        if value is not None:
                            part += '"v":' + quote(value) + ","
                        if updated and before_text[i] is not None:
                            part += '"origin_val":' + quote(before_text[i]) + ","
                        part += ('"null":true' if value is None else '"null":false') + (
                            ',"updated":true}' if updated else ',"updated":false}'
                        )
                        parts.append(part)
                else:
                    parts = [
                        heads[i] + '"null":true}'
                        if value is None
                        else heads[i] + '"v":' + quote(value) + ',"null":false}'
                        for i, value in enumerate(ch.image.text())
                    ]
                message = (
                    '{"binlog":"'
                    + binlog
                    + '","time":'
                    + str(time_ms)
                    + ',"canalTime":'
                    + str(captured)
                    + meta.head
                    + EVENTS[ch.op]
                    + '","columns":['
                    + ",".join(parts)
                    + "]"
                    + meta.tail
                )
                emit(meta.topic, ch.partition_hash % PARTITIONS, None, message, captured, CHANGE)
                self.rows += 1

    @staticmethod
    def malform(value: str, rng: Random) -> tuple[str, str]:
        def wrong_type(obj: dict[str, Any]) -> str:
            obj["columns"] = {c["n"]: c.get("v") for c in obj["columns"]}
            return "wrong type: columns is an object, not an array"

        def unknown_op(obj: dict[str, Any]) -> str:
            obj["event"] = "x"
            return "unknown event 'x'"

        return malform_with(value, rng, wrong_type, unknown_op)
