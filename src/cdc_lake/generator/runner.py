"""`generate()`: run the workload and feed every event to the format encoders and the truth writer.

With `jobs > 1` the formats are split over several processes. Each process replays the same seeded
workload (it is cheap next to the encoding) and writes only its formats; the first one also writes the
truth. Every format's records depend only on the seed and the options, so the files are byte-identical
whatever the number of jobs.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from cdc_lake.formats import FORMATS
from cdc_lake.generator import large
from cdc_lake.generator import tables as T
from cdc_lake.generator.column_case import Respeller
from cdc_lake.generator.encoders import ENCODERS, Encoder
from cdc_lake.generator.encoders.base import PARTITIONS
from cdc_lake.generator.encoders.debezium import EMBEDDED_ENGINE_TABLES
from cdc_lake.generator.jsontext import dumps
from cdc_lake.generator.kafka import KINDS, Faults, RecordSink
from cdc_lake.generator.model import DdlEvent, HBaseChange, Transaction
from cdc_lake.generator.snapshots import GAP_SERVER_NAME, GapScenario, LakeView
from cdc_lake.generator.truth import TruthWriter
from cdc_lake.generator.workload import Workload

PROGRESS_EVERY = 100_000

# Relative encoding cost per format, to balance --jobs.
_COST = {"debezium": 3, "tencent_dts": 3, "kafka_river_canal": 2, "lindorm": 2, "canal_flat": 2}
FAULT_LOGS = (("malformed", "malformed.jsonl"), ("duplicate", "duplicates.jsonl"))

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


# options a summary names only when given
OPTIONAL_IN_SUMMARY = (
    "large_values", "large_values_inserted", "snapshot_after_gap", "track_history_except", "mixed_case_columns",
)

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
    jobs: int = 1  # processes to spread the formats over
    # `--large-values`: size labels (generator.large) of the large-value tables, with the shapes
    large_values: tuple[str, ...] = ()
    # `--large-values-inserted`: sizes whose rows are only inserted and partly deleted (no updates,
    # so no message carries two such images): the lighter 10 MB case the integration target runs
    large_values_inserted: tuple[str, ...] = ()
    # `--snapshot-after-gap`: the Debezium stream loses records and snapshots repair it (generator.snapshots)
    snapshot_after_gap: bool = False
    # `<database>.<table>` -> columns the lake's history does not track (cdc_table_options'
    # track_history_except): the truth's history updates a version in place on their changes alone
    track_history_except: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # `<database>.<table>`s whose column names the records spell in mixed case, by transaction
    # (generator.column_case); the truth keeps the declared lower-case names
    mixed_case_columns: tuple[str, ...] = ()

    def validate(self) -> None:
        if self.changes < 1:
            raise ValueError("--changes must be at least 1")
        if self.batches < 1:
            raise ValueError("--batches must be at least 1")
        if self.jobs < 1:
            raise ValueError("--jobs must be at least 1")
        for name in ("duplicates", "malformed"):
            rate = getattr(self, name)
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"--{name} must be a rate between 0 and 1")
        for label in self.large_values + self.large_values_inserted:
            large.size_label(label)
        both = set(self.large_values) & set(self.large_values_inserted)
        if both:
            raise ValueError(f"--large-values and --large-values-inserted both list {', '.join(sorted(both))}")
        unknown = [f for f in self.formats if f not in FORMATS]
        if unknown or not self.formats:
            raise ValueError(f"--formats: choose from {', '.join(FORMATS)} (got {', '.join(unknown) or 'none'})")
        if self.snapshot_after_gap and self.mixed_case_columns:
            raise ValueError("mixed_case_columns does not apply to --snapshot-after-gap")
        if self.snapshot_after_gap and tuple(self.formats) != ("debezium",):
            raise ValueError("--snapshot-after-gap writes Debezium's records only: give --formats debezium")


def _clean(out: Path) -> None:
    """Remove what an earlier run wrote, so that stale batch files never mix with new ones."""
    for fmt in FORMATS:
        for path in (*out.glob(f"{fmt}.jsonl"), *out.glob(f"{fmt}-*.jsonl")):
            path.unlink()
    truth = out / "truth"
    if truth.is_dir():
        for path in truth.iterdir():
            if path.suffix in (".jsonl", ".json", ".part"):
                path.unlink()


def _tables_description(wl: Workload, formats: tuple[str, ...]) -> dict[str, Any]:
    tables = []
    for st in wl.all_tables:
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
                "formats": [f for f in FORMATS if f in formats and (FORMAT_NOTES[f]["ddl"] or not st.spec.resets)],
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
            "formats": [f for f in ("lindorm",) if f in formats],
        }
    )
    return {"tables": tables, "formats": {f: n for f, n in FORMAT_NOTES.items() if f in formats}}


class _NoTruth:
    """Truth sink of the helper processes: the first process writes the truth."""

    def change(self, *args: Any) -> None:
        pass

    def hbase_change(self, *args: Any) -> None:
        pass

    def ddl(self, *args: Any) -> None:
        pass

    def version(self, *args: Any) -> None:
        pass


def _without_tables(tx: Transaction, tables: frozenset[str]) -> Transaction | None:
    """The transaction as a format sees it that does not carry `tables` (None if nothing is left)."""
    events = [ev for ev in tx.events if ev.table.qualified not in tables]
    if len(events) == len(tx.events):
        return tx
    return replace(tx, events=events) if events else None


def _part_path(out: Path, log: str, fmt: str) -> Path:
    return out / "truth" / f"{log}.{fmt}.part"


def _produce(opts: Options, formats: tuple[str, ...], with_truth: bool, report: bool) -> dict[str, Any]:
    """Run the whole workload once; write the records of `formats` (and the truth if asked)."""
    started = time.monotonic()
    out = opts.out
    truth = TruthWriter(out / "truth") if with_truth else None
    faults = Faults(opts.duplicates, opts.out_of_order, opts.malformed)
    logs = {
        (log, fmt): _part_path(out, log, fmt).open("w", encoding="utf-8", newline="\n")
        for fmt in formats
        for log, _ in FAULT_LOGS
    }
    sinks: dict[str, RecordSink] = {}
    encoders: list[Encoder] = []
    for fmt in formats:
        cls = ENCODERS[fmt]

        def fault_log(log: str, record: dict[str, Any], fmt: str = fmt) -> None:
            logs[(log, fmt)].write(dumps(record) + "\n")

        own_faults = faults if cls.resends_identical_records else replace(faults, duplicates=0.0)
        sink = RecordSink(fmt, out, opts.batches, own_faults, opts.seed, cls.malform, fault_log)
        sinks[fmt] = sink
        encoders.append(cls(sink, opts.seed))

    wl = Workload(opts.seed, opts.changes, truth if truth is not None else _NoTruth(), opts.large_values,
                  opts.track_history_except, opts.large_values_inserted)
    respeller = Respeller(frozenset(opts.mixed_case_columns)) if opts.mixed_case_columns else None
    gap = None
    if opts.snapshot_after_gap:
        [debezium] = encoders
        debezium.enum_snapshot = True  # type: ignore[attr-defined]
        debezium.server_name = GAP_SERVER_NAME  # type: ignore[attr-defined]
        gap = GapScenario(wl, debezium, LakeView(out / "truth") if truth is not None else None,
                          EMBEDDED_ENGINE_TABLES)
    batch = 0
    next_report = PROGRESS_EVERY
    for event in wl.events():
        done = wl.mysql_changes
        new_batch = min(opts.batches - 1, max(0, done - 1) * opts.batches // opts.changes)
        if new_batch != batch:
            batch = new_batch
            for sink in sinks.values():
                sink.set_batch(batch)
        if gap is not None:
            gap.deliver(event)
            gap.after(done / opts.changes)
        elif isinstance(event, Transaction):
            if respeller is not None:
                event = respeller.transaction(event)
            for enc in encoders:
                if FORMAT_NOTES[enc.fmt]["ddl"]:
                    enc.transaction(event)
                elif tx := _without_tables(event, wl.reset_tables):
                    enc.transaction(tx)
        elif isinstance(event, DdlEvent):
            for enc in encoders:
                enc.ddl(event)
        elif isinstance(event, HBaseChange):
            for enc in encoders:
                enc.hbase(event)
        if report and done >= next_report:
            rate = done / max(time.monotonic() - started, 1e-9)
            print(f"  ... {done:,} changes ({rate:,.0f}/s)", file=sys.stderr, flush=True)
            next_report += PROGRESS_EVERY
    for enc in encoders:
        enc.finish()
    for sink in sinks.values():
        sink.close()
    for handle in logs.values():
        handle.close()

    result: dict[str, Any] = {"formats": {}}
    for enc in encoders:
        sink = sinks[enc.fmt]
        by_kind = dict.fromkeys(KINDS, 0)
        for per_tp in sink.counts.values():
            for kind, n in per_tp.items():
                by_kind[kind] += n
        result["formats"][enc.fmt] = {
            "files": [Path(h.name).name for h in sink.files],
            "records": sum(by_kind.values()),
            "row_changes": enc.rows,
            "by_kind": by_kind,
            "by_topic_partition": dict(sorted(sink.counts.items())),
        }
    if truth is not None:
        wl.finish()
        truth.write_current(wl.current_rows())
        truth.close()
        truth.write_json("tables.json", _tables_description(wl, opts.formats))
        result["workload"] = {
            "changes": {"mysql": wl.mysql_changes, "all": wl.seq, "lindorm_hbase": wl.seq - wl.mysql_changes},
            "transactions": wl.gtid_no - wl.ddl_count,
            "ddl": wl.ddl_count,
            "binlog_files": wl.file_no,
            "truth": dict(truth.counts),
        }
        if gap is not None and gap.view is not None:
            gap.view.finish()
            result["workload"]["snapshots"] = {
                "lost_records": gap.sink.dropped, "runs": gap.runs, "not_rebaselined": gap.not_rebaselined,
                "closed_absent": gap.view.closed_absent,
            }
    return result


def _groups(formats: list[str], jobs: int) -> list[tuple[str, ...]]:
    """Split the formats over at most `jobs` groups of similar encoding cost (greedy, deterministic)."""
    n = min(jobs, len(formats))
    groups: list[list[str]] = [[] for _ in range(n)]
    for fmt in sorted(formats, key=lambda f: (-_COST[f], FORMATS.index(f))):
        min(groups, key=lambda g: sum(_COST[f] for f in g)).append(fmt)
    # the truth goes with the lightest group
    groups.sort(key=lambda g: sum(_COST[f] for f in g))
    return [tuple(f for f in FORMATS if f in g) for g in groups]


def generate(opts: Options, progress: bool = False) -> dict[str, Any]:
    """Write DIR/<format>[-<batch>].jsonl and DIR/truth/*; return the summary (also in truth/summary.json)."""
    opts.validate()
    started = time.monotonic()
    out = opts.out
    (out / "truth").mkdir(parents=True, exist_ok=True)
    _clean(out)
    selected = [f for f in FORMATS if f in opts.formats]
    groups = _groups(selected, opts.jobs)
    if len(groups) == 1:
        parts = [_produce(opts, groups[0], True, progress)]
    else:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        with multiprocessing.get_context(method).Pool(len(groups)) as pool:
            parts = pool.starmap(_produce, [(opts, g, i == 0, progress and i == 0) for i, g in enumerate(groups)])

    # fault logs: one file each, formats in the fixed order (not in the order processes wrote them)
    for log, file_name in FAULT_LOGS:
        with (out / "truth" / file_name).open("w", encoding="utf-8", newline="\n") as merged:
            for fmt in selected:
                part = _part_path(out, log, fmt)
                merged.write(part.read_text(encoding="utf-8"))
                part.unlink()

    formats = {fmt: info for part in parts for fmt, info in part["formats"].items()}
    # the optional ones only when given: the summary of a run without them stays as it was
    options = {
        k: list(v) if k in ("formats", "large_values", "large_values_inserted") else v
        for k, v in asdict(opts).items()
        if k not in ("out", "jobs") and (k not in OPTIONAL_IN_SUMMARY or v)
    }
    summary = {
        "options": options,
        "partitions": PARTITIONS,
        **parts[0]["workload"],
        "formats": {fmt: formats[fmt] for fmt in selected},
    }
    # The elapsed time and the job count are not written: the files stay byte-identical.
    TruthWriter.write_json_file(out / "truth" / "summary.json", summary)
    summary["seconds"] = round(time.monotonic() - started, 3)
    return summary
