"""The data model shared by the workload and the encoders: table versions, row images, binlog events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from random import Random
from typing import Any

from cdc_lake.generator.jsontext import dumps as _encode
from cdc_lake.generator.mysql_types import ColType

GTID_EVENT_SIZE = 65
BEGIN_EVENT_SIZE = 72  # the `BEGIN` query event after a transaction's GTID event
XID_EVENT_SIZE = 31

# A value generator: (rng, commit second) -> native value (never None; NULLs are decided by the caller).
ValueGen = Callable[[Random, int], Any]


@dataclass(frozen=True)
class Column:
    name: str
    type: ColType
    gen: ValueGen
    nullable: bool = True
    null_rate: float = 0.2
    # Value of existing rows when the column is added by ALTER TABLE (MySQL fills in the DEFAULT).
    default: Any = None

    @property
    def definition(self) -> str:
        """Column definition as it appears in an ALTER TABLE statement."""
        null = "DEFAULT NULL" if self.nullable else "NOT NULL"
        return f"`{self.name}` {self.type.mysql_type} {null}"


class TableVersion:
    """The columns of a table between two DDL statements. Encoders cache their per-table work in `cache`."""

    __slots__ = (
        "cache",
        "canon_fns",
        "columns",
        "database",
        "names",
        "pk_idx",
        "pk_names",
        "table",
        "text_fns",
        "version",
    )

    def __init__(
        self,
        database: str,
        table: str,
        columns: tuple[Column, ...],
        pk_names: tuple[str, ...],
        version: int = 1,
    ) -> None:
        self.database = database
        self.table = table
        self.columns = columns
        self.names = tuple(c.name for c in columns)
        self.pk_names = pk_names
        self.pk_idx = tuple(self.names.index(n) for n in pk_names)
        self.version = version
        self.cache: dict[str, Any] = {}
        self.canon_fns = tuple(c.type.canonical_fn() for c in columns)
        self.text_fns = tuple(c.type.mysql_text_fn() for c in columns)

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.table}"

    def with_column(self, column: Column) -> TableVersion:
        return TableVersion(self.database, self.table, (*self.columns, column), self.pk_names, self.version + 1)


class Image:
    """One full row image (native values aligned with `version.columns`), with lazily built renderings."""

    __slots__ = ("_canon", "_text", "enc", "values", "version")

    def __init__(self, version: TableVersion, values: tuple[Any, ...]) -> None:
        self.version = version
        self.values = values
        self._canon: dict[str, str | None] | None = None
        self._text: list[str | None] | None = None
        # Encoder-private renderings of this image (for example the Debezium struct), built once because
        # an image is sent twice: as the after image of one change and the before image of the next.
        self.enc: dict[str, Any] | None = None

    def canon(self) -> dict[str, str | None]:
        """Column name -> canonical text (None for SQL NULL)."""
        if self._canon is None:
            tv = self.version
            self._canon = {
                name: None if v is None else fn(v)
                for name, fn, v in zip(tv.names, tv.canon_fns, self.values, strict=True)
            }
        return self._canon

    def text(self) -> list[str | None]:
        """Values as MySQL prints them, aligned with the columns (None for SQL NULL)."""
        if self._text is None:
            self._text = [
                None if v is None else fn(v) for fn, v in zip(self.version.text_fns, self.values, strict=True)
            ]
        return self._text

    def canon_json(self) -> str:
        """`canon()` as compact JSON: a keyless table's key for its identical rows (cached: an image
        is looked up as an after, then as a before)."""
        cached = self.cached("canon")
        if cached is None:
            cached = self.store("canon", _encode(self.canon()))
        return cached

    def cached(self, fmt: str) -> Any:
        return None if self.enc is None else self.enc.get(fmt)

    def store(self, fmt: str, rendering: Any) -> Any:
        if self.enc is None:
            self.enc = {}
        self.enc[fmt] = rendering
        return rendering


@dataclass(slots=True)
class RowChange:
    """One row change inside a binlog rows event."""

    op: str  # c, u, d
    key: tuple[Any, ...]
    key_canon: dict[str, str]
    partition_hash: int  # stable hash of the row key; partition = partition_hash % partitions
    before: Image | None
    after: Image | None
    row: int  # index of the row inside its rows event
    seq: int  # 1-based number of the change in the whole stream
    # an update that changed the primary key: the old key and its partition hash. MySQL writes one
    # update row; it is a delete of the old key and an insert of the new one (key_canon).
    old_key_canon: dict[str, str] | None = None
    old_partition_hash: int | None = None
    keyless: bool = False  # a row of a table without primary key (identified by its image)

    def truth_halves(self) -> list[RowChange]:
        """The change as the change log holds it: a key-changing update, or an update that alters a
        keyless row (whose identity is its image), as a delete and an insert; else itself."""
        if self.keyless and self.op == "u" and self.before is not None and self.after is not None:
            if self.before.canon() != self.after.canon():
                return [
                    RowChange("d", self.key, {}, self.partition_hash, self.before, None, self.row, self.seq,
                              keyless=True),
                    RowChange("c", self.key, {}, self.partition_hash, None, self.after, self.row, self.seq,
                              keyless=True),
                ]
        return self.halves()

    def halves(self) -> list[RowChange]:
        """A key-changing update as the delete of the old key and the insert of the new one (as
        Debezium sends it and the change log holds it); any other change as itself."""
        if self.old_key_canon is None:
            return [self]
        assert self.old_partition_hash is not None
        return [
            RowChange("d", self.key, self.old_key_canon, self.old_partition_hash, self.before, None, self.row,
                      self.seq),
            RowChange("c", self.key, self.key_canon, self.partition_hash, None, self.after, self.row, self.seq),
        ]

    @property
    def image(self) -> Image:
        """The image a single-image format sends: after for c/u, before for d."""
        img = self.after if self.after is not None else self.before
        assert img is not None
        return img


@dataclass(slots=True)
class RowsEvent:
    """One binlog rows event: one statement's rows for one table."""

    table: TableVersion
    op: str
    changes: list[RowChange]
    pos: int  # start position of the rows event in its binlog file
    end_pos: int  # position right after it (MySQL's end_log_pos)
    event_id: int  # 1-based number of the rows event in the stream


@dataclass(slots=True)
class Transaction:
    xid: int
    gtid_no: int
    gtid: str
    file_no: int
    begin_pos: int  # position of the transaction's GTID event
    end_pos: int  # position after its XID event
    commit_s: int
    thread_id: int
    events: list[RowsEvent] = field(default_factory=list)

    @property
    def file(self) -> str:
        return binlog_file(self.file_no)


@dataclass(slots=True)
class DdlEvent:
    """A DDL statement (its own GTID, no BEGIN/COMMIT), and the table version it leaves."""

    table: TableVersion
    # Canal's name of the statement kind: ALTER, TRUNCATE, ERASE (DROP TABLE) or CREATE
    kind: str
    sql: str
    gtid_no: int
    gtid: str
    file_no: int
    pos: int
    end_pos: int
    commit_s: int
    thread_id: int
    server_uuid: str
    seq: int  # 1-based number of the DDL in the stream

    @property
    def file(self) -> str:
        return binlog_file(self.file_no)


@dataclass(slots=True)
class HBaseChange:
    """A change of the Lindorm HBase-style table: cells are qualifier -> text; absent = no cell."""

    namespace: str
    table: str
    qualifiers: tuple[str, ...]
    op: str
    row: str
    partition_hash: int
    before: dict[str, str] | None
    after: dict[str, str] | None
    commit_s: int
    seq: int


Event = Transaction | DdlEvent | HBaseChange


def binlog_file(file_no: int) -> str:
    return f"mysql-bin.{file_no:06d}"
