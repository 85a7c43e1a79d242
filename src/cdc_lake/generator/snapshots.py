"""`--snapshot-after-gap`: a Debezium stream that loses records, and the snapshots that repair it.

The story, in shares of the workload's changes (SCENARIO):

1. from `gap_start` the Debezium records are lost (Kafka's retention dropped them: their offsets
   are gone, `cdc_reconciliation.offset_gaps` counts them); rows are deleted, inserted and updated
   meanwhile;
2. at `restart` the connector, restarted, takes a snapshot (Debezium 2's markers) and stops inside
   it: its first table is read whole (`last_in_data_collection`), the next one in part, no `last`;
3. at `resnapshot`, restarted again, it snapshots every table (`first` ... `last`) and streams on
   from that position; the changes between the two snapshots were never streamed. The tables of
   the embedded engine (crm.contacts, no binlog position) are read by a snapshot of their own;
4. at `partial`, a blocking snapshot of two keyed tables in Debezium 1's style (markers `true`
   only, no `last`) reads the first and part of the second, while the stream goes on.

`LakeView` replays what the lake receives, in source order, with the semantics of a complete
snapshot (docs/snapshots.md): it writes `truth/lake_history.jsonl` and `truth/lake_current.jsonl`,
what cdc_history and cdc_current must hold. The source's own truth (`current.jsonl`, ...) is
written as ever; `lake_current.jsonl` equals it but for the tables no complete, placed snapshot
read (`summary.json`, `snapshots.not_rebaselined`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdc_lake.generator.jsontext import dumps as _encode
from cdc_lake.generator.model import DdlEvent, Image, RowChange, TableVersion, Transaction
from cdc_lake.generator.truth import seconds_text
from cdc_lake.generator.workload import Workload, key_hash


@dataclass(frozen=True)
class Scenario:
    gap_start: float = 0.2
    restart: float = 0.5
    resnapshot: float = 0.55
    partial: float = 0.8


SCENARIO = Scenario()
# the connector's name (topics `cdclake_gap.<db>.<table>`, source_system): apart from the usual workload's
GAP_SERVER_NAME = "cdclake_gap"
# what the late partial snapshot reads (a blocking snapshot of two keyed tables; a keyless table's
# reads of an incomplete snapshot would add rows: docs/snapshots.md)
PARTIAL_TABLES = ("shop.customers", "shop.orders")

# Debezium's `source.snapshot` values, in the order a record takes the first that applies
FIRST, FIRST_IN_TABLE, TRUE, LAST_IN_TABLE, LAST = (
    "first", "first_in_data_collection", "true", "last_in_data_collection", "last",
)


@dataclass
class Read:
    """One row a snapshot reads: its table, image (as MySQL's SELECT returns it now) and Kafka
    partition hash, and the marker Debezium gives it."""

    table: TableVersion
    image: Image
    key_canon: dict[str, str]
    partition_hash: int
    keyless: bool
    marker: str = TRUE


@dataclass
class Snapshot:
    """One snapshot run: its reads in order, at one binlog position (`file` "" for an embedded
    engine), and whether it is complete and which tables it completes."""

    file: str
    pos: int
    commit_s: int
    reads: list[Read]
    complete_tables: set[str] = field(default_factory=set)

    @property
    def placed(self) -> bool:
        return self.file != ""


def mark(reads_by_table: list[list[Read]], style: int, stop_after: int | None = None) -> list[Read]:
    """The reads of a run that reads these tables in order, with Debezium's markers: `style` 2
    (first, first/last_in_data_collection, last) or 1 (true on every read but the last, which is
    `last` if the run ends). `stop_after`: the run stops after that many reads (no `last`)."""
    flat = [r for rows in reads_by_table for r in rows]
    ended = stop_after is None or stop_after >= len(flat)
    flat = flat[: len(flat) if stop_after is None else stop_after]
    position = 0
    for rows in reads_by_table:
        for i, r in enumerate(rows):
            if position >= len(flat):
                break
            if style == 2 and i == len(rows) - 1:
                r.marker = LAST_IN_TABLE
            elif style == 2 and position == 0:
                r.marker = FIRST
            elif style == 2 and i == 0:
                r.marker = FIRST_IN_TABLE
            else:
                r.marker = TRUE
            position += 1
    if ended and flat:
        flat[-1].marker = LAST
    return flat


class LakeView:
    """The history and live rows the lake can know: the delivered changes and the snapshots' reads
    played in source order. A complete snapshot at a binlog position first closes, at its time,
    every live key of each table it read to the end that it did not read (a keyless table: every
    row, counted afresh by the reads); each read is then played as an insert: a key read with the
    image it has keeps its version."""

    def __init__(self, truth_dir: Path) -> None:
        self.dir = truth_dir
        self._history = (truth_dir / "lake_history.jsonl").open("w", encoding="utf-8", newline="\n")
        # (database, table) -> identity -> [image, since, op, count]
        self.live: dict[tuple[str, str], dict[str, list[Any]]] = {}
        self.keys: dict[tuple[str, str], dict[str, dict[str, str]]] = {}
        # keyless tables: (database, table) -> image -> inserts less deletes since the last reset
        self.counts: dict[tuple[str, str], dict[str, int]] = {}
        # versions a complete snapshot closed because it did not read them (keyed rows)
        self.closed_absent = 0

    # ------------------------------------------------------------------ what the lake receives
    def change(self, ch: RowChange, tv: TableVersion, commit_s: int) -> None:
        """A delivered row change, as Debezium sends it (a key change as a delete and an insert)."""
        table = (tv.database, tv.table)
        for half in ch.halves():
            if ch.keyless:
                if half.op in ("u", "d") and half.before is not None:
                    if half.op == "u" and half.after is not None and half.before.canon() == half.after.canon():
                        continue
                    self._count(table, half.before.canon(), -1, commit_s, "d")
                if half.op in ("u", "c") and half.after is not None:
                    self._count(table, half.after.canon(), +1, commit_s, "c")
                continue
            identity = _encode(half.key_canon)
            if half.op == "d":
                self._close(table, identity, commit_s, True)
            else:
                assert half.after is not None
                self._put(table, identity, half.key_canon, half.after.canon(), commit_s, half.op)

    def reset(self, tv: TableVersion, commit_s: int) -> None:
        """A delivered TRUNCATE / DROP TABLE: every row of the table ends."""
        self._end_table((tv.database, tv.table), commit_s, set())

    def _end_table(self, table: tuple[str, str], at: int, kept: set[str]) -> None:
        """Every live row of `table` but the keys in `kept` ends at `at`; keyless rows count afresh."""
        for identity in list(self.live.get(table, {})):
            if identity not in kept:
                self._close(table, identity, at, True)
        self.counts.pop(table, None)

    def snapshot(self, run: Snapshot) -> None:
        by_table: dict[tuple[str, str], list[Read]] = {}
        for r in run.reads:
            by_table.setdefault((r.table.database, r.table.table), []).append(r)
        for table, reads in by_table.items():
            if run.placed and f"{table[0]}.{table[1]}" in run.complete_tables:
                read = {_encode(r.key_canon) for r in reads if not r.keyless}
                if read:
                    self.closed_absent += len(set(self.live.get(table, {})) - read)
                self._end_table(table, run.commit_s, read)
            for r in reads:
                if r.keyless:
                    self._count(table, r.image.canon(), +1, run.commit_s, "r")
                else:
                    self._put(table, _encode(r.key_canon), r.key_canon, r.image.canon(), run.commit_s, "r")

    # ------------------------------------------------------------------ versions
    def _put(self, table: tuple[str, str], identity: str, key: dict[str, str], image: dict[str, Any],
             at: int, op: str) -> None:
        rows = self.live.setdefault(table, {})
        current = rows.get(identity)
        if current is not None and current[0] == image:
            return  # the image it has: no new version
        if current is not None:
            self._close(table, identity, at, False)
        rows[identity] = [image, at, op, 1]
        self.keys.setdefault(table, {})[identity] = key

    def _count(self, table: tuple[str, str], image: dict[str, Any], delta: int, at: int, op: str) -> None:
        """A keyless row: a version per number of identical rows, closed and reopened when it
        changes. The number counts inserts less deletes since the last reset and may fall below
        zero, as cdc_history's does (a delete of a row the lake never saw)."""
        identity = _encode(image)
        counts = self.counts.setdefault(table, {})
        count = counts.get(identity, 0)
        if count > 0:
            self._close(table, identity, at, count + delta <= 0)
        counts[identity] = count + delta
        if count + delta > 0:
            self.live.setdefault(table, {})[identity] = [image, at, op, count + delta]
            self.keys.setdefault(table, {})[identity] = {}

    def _close(self, table: tuple[str, str], identity: str, at: int, by_delete: bool) -> None:
        current = self.live.get(table, {}).pop(identity, None)
        if current is None:
            return
        image, since, op, count = current
        self._write(table, self.keys[table][identity], image, since, at, op, by_delete, count)

    def _write(self, table: tuple[str, str], key: dict[str, str], image: dict[str, Any], since: int,
               until: int | None, op: str, by_delete: bool, count: int) -> None:
        record = {
            "database": table[0], "table": table[1], "key": key, "image": image,
            "valid_from": seconds_text(since), "valid_to": None if until is None else seconds_text(until),
            "op": op, "closed_by_delete": by_delete, "row_count": count,
        }
        self._history.write(_encode(record) + "\n")

    def current_rows(self) -> Iterator[dict[str, Any]]:
        for table in sorted(self.live):
            for identity in sorted(self.live[table]):
                image, _, _, count = self.live[table][identity]
                for _ in range(count):
                    yield {"database": table[0], "table": table[1], "key": self.keys[table][identity], "image": image}

    def finish(self) -> None:
        """The open versions, and lake_current.jsonl."""
        for table in sorted(self.live):
            for identity in sorted(self.live[table]):
                image, since, op, count = self.live[table][identity]
                self._write(table, self.keys[table][identity], image, since, None, op, False, count)
        self._history.close()
        with (self.dir / "lake_current.jsonl").open("w", encoding="utf-8", newline="\n") as out:
            for row in self.current_rows():
                out.write(_encode(row) + "\n")


class GapScenario:
    """Drives SCENARIO for one Debezium encoder: which events it delivers, when its snapshots run
    (their reads taken from the workload's live rows), and what the lake can know (`view`, only in
    the process that writes the truth). `embedded`: the (database, table) pairs the embedded
    engine reads, without binlog positions."""

    def __init__(self, workload: Workload, encoder: Any, view: LakeView | None,
                 embedded: set[tuple[str, str]]) -> None:
        self.wl = workload
        self.encoder = encoder
        self.embedded = embedded
        self.sink = encoder.sink
        self.view = view
        self.done: set[str] = set()
        self.runs: list[dict[str, Any]] = []
        self.not_rebaselined: list[str] = []

    def deliver(self, event: Any) -> None:
        """Encode a transaction or DDL (lost while the sink is dropping) and tell the view."""
        if isinstance(event, Transaction):
            self.encoder.transaction(event)
            if self.view is not None and not self.sink.dropping:
                for ev in event.events:
                    for ch in ev.changes:
                        self.view.change(ch, ev.table, event.commit_s)
        elif isinstance(event, DdlEvent):
            self.encoder.ddl(event)
            if self.view is not None and not self.sink.dropping and event.kind in ("TRUNCATE", "ERASE"):
                self.view.reset(event.table, event.commit_s)

    def after(self, progress: float) -> None:
        """The scenario's steps that the workload's progress (share of its changes) has reached."""
        if "gap" not in self.done and progress >= SCENARIO.gap_start:
            self.done.add("gap")
            self.sink.dropping = True
        if "restart" not in self.done and progress >= SCENARIO.restart:
            self.done.add("restart")
            self._run("restart", style=2, partial=True)
        if "resnapshot" not in self.done and progress >= SCENARIO.resnapshot:
            self.done.add("resnapshot")
            self._run("resnapshot", style=2, partial=False)
            self.sink.dropping = False
        if "partial" not in self.done and progress >= SCENARIO.partial:
            self.done.add("partial")
            self._run("partial", style=1, partial=True, tables=PARTIAL_TABLES)

    def _reads(self, embedded: bool, only: tuple[str, ...] | None = None) -> list[list[Read]]:
        """Per table (in the workload's order) the live rows as a SELECT reads them now: rows
        written before an ALTER TABLE carry the added column's DEFAULT."""
        tables = []
        for st in self.wl.tables:
            tv = st.version
            if ((tv.database, tv.table) in self.embedded) != embedded or not st.live:
                continue
            if only is not None and tv.qualified not in only:
                continue
            rows = []
            for key in sorted(st.live):
                image = st.live[key].image
                if image.version is not tv:
                    image = Image(tv, image.values + tuple(c.default for c in tv.columns[len(image.values):]))
                canon = image.canon()
                key_canon = {name: canon[name] for name in tv.pk_names}
                rows.append(Read(tv, image, key_canon, key_hash(tv.qualified, "|".join(key_canon.values())),
                                 not tv.pk_names))  # type: ignore[arg-type]
            tables.append(rows)
        return tables

    def _run(self, name: str, style: int, partial: bool, tables: tuple[str, ...] | None = None) -> None:
        """One snapshot of `tables` (default every table; for the whole re-snapshot, the embedded
        engine's tables in one of their own)."""
        wl, dropping = self.wl, self.sink.dropping
        self.sink.dropping = False
        runs = [(self._reads(False, tables), f"mysql-bin.{wl.file_no:06d}", wl.pos)]
        if not partial:
            runs.append((self._reads(True), "", 0))
        placed_tables: set[str] = set()
        for tables, file, pos in runs:
            if not tables:
                continue
            # a partial run reads its first table and half of the next, then stops
            stop = len(tables[0]) + len(tables[1]) // 2 if partial and len(tables) > 1 else None
            reads = mark(tables, style, stop)
            ended = reads[-1].marker == LAST
            if style == 2:
                complete = {r.table.qualified for r in reads if r.marker in (LAST_IN_TABLE, LAST)}
            else:
                complete = {r.table.qualified for r in reads} if ended else set()
            run = Snapshot(file, pos, wl.now, reads, complete)
            if name == "resnapshot" and len(reads) > 1:
                # its last records land in the next batch: the end of a snapshot after its first rows
                half = len(reads) // 2
                self.encoder.snapshot(Snapshot(file, pos, wl.now, reads[:half]))
                self.sink.set_batch(self.sink.batch + 1)
                self.encoder.snapshot(Snapshot(file, pos, wl.now, reads[half:]))
            else:
                self.encoder.snapshot(run)
            if self.view is not None:
                self.view.snapshot(run)
            if run.placed:
                placed_tables |= complete
            self.runs.append({
                "name": name, "file": file, "pos": pos, "time": seconds_text(wl.now), "reads": len(reads),
                "tables": sorted({r.table.qualified for r in reads}), "complete_tables": sorted(complete),
                "placed": run.placed,
            })
        if name == "resnapshot":
            self.not_rebaselined = sorted(
                st.version.qualified for st in wl.tables if st.version.qualified not in placed_tables
            )
        self.sink.dropping = dropping
