"""The random, seeded MySQL workload (plus a small Lindorm HBase-style table) and its ground truth.

`Workload.events()` yields binlog transactions, one DDL and HBase changes in source order. The live
rows of every table are kept in memory (bounded: the key space grows slowly and a table's live-row
count is capped, deletes pick up as it fills); everything else is written out as it happens.
"""

from __future__ import annotations

import json
import uuid
import zlib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from random import Random
from typing import Any, Protocol

from cdc_lake.generator import large as L
from cdc_lake.generator import tables as T
from cdc_lake.generator.model import (
    BEGIN_EVENT_SIZE,
    GTID_EVENT_SIZE,
    XID_EVENT_SIZE,
    DdlEvent,
    Event,
    HBaseChange,
    Image,
    RowChange,
    RowsEvent,
    TableVersion,
    Transaction,
)
from cdc_lake.generator.mysql_types import MICROS

START_EPOCH_S = 1_709_251_200  # 2024-03-01 00:00:00 UTC
FIRST_EVENT_POS = 4 + 120 + 71  # after the magic number, the format description and previous-GTIDs events
KEY_CHANGE_RATE = 0.04  # of the updates of tables whose spec allows key changes
TOUCH_RATE = 0.5  # of the updates of a table with untracked columns (Workload's track_history_except)
BINLOG_ROTATE_MIN = 200_000  # rotate to the next binlog file after roughly this many bytes (random up to 2x)


class TruthSink(Protocol):
    def change(self, ch: RowChange, tv: TableVersion, tx: Transaction, ev: RowsEvent) -> None: ...

    def hbase_change(self, ch: HBaseChange) -> None: ...

    def ddl(self, ddl: DdlEvent) -> None: ...

    def version(
        self,
        database: str,
        table: str,
        key: dict[str, str],
        image: dict[str, str | None] | str,
        valid_from: int,
        valid_to: int | None,
        op: str,
        closed_by_delete: bool,
        row_count: int = 1,
    ) -> None: ...


class LiveRow:
    """A live row and its open history version."""

    __slots__ = ("image", "op", "since")

    def __init__(self, image: Image, since: int, op: str) -> None:
        self.image = image
        self.since = since
        self.op = op


class TableState:
    """The live rows of one table, with O(1) random pick and removal."""

    def __init__(self, spec: T.TableSpec, cap: int) -> None:
        self.spec = spec
        self.version = spec.version
        self.live: dict[tuple[Any, ...], LiveRow] = {}
        self.keys: list[tuple[Any, ...]] = []
        self.slot: dict[tuple[Any, ...], int] = {}
        self.deleted: deque[tuple[Any, ...]] = deque(maxlen=200)
        self.next_n = 0
        self.cap = cap
        # keyless tables: image JSON -> [identical live rows, since, op that opened the version]
        self.image_counts: dict[str, list[Any]] = {}
        self.updatable = tuple(
            i
            for i, c in enumerate(self.version.columns)
            if c.name not in self.version.pk_names and c.name not in spec.frozen
        )

    def add(self, key: tuple[Any, ...], row: LiveRow) -> None:
        self.live[key] = row
        self.slot[key] = len(self.keys)
        self.keys.append(key)

    def remove(self, key: tuple[Any, ...]) -> LiveRow:
        row = self.live.pop(key)
        i = self.slot.pop(key)
        last = self.keys.pop()
        if last != key:
            self.keys[i] = last
            self.slot[last] = i
        self.deleted.append(key)
        return row

    def set_version(self, tv: TableVersion) -> None:
        self.version = tv
        self.updatable = tuple(
            i for i, c in enumerate(tv.columns) if c.name not in tv.pk_names and c.name not in self.spec.frozen
        )


def key_hash(qualified: str, key_text: str) -> int:
    """Stable hash of a row key; every format puts a row's records in partition hash % partitions."""
    return zlib.crc32(f"{qualified}:{key_text}".encode())


class Workload:
    def __init__(
        self,
        seed: int,
        changes: int,
        truth: TruthSink,
        large_values: tuple[str, ...] = (),
        track_history_except: Mapping[str, Iterable[str]] | None = None,
        large_values_inserted: tuple[str, ...] = (),
    ) -> None:
        self.rng = Random(seed)
        # `<database>.<table>` -> columns whose changes alone do not open a history version (the
        # lake's cdc_table_options track_history_except): such an update changes the open version
        # in place. Only the truth's history depends on it; the records do not.
        self.untracked = {table: frozenset(columns) for table, columns in (track_history_except or {}).items()}
        # with it, TOUCH_RATE of such a table's updates change those columns alone (`UPDATE t SET
        # updated_at = now()`), drawn from a stream of their own: without it the workload is unchanged
        self.touch_rng = Random(f"{seed}:touch")
        self.target = changes
        self.truth = truth
        self.server_uuid = str(uuid.UUID(int=self.rng.getrandbits(128)))
        cap = max(40, min(changes // 40, 3000))
        self.tables = [TableState(spec, cap) for spec in T.build_tables()]
        self.weights = [s.spec.weight for s in self.tables]
        self.now = START_EPOCH_S
        self.file_no = 1
        self.pos = FIRST_EVENT_POS
        self.rotate_at = self._rotate_threshold()
        self.gtid_no = 0
        self.xid = 1000
        self.event_id = 0
        self.mysql_changes = 0  # row changes of the MySQL tables (what --changes counts)
        self.seq = 0  # every change, HBase ones included
        self.ddl_count = 0
        self.ddl_plan = deque(T.DDL_PLAN)
        # tables only the formats that carry DDL carry (their rows end with a TRUNCATE / DROP TABLE)
        self.reset_tables = frozenset(s.version.qualified for s in self.tables if s.spec.resets)
        # HBase-style table (Lindorm only): row -> cells.
        self.hbase_live: dict[str, dict[str, str]] = {}
        self.hbase_since: dict[str, tuple[int, str]] = {}
        self.hbase_keys: list[str] = []
        self.hbase_next = 0
        # `--large-values`: tables of their own (generator.large), played after the ordinary workload
        # from a random stream of their own, so that the workload without them is unchanged
        self.large_tables: list[TableState] = []
        self.large_steps: list[L.Step] = []
        if large_values or large_values_inserted:
            large_tables, self.large_steps = L.script(Random(f"{seed}:large"), large_values, large_values_inserted)
            self.large_tables = [TableState(T.TableSpec(tv, lambda n: (n,), 0.0), cap) for tv in large_tables]

    @property
    def all_tables(self) -> list[TableState]:
        """The workload's tables, then those of `--large-values`."""
        return self.tables + self.large_tables

    # ------------------------------------------------------------------ driving loop
    def events(self) -> Iterator[Event]:
        rng = self.rng
        while self.mysql_changes < self.target:
            if self.ddl_plan and self.mysql_changes >= self.ddl_plan[0][0] * self.target:
                _, kind, table = self.ddl_plan.popleft()
                yield from self._ddl(kind, table)
                continue
            if rng.random() < 0.03:
                yield self._hbase_change()
                continue
            yield self._transaction()
        states = {st.version.qualified: st for st in self.large_tables}
        for op, tv, key, values in self.large_steps:
            yield self._scripted(states[tv.qualified], op, (key,), values)

    def finish(self) -> None:
        """Emit the still-open history versions (valid_to null)."""
        for st in self.all_tables:
            tv = st.version
            if st.spec.keyless:
                for image_json, (count, since, op) in sorted(st.image_counts.items()):
                    if count > 0:
                        self._keyless_version(tv, image_json, since, None, op, False, count)
                continue
            for key in sorted(st.live):
                row = st.live[key]
                self.truth.version(
                    tv.database,
                    tv.table,
                    _key_canon(row.image.canon(), tv),
                    row.image.canon(),
                    row.since,
                    None,
                    row.op,
                    False,
                )
        for row_key in sorted(self.hbase_live):
            since, op = self.hbase_since[row_key]
            self.truth.version(
                T.HBASE_NAMESPACE,
                T.HBASE_TABLE,
                {"ROW": row_key},
                _hbase_image(row_key, self.hbase_live[row_key]),
                since,
                None,
                op,
                False,
            )

    def current_rows(self) -> Iterator[tuple[str, str, dict[str, str], dict[str, str | None]]]:
        """(database, table, key, image) of every live row, tables in definition order, keys sorted."""
        for st in self.all_tables:
            tv = st.version
            for key in sorted(st.live):
                canon = st.live[key].image.canon()
                yield tv.database, tv.table, _key_canon(canon, tv), canon
        for row_key in sorted(self.hbase_live):
            yield (
                T.HBASE_NAMESPACE,
                T.HBASE_TABLE,
                {"ROW": row_key},
                _hbase_image(row_key, self.hbase_live[row_key]),
            )

    # ------------------------------------------------------------------ clock and binlog
    def _tick(self) -> None:
        r = self.rng.random()
        if r < 0.45:
            return
        self.now += 1 if r < 0.85 else self.rng.randint(2, 30)

    def _rotate_threshold(self) -> int:
        return BINLOG_ROTATE_MIN + self.rng.randrange(BINLOG_ROTATE_MIN)

    def _maybe_rotate(self) -> None:
        if self.pos >= self.rotate_at:
            self.file_no += 1
            self.pos = FIRST_EVENT_POS
            self.rotate_at = self._rotate_threshold()

    def _next_gtid(self) -> tuple[int, str]:
        self.gtid_no += 1
        return self.gtid_no, f"{self.server_uuid}:{self.gtid_no}"

    # ------------------------------------------------------------------ transactions
    def _transaction(self) -> Transaction:
        rng = self.rng
        self._tick()
        gtid_no, gtid = self._next_gtid()
        self.xid += 1
        tx = Transaction(self.xid, gtid_no, gtid, self.file_no, self.pos, 0, self.now, rng.randint(10, 4000))
        pos = self.pos + GTID_EVENT_SIZE + BEGIN_EVENT_SIZE
        r = rng.random()
        statements = 1 if r < 0.55 else 2 if r < 0.8 else rng.randint(3, 5)
        for _ in range(statements):
            remaining = self.target - self.mysql_changes
            if remaining <= 0:
                break
            st = rng.choices(self.tables, self.weights)[0]
            op = self._pick_op(st)
            # a keyless table gets one row per statement: KafkaRiverCanal and Lindorm have no row
            # index, so identical rows of one statement would look like one re-delivered change
            rows = 1 if rng.random() < 0.7 or st.spec.keyless else rng.randint(2, 5)
            rows = min(rows, remaining)
            tv = st.version
            start = pos + 40 + len(tv.database) + len(tv.table) + 2 * len(tv.columns)  # after TABLE_MAP
            ev = RowsEvent(tv, op, [], start, 0, self.event_id + 1)
            if op == "c":
                self._insert(st, ev, rows)
            elif op == "u":
                self._update(st, ev, rows)
            else:
                self._delete(st, ev, rows)
            if not ev.changes:
                continue
            self.event_id += 1
            row_bytes = 12 + 9 * len(tv.columns)
            ev.end_pos = start + 30 + len(ev.changes) * row_bytes * (2 if ev.op == "u" else 1)
            pos = ev.end_pos
            tx.events.append(ev)
            for ch in ev.changes:
                self.truth.change(ch, tv, tx, ev)
        tx.end_pos = pos + XID_EVENT_SIZE
        self.pos = tx.end_pos
        self._maybe_rotate()
        return tx

    def _scripted(
        self, st: TableState, op: str, key: tuple[Any, ...], values: dict[str, Any] | None
    ) -> Transaction:
        """One transaction of one statement on one row, as `large_steps` say: an insert of
        `values` (columns not named are NULL), an update of the named columns, or a delete. The
        binlog positions advance by the row's size."""
        self._tick()
        gtid_no, gtid = self._next_gtid()
        self.xid += 1
        tx = Transaction(self.xid, gtid_no, gtid, self.file_no, self.pos, 0, self.now, self.rng.randint(10, 4000))
        tv = st.version
        start = self.pos + GTID_EVENT_SIZE + BEGIN_EVENT_SIZE + 40 + len(tv.database) + len(tv.table)
        ev = RowsEvent(tv, op, [], start, 0, self.event_id + 1)
        self.event_id += 1
        values = values or {}
        if op == "c":
            named = dict(values, **{tv.pk_names[0]: key[0]})
            after = Image(tv, tuple(named.get(name) for name in tv.names))
            self._new_change(st, "c", key, None, after, ev)
            st.add(key, LiveRow(after, self.now, "c"))
        elif op == "u":
            live = st.live[key]
            old_values = zip(tv.names, live.image.values, strict=True)
            after = Image(tv, tuple(values.get(name, old) for name, old in old_values))
            ch = self._new_change(st, "u", key, live.image, after, ev)
            if after.values != live.image.values:  # an update that changes nothing opens no version
                self._open_version(tv, ch, live, after)
        else:
            live = st.live[key]
            ch = self._new_change(st, "d", key, live.image, None, ev)
            self._close(tv, ch.key_canon, live, self.now, True)
            st.remove(key)
        images = [img for ch in ev.changes for img in (ch.before, ch.after) if img is not None]
        size = sum(len(v) if isinstance(v, (str, bytes)) else 8 for img in images for v in img.values if v is not None)
        ev.end_pos = start + 30 + 12 + 9 * len(tv.columns) + size
        tx.events.append(ev)
        for ch in ev.changes:
            self.truth.change(ch, tv, tx, ev)
        tx.end_pos = ev.end_pos + XID_EVENT_SIZE
        self.pos = tx.end_pos
        self._maybe_rotate()
        return tx

    def _pick_op(self, st: TableState) -> str:
        n = len(st.keys)
        if n == 0:
            return "c"
        fill = n / st.cap
        r = self.rng.random()
        if fill < 0.5:
            return "c" if r < 0.55 else "u" if r < 0.9 else "d"
        if fill < 1:
            return "c" if r < 0.25 else "u" if r < 0.8 else "d"
        return "c" if r < 0.1 else "u" if r < 0.6 else "d"

    def _new_change(
        self,
        st: TableState,
        op: str,
        key: tuple[Any, ...],
        before: Image | None,
        after: Image | None,
        ev: RowsEvent,
    ) -> RowChange:
        tv = st.version
        canon = (after or before).canon()  # type: ignore[union-attr]
        key_canon = _key_canon(canon, tv)
        self.seq += 1
        self.mysql_changes += 1
        ch = RowChange(
            op,
            key,
            key_canon,
            key_hash(tv.qualified, "|".join(key_canon.values())),
            before,
            after,
            len(ev.changes),
            self.seq,
        )
        ch.keyless = st.spec.keyless
        ev.changes.append(ch)
        if ch.keyless:
            self._count_keyless(st, ch)
        return ch

    def _count_keyless(self, st: TableState, ch: RowChange) -> None:
        """A keyless table's history: a version per image while identical rows of it exist, closed
        and reopened whenever their number changes (what cdc_history keeps, with row_count)."""
        tv, now = st.version, self.now
        moves = []
        if ch.before is not None and ch.op in ("u", "d"):
            moves.append((ch.before.canon_json(), -1))
        if ch.after is not None and ch.op in ("u", "c"):
            moves.append((ch.after.canon_json(), +1))
        if len(moves) == 2 and moves[0][0] == moves[1][0]:
            return  # an update that leaves the row as it was
        for image_json, delta in moves:
            count, since, op = st.image_counts.get(image_json, [0, now, "c"])
            if count > 0:
                self._keyless_version(tv, image_json, since, now, op, count + delta == 0, count)
            st.image_counts[image_json] = [count + delta, now, "c" if delta > 0 else "d"]

    def _keyless_version(
        self, tv: TableVersion, image_json: str, since: int, until: int | None, op: str, closed: bool, count: int
    ) -> None:
        """One history version of `count` identical keyless rows (their image kept as JSON text, the
        multiset's key)."""
        self.truth.version(tv.database, tv.table, {}, json.loads(image_json), since, until, op, closed, count)

    def _fresh_values(self, st: TableState, key: tuple[Any, ...]) -> tuple[Any, ...]:
        rng, now = self.rng, self.now
        tv = st.version
        values: list[Any] = []
        pk = dict(zip(tv.pk_idx, key, strict=True)) if tv.pk_idx else {}
        for i, c in enumerate(tv.columns):
            if i in pk:
                values.append(pk[i])
            elif c.nullable and rng.random() < c.null_rate:
                values.append(None)
            else:
                values.append(c.gen(rng, now))
        return tuple(values)

    def _insert(self, st: TableState, ev: RowsEvent, rows: int) -> None:
        rng = self.rng
        for _ in range(rows):
            key = None
            if st.deleted and rng.random() < 0.3:
                candidate = st.deleted[rng.randrange(len(st.deleted))]
                if candidate not in st.live:
                    key = candidate  # re-insert of a deleted key
            if key is None:
                key = st.spec.key_for(st.next_n)
                st.next_n += 1
            if st.spec.keyless and st.keys and rng.random() < 0.35:
                # a row identical to one that exists: a keyless table can hold both
                twin = st.live[st.keys[rng.randrange(len(st.keys))]].image
                after = Image(st.version, self._padded(twin, st.version).values)
            else:
                after = Image(st.version, self._fresh_values(st, key))
            self._new_change(st, "c", key, None, after, ev)
            st.add(key, LiveRow(after, self.now, "c"))

    def _pick_keys(self, st: TableState, rows: int, ev: RowsEvent) -> list[tuple[Any, ...]]:
        n = len(st.keys)
        return [st.keys[i] for i in self.rng.sample(range(n), min(rows, n))] if n else []

    def _padded(self, image: Image, tv: TableVersion) -> Image:
        """The row as the current table version sees it: columns added later hold their DEFAULT."""
        if image.version is tv:
            return image
        extra = tuple(c.default for c in tv.columns[len(image.values) :])
        return Image(tv, image.values + extra)

    def _update(self, st: TableState, ev: RowsEvent, rows: int) -> None:
        rng, now = self.rng, self.now
        tv = st.version
        keys = self._pick_keys(st, rows, ev)
        if not keys:
            self._insert(st, ev, rows)
            ev.op = "c"
            return
        for key in keys:
            live = st.live[key]
            before = self._padded(live.image, tv)
            if st.spec.key_changes and rng.random() < KEY_CHANGE_RATE:
                self._change_key(st, ev, key, before)
                continue
            untracked = self.untracked.get(tv.qualified)
            if untracked and before is live.image and self.touch_rng.random() < TOUCH_RATE:
                # a touch: only untracked columns get new values (maybe the same: then nothing changes)
                values = list(before.values)
                for i, c in enumerate(tv.columns):
                    if c.name in untracked and i in st.updatable:
                        values[i] = c.gen(self.touch_rng, now)
                after = Image(tv, tuple(values))
            elif before is live.image and rng.random() < 0.03:
                after = before  # a row re-written with the same values: a change that changes nothing
            else:
                values = list(before.values)
                for i in rng.sample(st.updatable, min(len(st.updatable), rng.randint(1, 3))):
                    values[i] = self._new_value(tv, i, values[i])
                if tv.table == "customers" and rng.random() < 0.7:
                    values[tv.names.index("updated_at")] = now * MICROS
                if tuple(values) == before.values:
                    self._force_change(st, values)
                after = Image(tv, tuple(values))
            ch = self._new_change(st, "u", key, before, after, ev)
            if after is not before:
                self._open_version(tv, ch, live, after)

    def _open_version(self, tv: TableVersion, ch: RowChange, live: LiveRow, after: Image) -> None:
        """An update that changes the row: it closes the open version and opens the next, unless
        it changes only untracked columns (`track_history_except`), which update the open version
        in place (its image; its start and op stay)."""
        untracked = self.untracked.get(tv.qualified)
        if untracked and tv.pk_names:
            before_canon, after_canon = live.image.canon(), after.canon()
            if {k: v for k, v in before_canon.items() if k not in untracked} == {
                k: v for k, v in after_canon.items() if k not in untracked
            }:
                live.image = after
                return
        self._close(tv, ch.key_canon, live, self.now, False)
        live.image, live.since, live.op = after, self.now, "u"

    def _change_key(self, st: TableState, ev: RowsEvent, key: tuple[Any, ...], before: Image) -> None:
        """`UPDATE t SET id = <new> WHERE id = <old>` (sometimes with another column): one update row
        in the binlog, a delete of the old key and an insert of the new one in the truth."""
        tv, now = st.version, self.now
        new_key = st.spec.key_for(st.next_n)
        st.next_n += 1
        values = list(before.values)
        for i, part in zip(tv.pk_idx, new_key, strict=True):
            values[i] = part
        if self.rng.random() < 0.5 and st.updatable:
            i = self.rng.choice(st.updatable)
            values[i] = self._new_value(tv, i, values[i])
        after = Image(tv, tuple(values))
        live = st.remove(key)
        ch = self._new_change(st, "u", new_key, before, after, ev)
        ch.old_key_canon = _key_canon(before.canon(), tv)
        ch.old_partition_hash = key_hash(tv.qualified, "|".join(ch.old_key_canon.values()))
        self._close(tv, ch.old_key_canon, live, now, True)
        st.add(new_key, LiveRow(after, now, "c"))

    def _new_value(self, tv: TableVersion, i: int, old: Any) -> Any:
        c = tv.columns[i]
        if c.nullable:
            if old is None:
                return c.gen(self.rng, self.now)  # NULL -> value
            if self.rng.random() < 0.25:
                return None  # value -> NULL
        return c.gen(self.rng, self.now)

    def _force_change(self, st: TableState, values: list[Any]) -> None:
        tv = st.version
        for _ in range(20):
            i = self.rng.choice(st.updatable)
            new = self._new_value(tv, i, values[i])
            if new != values[i]:
                values[i] = new
                return
        i = tv.names.index(next(c.name for c in tv.columns if c.nullable))
        values[i] = None if values[i] is not None else tv.columns[i].gen(self.rng, self.now)

    def _delete(self, st: TableState, ev: RowsEvent, rows: int) -> None:
        tv = st.version
        for key in self._pick_keys(st, rows, ev):
            live = st.live[key]
            ch = self._new_change(st, "d", key, self._padded(live.image, tv), None, ev)
            self._close(tv, ch.key_canon, live, self.now, True)
            st.remove(key)

    def _close(self, tv: TableVersion, key: dict[str, str], live: LiveRow, until: int, by_delete: bool) -> None:
        if not tv.pk_names:
            return  # keyless: versions follow the number of identical rows (_count_keyless)
        self.truth.version(tv.database, tv.table, key, live.image.canon(), live.since, until, live.op, by_delete)

    # ------------------------------------------------------------------ DDL
    def _ddl(self, kind: str, table: tuple[str, str]) -> list[DdlEvent]:
        """The statements of one DDL_PLAN entry: ALTER adds a column, TRUNCATE ends every row of the
        table, ERASE (DROP TABLE) ends them too and a CREATE TABLE brings the table back."""
        st = next(s for s in self.tables if (s.version.database, s.version.table) == table)
        self._tick()
        tv = st.version
        if kind == "ALTER":
            sql = T.alter_sql(tv, T.ALTER_COLUMN)
            st.set_version(tv.with_column(T.ALTER_COLUMN))
            return [self._ddl_event(st.version, "ALTER", sql)]
        self._end_every_row(st)
        if kind == "TRUNCATE":
            return [self._ddl_event(tv, kind, T.truncate_sql(tv))]
        return [self._ddl_event(tv, "ERASE", T.drop_sql(tv)), self._ddl_event(tv, "CREATE", T.create_sql(tv))]

    def _ddl_event(self, tv: TableVersion, kind: str, sql: str) -> DdlEvent:
        gtid_no, gtid = self._next_gtid()
        self.ddl_count += 1
        pos = self.pos + GTID_EVENT_SIZE
        ddl = DdlEvent(
            tv,
            kind,
            sql,
            gtid_no,
            gtid,
            self.file_no,
            pos,
            pos + 80 + len(sql),
            self.now,
            self.rng.randint(10, 4000),
            self.server_uuid,
            self.ddl_count,
        )
        self.pos = ddl.end_pos
        self.truth.ddl(ddl)
        self._maybe_rotate()
        return ddl

    def _end_every_row(self, st: TableState) -> None:
        """A TRUNCATE or DROP TABLE: every live row ends now, as if deleted (no row change is sent)."""
        tv, now = st.version, self.now
        for key in list(st.keys):
            live = st.remove(key)
            self._close(tv, _key_canon(live.image.canon(), tv), live, now, True)
        for image_json, (count, since, op) in sorted(st.image_counts.items()):  # keyless rows
            if count > 0:
                self._keyless_version(tv, image_json, since, now, op, True, count)
        st.image_counts.clear()

    # ------------------------------------------------------------------ HBase-style table (Lindorm)
    def _hbase_change(self) -> HBaseChange:
        rng = self.rng
        n = len(self.hbase_keys)
        r = rng.random()
        if n == 0 or (r < 0.35 and n < 60):
            row = T.hbase_row_key(self.hbase_next)
            self.hbase_next += 1
            cells = {q: T.hbase_cell(rng, q) for q in T.HBASE_QUALIFIERS if rng.random() < 0.8 or q == "f_name"}
            return self._hbase_emit("c", row, None, cells)
        row = self.hbase_keys[rng.randrange(n)]
        cells = self.hbase_live[row]
        if r < 0.8:
            new = dict(cells)
            r2 = rng.random()
            if r2 < 0.05:
                pass  # the same cells put again: an update that changes nothing
            elif r2 < 0.25 and len(new) > 1:
                del new[rng.choice(sorted(new))]  # a deleted cell: absent from the after image
            else:
                q = rng.choice(T.HBASE_QUALIFIERS)
                new[q] = T.hbase_cell(rng, q)
                new = {k: new[k] for k in T.HBASE_QUALIFIERS if k in new}
            return self._hbase_emit("u", row, cells, new)
        return self._hbase_emit("d", row, cells, None)

    def _hbase_emit(
        self, op: str, row: str, before: dict[str, str] | None, after: dict[str, str] | None
    ) -> HBaseChange:
        now = self.now
        self.seq += 1
        ch = HBaseChange(
            T.HBASE_NAMESPACE,
            T.HBASE_TABLE,
            T.HBASE_QUALIFIERS,
            op,
            row,
            key_hash(f"{T.HBASE_NAMESPACE}.{T.HBASE_TABLE}", row),
            before,
            after,
            now,
            self.seq,
        )
        self.truth.hbase_change(ch)
        key = {"ROW": row}
        if op == "c":
            assert after is not None
            self.hbase_live[row] = after
            self.hbase_since[row] = (now, "c")
            self.hbase_keys.append(row)
        elif before != after:
            assert before is not None
            since, opened_by = self.hbase_since[row]
            self.truth.version(
                T.HBASE_NAMESPACE,
                T.HBASE_TABLE,
                key,
                _hbase_image(row, before),
                since,
                now,
                opened_by,
                op == "d",
            )
            if op == "d":
                del self.hbase_live[row]
                del self.hbase_since[row]
                i = self.hbase_keys.index(row)
                self.hbase_keys[i] = self.hbase_keys[-1]
                self.hbase_keys.pop()
            else:
                assert after is not None
                self.hbase_live[row] = after
                self.hbase_since[row] = (now, "u")
        return ch


def _key_canon(canon: dict[str, str | None], tv: TableVersion) -> dict[str, str]:
    return {name: canon[name] for name in tv.pk_names}  # type: ignore[misc]


def _hbase_image(row: str, cells: dict[str, str]) -> dict[str, str | None]:
    return {"ROW": row, **cells}
