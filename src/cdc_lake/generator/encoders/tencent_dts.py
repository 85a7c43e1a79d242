"""Tencent Cloud DTS data-subscription records in its JSON protocol (specs/dts_flat_record.md).

No public sample of this format exists; the exact shape chosen is written down in docs/formats.md
("Tencent DTS"). In short: one topic `dts.cdclake`, every record carries every FlatRecord field (null
where it does not apply); a transaction is BEGIN, one record per row change, COMMIT; HEARTBEAT and
CHECKPOINT records now and then; the ALTER is a DDL record. Row values are MySQL's text as strings
aligned with `columns` (binary as "0x" + hex); about one record in ten carries them as an object keyed
by column name instead. Row records go to partition hash(primary key) % 3, all others to partition 0.
"""

from __future__ import annotations

from random import Random
from typing import Any

from cdc_lake.generator.encoders.base import (
    MYSQL_VERSION,
    PARTITIONS,
    SERVER_ID,
    SERVER_NAME,
    Encoder,
    encode,
    malform_with,
)
from cdc_lake.generator.kafka import CHANGE, CONTROL, DDL
from cdc_lake.generator.model import (
    BEGIN_EVENT_SIZE,
    GTID_EVENT_SIZE,
    DdlEvent,
    Image,
    TableVersion,
    Transaction,
)
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

FMT = "tencent_dts"
TOPIC = f"dts.{SERVER_NAME}"
MAP_COLUMNS_RATE = 0.1
HEARTBEAT_RATE = 0.03
CHECKPOINT_RATE = 0.02
MESSAGE_TYPES = {"c": "INSERT", "u": "UPDATE", "d": "DELETE"}

# MySQL protocol field type numbers (enum_field_types)
_TYPE_NUMBERS = {
    DECIMAL: 246,
    VARCHAR: 15,
    TEXT: 252,
    JSON: 245,
    DATE: 10,
    DATETIME: 12,
    TIMESTAMP: 7,
    TIME: 11,
    ENUM: 247,
    SET: 248,
    BIT: 16,
    BLOB: 252,
    GEOMETRY: 255,
}
_INT_NUMBERS = {8: 1, 16: 2, 32: 3, 64: 8}


def type_number(t: ColType) -> int:
    return _INT_NUMBERS[t.bits] if t.kind == INT else _TYPE_NUMBERS[t.kind]


def _record(**fields: Any) -> dict[str, Any]:
    """Every FlatRecord field, in the protocol's order, null unless given."""
    record: dict[str, Any] = dict.fromkeys(_FIELDS)
    record.update(fields)
    return record


_FIELDS = (
    "id",
    "version",
    "messageType",
    "fileName",
    "position",
    "safePosition",
    "timestamp",
    "gtid",
    "transactionId",
    "serverId",
    "threadId",
    "sourceType",
    "sourceVersion",
    "schemaName",
    "tableName",
    "objectName",
    "columns",
    "oldColumns",
    "newColumns",
    "sql",
    "executionTime",
    "heartbeatTimestamp",
    "syncedGtid",
    "fakeGtid",
    "pkNames",
    "readerTimestamp",
    "tags",
    "total",
    "index",
)


class _TableMeta:
    def __init__(self, tv: TableVersion) -> None:
        self.names = tv.names
        self.columns = [
            {
                "name": c.name,
                "dataTypeNumber": type_number(c.type),
                "isKey": c.name in tv.pk_names,
                "originalType": c.type.mysql_type,
            }
            for c in tv.columns
        ]
        self.blobs = [i for i, c in enumerate(tv.columns) if c.type.kind in (BLOB, GEOMETRY)]
        self.pk_names = list(tv.pk_names)
        # schemaName .. columns: the same in every row record of the table
        self.object_head = (
            '"schemaName":'
            + encode(tv.database)
            + ',"tableName":'
            + encode(tv.table)
            + ',"objectName":'
            + encode(tv.qualified)
            + ',"columns":'
            + encode(self.columns)
        )
        self.pk_json = encode(self.pk_names)


class TencentDtsEncoder(Encoder):
    fmt = FMT

    def __init__(self, sink: Any, seed: int) -> None:
        super().__init__(sink, seed)
        self.next_id = 0

    def _meta(self, tv: TableVersion) -> _TableMeta:
        meta = tv.cache.get(FMT)
        if meta is None:
            meta = tv.cache[FMT] = _TableMeta(tv)
        return meta

    def _base(self, message_type: str, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        return _record(
            id=self.next_id,
            version=1,
            messageType=message_type,
            serverId=SERVER_ID,
            sourceType="MySQL",
            sourceVersion=MYSQL_VERSION,
            fakeGtid=False,
            tags={},
            total=0,
            index=0,
            **fields,
        )

    def _values(self, meta: _TableMeta, image: Image | None, as_map: bool) -> str:
        """JSON text of an image: an array aligned with `columns` (cached), or an object by column name."""
        if image is None:
            return "null"
        if not as_map:
            cached = image.cached(FMT)
            if cached is not None:
                return cached
        values = image.text()
        if meta.blobs:
            values = list(values)
            for i in meta.blobs:
                raw = image.values[i]
                if raw is not None:
                    values[i] = "0x" + raw.hex()
        if as_map:
            return encode(dict(zip(meta.names, values, strict=True)))
        return image.store(FMT, encode(values))

    def transaction(self, tx: Transaction) -> None:
        emit = self.sink.emit
        captured = self.capture_ms(tx.commit_s)
        file_no = tx.file_no
        common = {
            "fileName": tx.file,
            "safePosition": f"{tx.begin_pos}@{file_no}",
            "timestamp": tx.commit_s,
            "gtid": tx.gtid,
            "threadId": tx.thread_id,
            "readerTimestamp": captured,
        }
        begin_end = tx.begin_pos + GTID_EVENT_SIZE + BEGIN_EVENT_SIZE
        emit(
            TOPIC,
            0,
            None,
            encode(self._base("BEGIN", position=f"{begin_end}@{file_no}", **common)),
            captured,
            CONTROL,
        )
        # A row record is built as text: the parts that are the same for the whole transaction once.
        middle = (
            '","safePosition":"'
            + common["safePosition"]
            + '","timestamp":'
            + str(tx.commit_s)
            + ',"gtid":"'
            + tx.gtid
            + '","transactionId":null,"serverId":'
            + str(SERVER_ID)
            + ',"threadId":'
            + str(tx.thread_id)
            + ',"sourceType":"MySQL","sourceVersion":"'
            + MYSQL_VERSION
            + '",'
        )
        tail = (
            ',"sql":null,"executionTime":null,"heartbeatTimestamp":null,"syncedGtid":null,"fakeGtid":false,'
            '"pkNames":%s,"readerTimestamp":' + str(captured) + ',"tags":{},"total":0,"index":0}'
        )
        file_head = ',"version":1,"messageType":"%s","fileName":"' + tx.file + '","position":"'
        for ev in tx.events:
            tv = ev.table
            meta = self._meta(tv)
            head = file_head % MESSAGE_TYPES[ev.op] + f"{ev.end_pos}@{file_no}" + middle + meta.object_head
            end = tail % meta.pk_json
            for ch in ev.changes:
                as_map = self.rng.random() < MAP_COLUMNS_RATE
                self.next_id += 1
                text = (
                    '{"id":'
                    + str(self.next_id)
                    + head
                    + ',"oldColumns":'
                    + self._values(meta, ch.before, as_map)
                    + ',"newColumns":'
                    + self._values(meta, ch.after, as_map)
                    + end
                )
                emit(TOPIC, ch.partition_hash % PARTITIONS, None, text, captured, CHANGE)
                self.rows += 1
        emit(
            TOPIC,
            0,
            None,
            encode(self._base("COMMIT", position=f"{tx.end_pos}@{file_no}", transactionId=str(tx.xid), **common)),
            captured,
            CONTROL,
        )
        if self.rng.random() < HEARTBEAT_RATE:
            record = self._base(
                "HEARTBEAT",
                fileName=tx.file,
                position=f"{tx.end_pos}@{file_no}",
                timestamp=tx.commit_s,
                heartbeatTimestamp=tx.commit_s,
                readerTimestamp=captured,
            )
            emit(TOPIC, 0, None, encode(record), captured, CONTROL)
        if self.rng.random() < CHECKPOINT_RATE:
            uuid = tx.gtid.rsplit(":", 1)[0]
            record = self._base(
                "CHECKPOINT",
                fileName=tx.file,
                position=f"{tx.end_pos}@{file_no}",
                timestamp=tx.commit_s,
                syncedGtid=f"{uuid}:1-{tx.gtid_no}",
                readerTimestamp=captured,
            )
            emit(TOPIC, 0, None, encode(record), captured, CONTROL)

    def ddl(self, ddl: DdlEvent) -> None:
        captured = self.capture_ms(ddl.commit_s)
        tv = ddl.table
        record = self._base(
            "DDL",
            fileName=ddl.file,
            position=f"{ddl.end_pos}@{ddl.file_no}",
            safePosition=f"{ddl.pos - GTID_EVENT_SIZE}@{ddl.file_no}",
            timestamp=ddl.commit_s,
            gtid=ddl.gtid,
            threadId=ddl.thread_id,
            schemaName=tv.database,
            tableName=tv.table,
            objectName=tv.qualified,
            sql=ddl.sql,
            executionTime=0,
            readerTimestamp=captured,
        )
        self.sink.emit(TOPIC, 0, None, encode(record), captured, DDL)

    @staticmethod
    def malform(value: str, rng: Random) -> tuple[str, str]:
        def wrong_type(obj: dict[str, Any]) -> str:
            field = "newColumns" if obj.get("newColumns") is not None else "oldColumns"
            obj[field] = 12345
            return f"wrong type: {field} is a number"

        def unknown_op(obj: dict[str, Any]) -> str:
            obj["messageType"] = "MERGE"
            return "unknown messageType 'MERGE'"

        return malform_with(value, rng, wrong_type, unknown_op)
