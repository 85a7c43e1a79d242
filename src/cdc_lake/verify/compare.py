"""Compare one source table with the lake: counts and checksums first, then bisection over buckets
of the key's hash until the differing rows are few enough to pull from both sides and compare.

A table that is equal costs one aggregate scan on each side (run at the same time). A difference
costs one more scan per level of bisection (each level splits a bucket 256 ways) and one scan that
pulls the rows of the differing buckets; the rows decide, never the checksums alone.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from cdc_lake.verify.lake import LakeSide
from cdc_lake.verify.source import Source, SourceTable
from cdc_lake.verify.sql import BUCKET_HEX_DIGITS, Column

# bisection stops once the differing buckets hold at most this many rows (per side)...
PULL_ROWS = 20_000
# ...or most buckets of a level differ (splitting further narrows nothing); rows beyond this many
# are not pulled, and the count of differing keys becomes a lower bound
MAX_PULL_ROWS = 200_000
HEX_PER_LEVEL = 2
SAMPLES = 5

EQUAL = "equal"
DIFFERENT = "different"
IN_FLIGHT = "in_flight"


@dataclass
class Difference:
    """One key (or, in a keyless table, one row) that is not the same on both sides."""

    key: str
    kind: str  # missing_in_lake | only_in_lake | values_differ
    columns: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind,
                "columns": {c: {"source": s, "lake": k} for c, (s, k) in self.columns.items()}}


@dataclass
class TableResult:
    source_system: str
    database: str
    table: str
    keyless: bool
    # what the user calls the table (PostgreSQL: schema.table), when not `table`
    title: str = ""
    source_rows: int = 0
    lake_rows: int = 0
    differing_keys: int = 0
    # the count is a lower bound: more rows differed than were pulled
    at_least: bool = False
    differences: list[Difference] = field(default_factory=list)
    source_position: str = ""
    lake_position: str = ""
    in_flight: int | None = None
    seconds: float = 0.0
    scans: int = 0
    # for a `different` table: whether a complete snapshot of it would repair the lake, and why
    repair: str = ""

    @property
    def label(self) -> str:
        return self.title or self.table

    @property
    def status(self) -> str:
        if not self.differing_keys:
            return EQUAL
        return IN_FLIGHT if self.in_flight else DIFFERENT

    def samples_json(self) -> list[dict[str, Any]]:
        return [d.as_json() for d in self.differences[:SAMPLES]]

    def as_json(self) -> dict[str, Any]:
        return {
            "source_system": self.source_system, "database": self.database, "table": self.table,
            "status": self.status, "keyless": self.keyless, "source_rows": self.source_rows,
            "lake_rows": self.lake_rows, "differing_keys": self.differing_keys, "at_least": self.at_least,
            "samples": self.samples_json(), "source_position": self.source_position,
            "lake_position": self.lake_position, "changes_in_flight": self.in_flight,
            "repair": self.repair or None, "scans_per_side": self.scans, "seconds": round(self.seconds, 3),
        }


def same_value(column: Column, source: str | None, lake: str | None) -> bool:
    """Texts equal, or for a float/double the same number (the two printers may differ)."""
    if source == lake:
        return True
    if source is None or lake is None or not column.is_number:
        return False
    try:
        return float(source) == float(lake)
    except ValueError:
        return False


def key_text(table: SourceTable, row: tuple[str | None, ...]) -> str:
    if table.keyless:
        shown = [f"{c.name}={_short(v)}" for c, v in zip(table.columns, row, strict=True)]
        return "row(" + ", ".join(shown[:6]) + (", ..." if len(shown) > 6 else "") + ")"
    index = {c.name: i for i, c in enumerate(table.columns)}
    return ", ".join(f"{c.name}={_short(row[index[c.name]])}" for c in table.key)


def _short(value: str | None, limit: int = 40) -> str:
    if value is None:
        return "NULL"
    return value if len(value) <= limit else f"{value[:limit]}...({len(value)} chars)"


def compare_rows(table: SourceTable, source: list[tuple], lake: list[tuple]) -> list[Difference]:
    """The differences between two sets of pulled rows, by key (a multiset without one)."""
    differences: list[Difference] = []
    if table.keyless:
        def comparable(row: tuple) -> tuple:
            return tuple(_number(v) if c.is_number else v for c, v in zip(table.columns, row, strict=True))

        by_form = {comparable(r): r for r in [*lake, *source]}
        source_count, lake_count = Counter(map(comparable, source)), Counter(map(comparable, lake))
        for form, n in (source_count - lake_count).items():
            differences += [Difference(key_text(table, by_form[form]), "missing_in_lake")] * n
        for form, n in (lake_count - source_count).items():
            differences += [Difference(key_text(table, by_form[form]), "only_in_lake")] * n
        return sorted(differences, key=lambda d: (d.kind, d.key))
    positions = [table.columns.index(c) for c in table.key]

    def by_key(rows: list[tuple]) -> dict[tuple, tuple]:
        return {tuple(r[i] for i in positions): r for r in rows}

    source_rows, lake_rows = by_key(source), by_key(lake)
    for key in sorted(source_rows.keys() | lake_rows.keys(), key=natural_order):
        s, k = source_rows.get(key), lake_rows.get(key)
        if k is None:
            differences.append(Difference(key_text(table, s), "missing_in_lake"))
        elif s is None:
            differences.append(Difference(key_text(table, k), "only_in_lake"))
        else:
            columns = {
                c.name: (a, b) for c, a, b in zip(table.columns, s, k, strict=True) if not same_value(c, a, b)
            }
            if columns:
                differences.append(Difference(key_text(table, s), "values_differ", columns))
    return differences


def natural_order(key: tuple[str | None, ...]) -> tuple:
    """Keys in the order a reader expects: numbers by value (`id=9` before `id=10`), then texts."""
    return tuple((0, int(v), "") if v is not None and v.lstrip("-").isdigit() else (1, 0, v or "") for v in key)


def _number(value: str | None) -> float | str | None:
    try:
        return None if value is None else float(value)
    except ValueError:
        return value


class Verifier:
    """Runs each query on the source (in a worker thread) and on the lake at the same time."""

    def __init__(self, source: Source, lake: LakeSide) -> None:
        self.source = source
        self.lake = lake
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verify-source")

    def both(self, method: str, *args: Any) -> tuple[Any, Any]:
        on_source = self.pool.submit(getattr(self.source, method), *args)
        on_lake = getattr(self.lake, method)(*args)
        return on_source.result(), on_lake

    def compare(self, table: SourceTable) -> TableResult:
        started = time.monotonic()
        result = TableResult(self.lake.source_system, table.database or self.lake.database, table.name,
                             table.keyless, title=table.title)
        try:
            width, differing, source, lake = self._bisect(table, result)
            self._pull(table, result, width, differing, source, lake)
        finally:
            self.lake.release()
        result.seconds = time.monotonic() - started
        return result

    def _bisect(self, table: SourceTable, result: TableResult) -> tuple[int, list[str], dict, dict]:
        """Count and checksum the whole table, then split the differing buckets until they are
        small enough to pull. Returns the last level's width, differing buckets and both sides'."""
        width = 0
        source, lake = self.both("buckets", table, 0, 0, [])
        result.scans = 1
        result.source_rows, result.lake_rows = source.get("", (0, 0))[0], lake.get("", (0, 0))[0]
        differing = sorted(b for b in source.keys() | lake.keys() if source.get(b) != lake.get(b))
        while differing:
            rows = sum(max(source.get(b, (0, 0))[0], lake.get(b, (0, 0))[0]) for b in differing)
            level_buckets = len(source.keys() | lake.keys())
            if rows <= PULL_ROWS or width >= BUCKET_HEX_DIGITS or (width > 0 and len(differing) * 2 > level_buckets):
                break
            source, lake = self.both("buckets", table, width + HEX_PER_LEVEL, width, differing)
            width += HEX_PER_LEVEL
            result.scans += 1
            differing = sorted(b for b in source.keys() | lake.keys() if source.get(b) != lake.get(b))
        return width, differing, source, lake

    def _pull(self, table: SourceTable, result: TableResult, width: int, differing: list[str],
              source: dict[str, tuple[int, int]], lake: dict[str, tuple[int, int]]) -> None:
        """Pull the rows of the differing buckets (as many as MAX_PULL_ROWS allows) and compare them."""
        if differing:
            pulled, budget = [], MAX_PULL_ROWS
            for bucket in differing:
                size = max(source.get(bucket, (0, 0))[0], lake.get(bucket, (0, 0))[0])
                if pulled and size > budget:
                    result.at_least = True
                    break
                pulled.append(bucket)
                budget -= size
            source_rows, lake_rows = self.both("rows", table, width, pulled)
            result.scans += 1
            result.differences = compare_rows(table, source_rows, lake_rows)
            result.differing_keys = len(result.differences)

    def close(self) -> None:
        self.pool.shutdown()


def verify_tables(source: Source, lake: LakeSide, tables: list[str]) -> list[TableResult]:
    """Every table at the source's one snapshot; positions added to the tables that differ."""
    source.begin_snapshot()
    verifier = Verifier(source, lake)
    described = []
    try:
        for name in tables:
            described.append(source.describe(name))
        results = [verifier.compare(t) for t in described]
    finally:
        verifier.close()
    lake_text = lake.last_position(source.lake_order)
    source_text = source.snapshot_text()
    in_flight = None
    if lake_text and any(r.differing_keys for r in results):
        in_flight = source.changes_after(lake_text, described)
    for r in results:
        r.source_position, r.lake_position = source_text, lake_text
        if in_flight is not None:
            r.in_flight = in_flight.get(r.label, 0)
    for r, table in zip(results, described, strict=True):
        if r.status == DIFFERENT:
            r.repair = snapshot_repair(source, lake.formats(table))
    return results


def snapshot_repair(source: Source, formats: list[str]) -> str:
    """What a complete snapshot of a `different` table would do (docs/snapshots.md): repair it
    when the lake's format marks where a snapshot ends and the source's position places it."""
    from cdc_lake.formats import formats_carrying

    if not source.snapshots_rebaseline:
        return ("no snapshot repairs it yet: PostgreSQL's snapshot reads carry no commit LSN, so the lake "
                "cannot place them against the stream (docs/snapshots.md)")
    if not set(formats) & set(formats_carrying("snapshot_markers")):
        return (f"a snapshot would re-read its rows but close none: {', '.join(formats) or 'its format'} marks no "
                "snapshot's end (docs/snapshots.md)")
    return ("a complete snapshot of the table repairs it: the keys only in the lake end at its position, the "
            "others are read again (a Debezium blocking snapshot signal, or snapshot.mode=when_needed once the "
            "offsets are gone: docs/snapshots.md)")
