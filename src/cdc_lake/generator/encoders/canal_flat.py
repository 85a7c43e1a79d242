"""Alibaba Canal FlatMessage JSON (specs/canal_flat_message.md, Flink's canal-data.txt).

One message per binlog rows event, topic `canal.<db>`, key null. Canal's partitionHash by primary key
splits an event's rows by partition: rows of one event that hash to the same partition share one
message (same `id`, `es`, `ts`). Values are MySQL's text; `old` carries only the changed columns.
In about one message in seven, enum and set columns carry the binlog's raw numbers (1-based enum index,
set bit mask) instead of labels, as Canal does when it has no table metadata for them.
Before about one rows event in five goes a `QUERY` message (isDdl false, no database or table, the
statement's text in `sql`): what Canal's server sends for MariaDB's annotate-rows events (seen from
Canal 1.1.4 against MariaDB 10.11) and MySQL's `binlog_rows_query_log_events`.
Message `id` is Canal's batch id, shared by the messages of one batch (1 to 8 binlog events here),
so only `es` (whole seconds), the Kafka offset and the row index order them. Canal re-sends a batch
it failed to send under a new id, never as the same bytes: the duplicates fault does not apply.
"""

from __future__ import annotations

from random import Random
from typing import Any

from cdc_lake.generator.encoders.base import PARTITIONS, Encoder, encode, malform_with
from cdc_lake.generator.kafka import CHANGE, CONTROL, DDL
from cdc_lake.generator.model import DdlEvent, RowChange, TableVersion, Transaction
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
)

FMT = "canal_flat"
NUMERIC_ENUM_RATE = 0.15
QUERY_RATE = 0.2
EVENT_TYPES = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}

# java.sql.Types codes Canal puts in `sqlType`
_SQL_TYPES = {
    DECIMAL: 3,
    VARCHAR: 12,
    TEXT: 2005,
    JSON: 12,
    DATE: 91,
    DATETIME: 93,
    TIMESTAMP: 93,
    TIME: 92,
    ENUM: 4,
    SET: -7,
    BIT: -7,
    BLOB: 2004,
    GEOMETRY: -2,
}


def sql_type(t: ColType) -> int:
    if t.kind == INT:
        if t.bits == 64:
            return 3 if t.unsigned else -5  # unsigned bigint does not fit a Java long
        if t.bits == 32:
            return -5 if t.unsigned else 4
        return 5 if t.bits == 16 else -6
    return _SQL_TYPES[t.kind]


class _TableMeta:
    def __init__(self, tv: TableVersion) -> None:
        self.topic = f"canal.{tv.database}"
        self.names = tv.names
        self.head = '"database":' + encode(tv.database)
        self.mysql_type = encode({c.name: c.type.mysql_type for c in tv.columns})
        self.sql_type = encode({c.name: sql_type(c.type) for c in tv.columns})
        # Canal writes `pkNames: null` for a table without primary key
        self.pk_names = encode(list(tv.pk_names)) if tv.pk_names else "null"
        self.table = encode(tv.table)
        self.numeric = frozenset(i for i, c in enumerate(tv.columns) if c.type.kind in (ENUM, SET))


class CanalFlatEncoder(Encoder):
    fmt = FMT
    resends_identical_records = False

    def __init__(self, sink: Any, seed: int) -> None:
        super().__init__(sink, seed)
        self.next_id = 0
        self.batch_left = 0  # messages left in the current Canal batch

    def _meta(self, tv: TableVersion) -> _TableMeta:
        meta = tv.cache.get(FMT)
        if meta is None:
            meta = tv.cache[FMT] = _TableMeta(tv)
        return meta

    def transaction(self, tx: Transaction) -> None:
        captured = self.capture_ms(tx.commit_s)
        es = tx.commit_s * 1000
        for ev in tx.events:
            meta = self._meta(ev.table)
            if self.rng.random() < QUERY_RATE:
                self._statement_text(meta, ev.op, es, captured)
            self._next_message()
            groups: dict[int, list[RowChange]] = {}
            for ch in ev.changes:
                groups.setdefault(ch.partition_hash % PARTITIONS, []).append(ch)
            for partition in sorted(groups):
                self._message(meta, ev.op, groups[partition], partition, es, captured)

    def _message(
        self, meta: _TableMeta, op: str, changes: list[RowChange], partition: int, es: int, captured: int
    ) -> None:
        numeric = bool(meta.numeric) and self.rng.random() < NUMERIC_ENUM_RATE
        names = meta.names
        data = []
        olds: list[dict[str, Any]] | None = [] if op == "u" else None
        for ch in changes:
            image = ch.image
            if numeric:
                text = list(image.text())
                for i in meta.numeric:
                    if image.values[i] is not None:
                        text[i] = str(image.values[i])
                data.append(encode(dict(zip(names, text, strict=True))))
            else:
                row = image.cached(FMT)
                if row is None:
                    row = image.store(FMT, encode(dict(zip(names, image.text(), strict=True))))
                data.append(row)
            if olds is not None:
                assert ch.before is not None and ch.after is not None
                before_values, after_values = ch.before.values, ch.after.values
                before_text = ch.before.text()
                old = {}
                for i, name in enumerate(names):
                    if before_values[i] != after_values[i]:
                        old[name] = before_text[i]
                        if numeric and before_values[i] is not None and i in meta.numeric:
                            old[name] = str(before_values[i])
                olds.append(old)
        message = (
            '{"data":['
            + ",".join(data)
            + "],"
            + meta.head
            + ',"es":'
            + str(es)
            + ',"id":'
            + str(self.next_id)
            + ',"isDdl":false,"mysqlType":'
            + meta.mysql_type
            + ',"old":'
            + ("null" if olds is None else encode(olds))
            + ',"pkNames":'
            + meta.pk_names
            + ',"sql":"","sqlType":'
            + meta.sql_type
            + ',"table":'
            + meta.table
            + ',"ts":'
            + str(captured)
            + ',"type":"'
            + EVENT_TYPES[op]
            + '"}'
        )
        self.sink.emit(meta.topic, partition, None, message, captured, CHANGE)
        self.rows += len(changes)

    def _statement_text(self, meta: _TableMeta, op: str, es: int, captured: int) -> None:
        """The QUERY message Canal sends before a rows event whose statement the binlog annotates."""
        self._next_message()
        message = {
            "data": None, "database": "", "es": es, "id": self.next_id, "isDdl": False, "mysqlType": None,
            "old": None, "pkNames": None, "sql": f"{EVENT_TYPES[op].lower()} /* rows of */ {meta.table[1:-1]} ...",
            "sqlType": None, "table": "", "ts": captured, "type": "QUERY",
        }  # fmt: skip
        self.sink.emit(meta.topic, 0, None, encode(message), captured, CONTROL)

    def _next_message(self) -> None:
        """Advance to the next message's batch: a new batch id every 1 to 8 binlog events."""
        if self.batch_left == 0:
            self.next_id += 1
            self.batch_left = self.rng.randint(1, 8)
        self.batch_left -= 1

    def ddl(self, ddl: DdlEvent) -> None:
        # a DDL message opens a batch here: in partition 0, it would otherwise sort before the rows
        # of other partitions sent earlier in its batch and second (their offsets do not compare)
        self.batch_left = 0
        self._next_message()
        captured = self.capture_ms(ddl.commit_s)
        tv = ddl.table
        message = {
            "data": None,
            "database": tv.database,
            "es": ddl.commit_s * 1000,
            "id": self.next_id,
            "isDdl": True,
            "mysqlType": None,
            "old": None,
            "pkNames": None,
            "sql": ddl.sql,
            "sqlType": None,
            "table": tv.table,
            "ts": captured,
            "type": ddl.kind,
        }
        self.sink.emit(f"canal.{tv.database}", 0, None, encode(message), captured, DDL)

    @staticmethod
    def malform(value: str, rng: Random) -> tuple[str, str]:
        def wrong_type(obj: dict[str, Any]) -> str:
            obj["data"] = encode(obj["data"])
            return "wrong type: data is a string, not an array of rows"

        def unknown_op(obj: dict[str, Any]) -> str:
            obj["type"] = "UPSERT"
            return "unknown type 'UPSERT'"

        return malform_with(value, rng, wrong_type, unknown_op)
