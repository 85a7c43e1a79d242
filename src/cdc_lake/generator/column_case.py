"""Column names spelled in mixed case (generator option `mixed_case_columns`): MySQL compares
column names case-insensitively, so producers may spell `name` as `Name` or `NAME`. A transaction's
changes of the listed tables reach the encoders with every column name spelled one of three ways,
by the transaction's GTID number: as declared, first letter upper-case, all upper-case. The truth
keeps the declared (lower-case) names: a lake that folds the names' case must equal it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from cdc_lake.generator.model import Image, RowChange, RowsEvent, TableVersion, Transaction

SPELLINGS: tuple[Callable[[str], str], ...] = (
    lambda name: name,
    lambda name: name[:1].upper() + name[1:],
    str.upper,
)


class Respeller:
    """Rewrites transactions for the encoders; one renamed TableVersion per version and spelling, so
    the encoders' per-version caches still work."""

    def __init__(self, tables: frozenset[str]) -> None:
        self.tables = tables
        self._versions: dict[tuple[int, int], tuple[TableVersion, TableVersion]] = {}

    def _version(self, tv: TableVersion, spelling: int) -> TableVersion:
        key = (id(tv), spelling)
        if key not in self._versions:
            spell = SPELLINGS[spelling]
            renamed = TableVersion(
                tv.database,
                tv.table,
                tuple(replace(c, name=spell(c.name)) for c in tv.columns),
                tuple(spell(n) for n in tv.pk_names),
                tv.version,
            )
            self._versions[key] = (tv, renamed)  # tv kept alive: its id stays its own
        return self._versions[key][1]

    def transaction(self, tx: Transaction) -> Transaction:
        spelling = tx.gtid_no % len(SPELLINGS)
        if spelling == 0 or not any(ev.table.qualified in self.tables for ev in tx.events):
            return tx
        spell = SPELLINGS[spelling]
        events = []
        for ev in tx.events:
            if ev.table.qualified not in self.tables:
                events.append(ev)
                continue
            tv = self._version(ev.table, spelling)

            def image(img: Image | None, tv: TableVersion = tv) -> Image | None:
                return None if img is None else Image(tv, img.values)

            def names(canon: dict[str, str] | None) -> dict[str, str] | None:
                return None if canon is None else {spell(k): v for k, v in canon.items()}

            changes: list[RowChange] = [
                replace(
                    ch,
                    before=image(ch.before),
                    after=image(ch.after),
                    key_canon=names(ch.key_canon) or {},
                    old_key_canon=names(ch.old_key_canon),
                )
                for ch in ev.changes
            ]
            events.append(RowsEvent(tv, ev.op, changes, ev.pos, ev.end_pos, ev.event_id))
        return replace(tx, events=events)
