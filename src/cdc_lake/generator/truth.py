"""Ground-truth files under DIR/truth/ (see docs/generator.md for the rules they follow)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from cdc_lake.generator.jsontext import dumps as _encode
from cdc_lake.generator.model import DdlEvent, HBaseChange, RowChange, RowsEvent, TableVersion, Transaction
from cdc_lake.generator.mysql_types import DAY_SECONDS, date_text


def seconds_text(epoch_s: int) -> str:
    """`yyyy-MM-dd HH:mm:ss` (UTC) of an epoch second."""
    days, sod = divmod(epoch_s, DAY_SECONDS)
    h, rem = divmod(sod, 3600)
    m, s = divmod(rem, 60)
    return f"{date_text(days)} {h:02d}:{m:02d}:{s:02d}"


class TruthWriter:
    """Streams changes.jsonl, history.jsonl and ddl.jsonl; current.jsonl is written at the end."""

    def __init__(self, truth_dir: Path) -> None:
        truth_dir.mkdir(parents=True, exist_ok=True)
        self.dir = truth_dir
        self._changes: IO[str] = (truth_dir / "changes.jsonl").open("w", encoding="utf-8", newline="\n")
        self._history: IO[str] = (truth_dir / "history.jsonl").open("w", encoding="utf-8", newline="\n")
        self._ddl: IO[str] = (truth_dir / "ddl.jsonl").open("w", encoding="utf-8", newline="\n")
        self._times: dict[int, str] = {}
        self.counts: dict[str, int] = {"changes": 0, "versions": 0, "ddl": 0, "current": 0}

    def _time(self, epoch_s: int) -> str:
        text = self._times.get(epoch_s)
        if text is None:
            if len(self._times) > 100_000:
                self._times.clear()
            text = self._times[epoch_s] = seconds_text(epoch_s)
        return text

    def change(self, change: RowChange, tv: TableVersion, tx: Transaction, ev: RowsEvent) -> None:
        for ch in change.truth_halves():
            self._change(ch, tv, tx, ev)

    def _change(self, ch: RowChange, tv: TableVersion, tx: Transaction, ev: RowsEvent) -> None:
        self.counts["changes"] += 1
        record = {
            "seq": ch.seq,
            "database": tv.database,
            "table": tv.table,
            "op": ch.op,
            "key": ch.key_canon,
            "before": None if ch.before is None else ch.before.canon(),
            "after": None if ch.after is None else ch.after.canon(),
            "commit_time": self._time(tx.commit_s),
            "gtid": tx.gtid,
            "binlog_file": tx.file,
            "binlog_pos": ev.pos,
            "binlog_end_pos": ev.end_pos,
            "row": ch.row,
            "event_id": ev.event_id,
        }
        self._changes.write(_encode(record) + "\n")

    def hbase_change(self, ch: HBaseChange) -> None:
        self.counts["changes"] += 1
        record = {
            "seq": ch.seq,
            "database": ch.namespace,
            "table": ch.table,
            "op": ch.op,
            "key": {"ROW": ch.row},
            "before": None if ch.before is None else {"ROW": ch.row, **ch.before},
            "after": None if ch.after is None else {"ROW": ch.row, **ch.after},
            "commit_time": self._time(ch.commit_s),
            "gtid": None,
            "binlog_file": None,
            "binlog_pos": None,
            "binlog_end_pos": None,
            "row": 0,
            "event_id": None,
        }
        self._changes.write(_encode(record) + "\n")

    def ddl(self, ddl: DdlEvent) -> None:
        self.counts["ddl"] += 1
        record = {
            "seq": ddl.seq,
            "database": ddl.table.database,
            "table": ddl.table.table,
            "kind": ddl.kind,
            "sql": ddl.sql,
            "commit_time": self._time(ddl.commit_s),
            "gtid": ddl.gtid,
            "binlog_file": ddl.file,
            "binlog_pos": ddl.pos,
            "binlog_end_pos": ddl.end_pos,
            "formats": ["debezium", "canal_flat", "tencent_dts"],
        }
        self._ddl.write(_encode(record) + "\n")

    def version(
        self,
        database: str,
        table: str,
        key: dict[str, str],
        image: dict[str, str | None],
        valid_from: int,
        valid_to: int | None,
        op: str,
        closed_by_delete: bool,
        row_count: int = 1,
    ) -> None:
        """One history version. `row_count`: how many identical rows the version stands for (a
        keyless table's; 1 for a keyed row)."""
        self.counts["versions"] += 1
        record = {
            "database": database,
            "table": table,
            "key": key,
            "image": image,
            "valid_from": self._time(valid_from),
            "valid_to": None if valid_to is None else self._time(valid_to),
            "op": op,
            "closed_by_delete": closed_by_delete,
            "row_count": row_count,
        }
        self._history.write(_encode(record) + "\n")

    def write_current(self, rows: Iterable[tuple[str, str, dict[str, str], dict[str, str | None]]]) -> None:
        with (self.dir / "current.jsonl").open("w", encoding="utf-8", newline="\n") as out:
            for database, table, key, image in rows:
                self.counts["current"] += 1
                out.write(_encode({"database": database, "table": table, "key": key, "image": image}) + "\n")

    def write_json(self, name: str, obj: Any) -> None:
        self.write_json_file(self.dir / name, obj)

    @staticmethod
    def write_json_file(path: Path, obj: Any) -> None:
        with path.open("w", encoding="utf-8", newline="\n") as out:
            json.dump(obj, out, ensure_ascii=False, indent=2)
            out.write("\n")

    def close(self) -> None:
        for handle in (self._changes, self._history, self._ddl):
            handle.close()
