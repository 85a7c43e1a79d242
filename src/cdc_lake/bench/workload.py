"""The benchmark workload: `cdc-lake generate` output split into a history and a +1 % increment.

Sizes count MySQL row changes over the whole mix. The mix spreads them evenly over the formats
that have a staging model (each format its own seed, so its own rows), which keeps 1M changes at
about 2.7 GB of Kafka JSON when all five formats are modelled (Debezium's 5.3 kB per change is
the expensive one) instead of the 14 GB of all five formats carrying every change.

Every format's stream is generated in `batch_count(changes)` landing batches: 100 up to 1M changes,
one per 10,000 changes above. The history is every batch but the last, minus every batches-th
record (held back); the increment is the last batch (new changes) plus the held-back records (late
changes to old keys, so the history of those keys must be re-sliced): +1 % new and +1 % late up to
1M, and from 1M on a fixed 20,000 changes, half new and half late, so that an incremental build
at 5M pays for the same batch as at 1M and measures the history's size alone.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cdc_lake.env import PROJECT_DIR
from cdc_lake.formats import FORMATS

MIN_BATCHES = 100
CHANGES_PER_BATCH_FROM_1M = 10_000
SIZES = {"tiny": 2_000, "small": 100_000, "100k": 100_000, "1m": 1_000_000, "5m": 5_000_000}


def parse_size(text: str) -> int:
    """`tiny`, `small`, `1m`, `250k`, `5m` or a plain number of changes."""
    key = text.strip().lower()
    if key in SIZES:
        return SIZES[key]
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([km]?)", key)
    if not match:
        raise ValueError(f"size {text!r}: use tiny, small, 1m, 5m, 250k or a number of changes")
    number = float(match.group(1)) * {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2)]
    return int(number)


def size_label(changes: int) -> str:
    if changes >= 1_000_000 and changes % 1_000_000 == 0:
        return f"{changes // 1_000_000}m"
    if changes >= 1_000 and changes % 1_000 == 0:
        return f"{changes // 1_000}k"
    return str(changes)


def batch_count(changes: int) -> int:
    """Landing batches of a workload of this many changes: the last one is the increment's new half,
    and every batches-th record of the others its late half."""
    return max(MIN_BATCHES, changes // CHANGES_PER_BATCH_FROM_1M)


def modelled_formats() -> list[str]:
    """Formats whose base staging model exists in this checkout (the others cannot be built)."""
    staging = PROJECT_DIR / "models" / "staging"
    return [f for f in FORMATS if (staging / f / "base" / f"base_{f}__messages.sql").exists()]


@dataclass
class FormatWorkload:
    fmt: str
    seed: int
    changes: int
    history_file: str
    increment_file: str
    history_records: int = 0
    increment_records: int = 0
    late_records: int = 0
    history_bytes: int = 0
    increment_bytes: int = 0
    truth: dict = field(default_factory=dict)


@dataclass
class Workload:
    changes: int
    formats: list[FormatWorkload]
    seconds: float = 0.0

    @property
    def batches(self) -> int:
        return batch_count(self.changes)

    @property
    def history_records(self) -> int:
        return sum(f.history_records for f in self.formats)

    @property
    def increment_records(self) -> int:
        return sum(f.increment_records for f in self.formats)

    @property
    def history_bytes(self) -> int:
        return sum(f.history_bytes for f in self.formats)

    def truth_total(self, key: str) -> int:
        return sum(int(f.truth.get(key, 0)) for f in self.formats)

    def as_dict(self) -> dict:
        return {
            "changes": self.changes, "batches": self.batches, "seconds": self.seconds,
            "formats": [asdict(f) for f in self.formats],
        }  # fmt: skip


def _split(fmt: str, folder: Path, target: FormatWorkload, count: int) -> None:
    """Write the history and increment files of one format from its `count` batch files, then drop
    those."""
    batch_files = sorted(folder.glob(f"{fmt}-*.jsonl"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    if len(batch_files) != count:
        raise RuntimeError(f"{folder}: expected {count} batch files of {fmt}, found {len(batch_files)}")
    history_path, increment_path = Path(target.history_file), Path(target.increment_file)
    line_no = 0
    # binary: values may hold U+2028 and friends; lines end at \n only
    with history_path.open("wb") as history, increment_path.open("wb") as increment:
        for batch_file in batch_files[:-1]:
            with batch_file.open("rb") as handle:
                for line in handle:
                    line_no += 1
                    if line_no % count == count // 2:
                        increment.write(line)
                        target.late_records += 1
                    else:
                        history.write(line)
                        target.history_records += 1
        with batch_files[-1].open("rb") as handle:
            for line in handle:
                increment.write(line)
                target.increment_records += 1
    target.increment_records += target.late_records
    target.history_bytes = history_path.stat().st_size
    target.increment_bytes = increment_path.stat().st_size
    for batch_file in batch_files:
        batch_file.unlink()


def _truth_counts(fmt: str, truth: Path) -> dict[str, int]:
    """Changes, versions and live rows of the tables the format carries (tables.json: only Lindorm
    carries the HBase table, and the tables emptied by TRUNCATE / DROP TABLE only the formats that
    carry DDL)."""
    tables = json.loads((truth / "tables.json").read_text())["tables"]
    # every truth line names its table within its first ~100 bytes, as `"database":…,"table":…`
    elsewhere = [
        json.dumps({"database": t["database"], "table": t["table"]}, separators=(",", ":"))[1:-1].encode()
        for t in tables
        if fmt not in t["formats"]
    ]

    def carried(line: bytes) -> bool:
        head = line[:120]
        return not any(name in head for name in elsewhere)

    counts = {}
    for name, file in (("changes", "changes.jsonl"), ("versions", "history.jsonl"), ("current", "current.jsonl")):
        with (truth / file).open("rb") as handle:
            counts[name] = sum(1 for line in handle if carried(line))
    return counts


def _generate_one(target: FormatWorkload, folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "cdc_lake.cli", "generate", "--quiet",
        "--seed", str(target.seed), "--changes", str(target.changes), "--formats", target.fmt,
        "--batches", str(count), "--out", str(folder),
    ]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    target.truth = _truth_counts(target.fmt, folder / "truth")
    _split(target.fmt, folder, target, count)
    shutil.rmtree(folder / "truth")  # 1.1 kB per change; the counts above are what the bench uses


def prepare(changes: int, work_dir: Path, formats: list[str] | None = None, seed: int = 1, jobs: int = 2) -> Workload:
    """Generate the mix (or reuse a complete earlier one in `work_dir`) and split it."""
    formats = formats or modelled_formats()
    if not formats:
        raise RuntimeError("no format has a staging model to benchmark")
    work_dir.mkdir(parents=True, exist_ok=True)
    manifest = work_dir / "workload.json"
    if manifest.exists():
        saved = json.loads(manifest.read_text())
        same = saved.get("batches", MIN_BATCHES) == batch_count(changes) and saved["changes"] == changes
        if same and [f["fmt"] for f in saved["formats"]] == formats:
            loaded = Workload(changes, [FormatWorkload(**f) for f in saved["formats"]], saved["seconds"])
            if all(Path(f.history_file).exists() and Path(f.increment_file).exists() for f in loaded.formats):
                return loaded
    share, extra = divmod(changes, len(formats))
    targets = [
        FormatWorkload(
            fmt=fmt,
            seed=seed * 1000 + FORMATS.index(fmt),
            changes=share + (1 if i < extra else 0),
            history_file=str(work_dir / f"{fmt}.history.jsonl"),
            increment_file=str(work_dir / f"{fmt}.increment.jsonl"),
        )
        for i, fmt in enumerate(formats)
    ]
    started = time.monotonic()
    count = batch_count(changes)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(lambda t: _generate_one(t, work_dir / f"gen_{t.fmt}", count), targets))
    for target in targets:
        shutil.rmtree(work_dir / f"gen_{target.fmt}", ignore_errors=True)
    workload = Workload(changes, targets, time.monotonic() - started)
    manifest.write_text(json.dumps(workload.as_dict(), indent=1))
    return workload


def remove(work_dir: Path) -> None:
    """Delete a workload's files (they are large)."""
    for path in work_dir.glob("*.jsonl"):
        path.unlink()
    (work_dir / "workload.json").unlink(missing_ok=True)
