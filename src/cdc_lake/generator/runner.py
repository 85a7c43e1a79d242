"""`generate()`: run the workload once and feed every event to the five encoders and the truth writer."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from cdc_lake.generator import tables as T
from cdc_lake.generator.encoders import ENCODERS, Encoder
from cdc_lake.generator.encoders.base import PARTITIONS
from cdc_lake.generator.kafka import KINDS, Faults, RecordSink
from cdc_lake.generator.model import DdlEvent, HBaseChange, Transaction
from cdc_lake.generator.truth import TruthWriter
from cdc_lake.generator.workload import Workload
from cdc_lake.landing import FORMATS

PROGRESS_EVERY = 100_000

# Per format: what it carries, for tests and docs (docs/generator.md explains each entry).
FORMAT_NOTES: dict[str, dict[str, Any]] = {
    "kafka_river_canal": {
        "tables": "mysql",
        "ddl": False,
        "position": "binlog event start (pos@file)",
        "gtid": False,
        "exceptions": [],
    },
    "debezium": {
        "tables": "mysql",
        "ddl": True,
        "position": "source.file/pos/row",
        "gtid": True,
        "exceptions": [
            {
                "types": ["json"],
                "rule": "compact JSON text (no space after ':' and ','); compare parsed JSON",
            },
        ],
    },
    "canal_flat": {
        "tables": "mysql",
        "ddl": True,
        "position": None,
        "gtid": False,
        "exceptions": [],
    },
    "tencent_dts": {
        "tables": "mysql",
        "ddl": True,
        "position": "rows event end position (endPos@fileNo)",
        "gtid": True,
        "exceptions": [],
    },
    "lindorm": {
        "tables": "mysql+hbase",
        "ddl": False,
        "position": None,
        "gtid": False,
        "exceptions": [],
    },
}


@dataclass
class Options:
    seed: int
    changes: int
    out: Path
    duplicates: float = 0.0
    out_of_order: bool = False
    malformed: float = 0.0
    batches: int = 1
    formats: tuple[str, ...] = FORMATS  # which formats to write (the truth is always complete)

    def validate(self) -> None:
        if self.changes < 1:
            raise ValueError("--changes must be at least 1")
        if self.batches < 1:
            raise ValueError("--batches must be at least 1")
        for name in ("duplicates", "malformed"):
            rate = getattr(self, name)
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"--{name} must be a rate between 0 and 1")
        unknown = [f for f in self.formats if f not in FORMATS]
        if unknown or not self.formats:
            raise ValueError(
                f"--formats: choose from {', '.join(FORMATS)} (got {', '.join(unknown) or 'none'})"
            )


def _clean(out: Path) -> None:
    """Remove what an earlier run wrote, so that stale batch files never mix with new ones."""
    for fmt in FORMATS:
        for path in (*out.glob(f"{fmt}.jsonl"), *out.glob(f"{fmt}-*.jsonl")):
            path.unlink()
    truth = out / "truth"
    if truth.is_dir():
        for path in truth.iterdir():
            if path.suffix in (".jsonl", ".json"):
                path.unlink()


def _tables_description(wl: Workload, formats: tuple[str, ...]) -> dict[str, Any]:
    tables = []
    for st in wl.tables:
        tv = st.version
        first = st.spec.version
        tables.append(
            {
                "database": tv.database,
                "table": tv.table,
                "primary_key": list(tv.pk_names),
                "columns": [
                    {
                        "name": c.name,
                        "mysql_type": c.type.mysql_type,
                        "nullable": c.nullable,
                        "added_by_ddl": c.name not in first.names,
                    }
                    for c in tv.columns
                ],
                "formats": list(FORMATS),
            }
        )
    tables.append(
        {
            "database": T.HBASE_NAMESPACE,
            "table": T.HBASE_TABLE,
            "primary_key": ["ROW"],
            "columns": [
                {"name": q, "mysql_type": None, "nullable": q != "ROW", "added_by_ddl": False}
                for q in ("ROW", *T.HBASE_QUALIFIERS)
            ],
            "formats": ["lindorm"],
        }
    )
    return {"tables": tables, "formats": FORMAT_NOTES}


def generate(opts: Options, progress: IO[str] | None = None) -> dict[str, Any]:
    """Write DIR/<format>[-<batch>].jsonl and DIR/truth/*; return the summary (also in truth/summary.json)."""
    opts.validate()
    started = time.monotonic()
    out = opts.out
    out.mkdir(parents=True, exist_ok=True)
    _clean(out)
    truth = TruthWriter(out / "truth")
    fault_files = {
        name: (out / "truth" / file_name).open("w", encoding="utf-8", newline="\n")
        for name, file_name in (("malformed", "malformed.jsonl"), ("duplicate", "duplicates.jsonl"))
    }

    def fault_log(name: str, record: dict[str, Any]) -> None:
        fault_files[name].write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")

    faults = Faults(opts.duplicates, opts.out_of_order, opts.malformed)
    sinks: dict[str, RecordSink] = {}
    encoders: list[Encoder] = []
    for fmt in (f for f in FORMATS if f in opts.formats):
        cls = ENCODERS[fmt]
        sink = RecordSink(fmt, out, opts.batches, faults, opts.seed, cls.malform, fault_log)
        sinks[fmt] = sink
        encoders.append(cls(sink, opts.seed))

    wl = Workload(opts.seed, opts.changes, truth)
    batch = 0
    next_report = PROGRESS_EVERY
    for event in wl.events():
        done = wl.mysql_changes
        new_batch = min(opts.batches - 1, max(0, done - 1) * opts.batches // opts.changes)
        if new_batch != batch:
            batch = new_batch
            for sink in sinks.values():
                sink.set_batch(batch)
        if isinstance(event, Transaction):
            for enc in encoders:
                enc.transaction(event)
        elif isinstance(event, DdlEvent):
            for enc in encoders:
                enc.ddl(event)
        elif isinstance(event, HBaseChange):
            for enc in encoders:
                enc.hbase(event)
        if progress is not None and done >= next_report:
            rate = done / max(time.monotonic() - started, 1e-9)
            print(f"  ... {done:,} changes ({rate:,.0f}/s)", file=progress, flush=True)
            next_report += PROGRESS_EVERY
    wl.finish()
    truth.write_current(wl.current_rows())
    for enc in encoders:
        enc.finish()
    for sink in sinks.values():
        sink.close()
    for handle in fault_files.values():
        handle.close()
    truth.close()
    seconds = time.monotonic() - started

    formats: dict[str, Any] = {}
    for enc in encoders:
        sink = sinks[enc.fmt]
        by_kind = dict.fromkeys(KINDS, 0)
        for per_tp in sink.counts.values():
            for kind, n in per_tp.items():
                by_kind[kind] += n
        formats[enc.fmt] = {
            "files": [Path(h.name).name for h in sink.files],
            "records": sum(by_kind.values()),
            "row_changes": enc.rows,
            "by_kind": by_kind,
            "by_topic_partition": dict(sorted(sink.counts.items())),
        }
    summary = {
        "options": {k: list(v) if k == "formats" else v for k, v in asdict(opts).items() if k != "out"},
        "partitions": PARTITIONS,
        "changes": {"mysql": wl.mysql_changes, "all": wl.seq, "lindorm_hbase": wl.seq - wl.mysql_changes},
        "transactions": wl.gtid_no - wl.ddl_count,
        "ddl": wl.ddl_count,
        "binlog_files": wl.file_no,
        "truth": dict(truth.counts),
        "formats": formats,
        "seconds": round(seconds, 3),
    }
    truth.write_json("tables.json", _tables_description(wl, opts.formats))
    # seconds vary from run to run: keep them out of the files so that output stays byte-identical
    truth.write_json("summary.json", {k: v for k, v in summary.items() if k != "seconds"})
    return summary
