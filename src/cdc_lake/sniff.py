"""Which CDC format a Kafka value looks like, from its JSON shape: checked on a sample of a dump
before Spark starts, so a dump landed under the wrong `--format` is caught in a second instead of
becoming a raw table of rejects (`unknown type: <missing>`).

The checks are shapes, not parses: the top-level fields each tool always writes (specs in
`docs/formats.md`). A value that fits no format (garbage, a test's `{"a": 1}`) looks like nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

SAMPLE_VALUES = 50
SHOWN_CHARS = 300

# Canal FlatMessage: `type` plus fields every message has (data/pkNames may be null in DDL), one
# of them Canal's own (Maxwell also writes type/database/table/data)
_CANAL_FIELDS = {"database", "table", "data", "pkNames", "es", "isDdl", "mysqlType", "sqlType", "old"}
_CANAL_OWN_FIELDS = {"isDdl", "es", "pkNames", "mysqlType", "sqlType"}
_DTS_FIELDS = {"schemaName", "tableName", "fileName", "position", "newColumns", "oldColumns", "readerTimestamp"}
_KRC_FIELDS = {"binlog", "canalTime", "db", "table", "event", "columns", "keys"}


def _connect_payload(value: dict[str, Any]) -> dict[str, Any] | None:
    """The payload of a Kafka Connect value: inside the schema/payload envelope, or the value
    itself when the converter sends no schema; None when it is no Connect value."""
    if "payload" in value and "schema" in value:
        payload = value["payload"]
        return payload if isinstance(payload, dict) else {}
    if "op" in value and ("before" in value or "after" in value):
        return value
    if "ddl" in value and ("databaseName" in value or "source" in value):
        return value  # Debezium's schema-change topic without a schema
    if set(value) == {"ts_ms"} or ("status" in value and "data_collections" in value):
        return value  # Debezium's heartbeat and transaction-metadata topics without a schema
    return None


def looks_like(text: str | None) -> str | None:
    """The format whose records `text` is shaped like, or None (no JSON, or no format's shape)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(value, list) and value and isinstance(value[0], dict):
        value = value[0]  # Canal sends arrays of FlatMessages too
    if not isinstance(value, dict):
        return None
    keys = set(value)
    if "type" in keys and len(keys & _CANAL_FIELDS) >= 2 and keys & _CANAL_OWN_FIELDS:
        return "canal_flat"
    if "messageType" in keys and len(keys & _DTS_FIELDS) >= 2:
        return "tencent_dts"
    if len(keys & _KRC_FIELDS) >= 3 and ("binlog" in keys or "event" in keys):
        return "kafka_river_canal"
    payload = _connect_payload(value)
    if payload is not None:
        source = payload.get("source")
        # Lindorm's source block names the namespace; Debezium's a database
        if isinstance(source, dict) and "namespace" in source:
            return "lindorm"
        return "debezium"
    return None


@dataclass
class Sample:
    """What the values sampled from one format's files look like."""

    fmt: str
    # (source, line number, value) of every sampled value
    values: list[tuple[str, int, str]] = field(default_factory=list)
    verdicts: list[str | None] = field(default_factory=list)

    def add(self, source: str, line_no: int, value: str) -> None:
        self.values.append((source, line_no, value))
        self.verdicts.append(looks_like(value))

    @property
    def mismatches(self) -> int:
        return sum(1 for verdict in self.verdicts if verdict != self.fmt)

    @property
    def wrong(self) -> bool:
        """Most sampled values do not look like the chosen format (a stray malformed record is
        the pipeline's job: it becomes a reject with its reason)."""
        return bool(self.values) and self.mismatches * 2 > len(self.values)

    def likely_format(self) -> str | None:
        others = Counter(v for v in self.verdicts if v is not None and v != self.fmt)
        return others.most_common(1)[0][0] if others else None

    def message(self) -> str:
        """What the user reads: how many values do not fit, what they look like, one of them."""
        first = next(i for i, verdict in enumerate(self.verdicts) if verdict != self.fmt)
        source, line_no, value = self.values[first]
        shown = value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "..."
        likely = self.likely_format()
        sources = sorted({s for s, _, _ in self.values})
        lines = [
            f"cdc-lake land: {', '.join(sources)} does not look like {self.fmt}: {self.mismatches} of the "
            f"first {len(self.values)} values do not"
            + (f"; they look like {likely}." if likely else " (nor like any other format)."),
            f"  {source}:{line_no}: {shown}",
        ]
        if likely:
            lines.append(f"Land it with --format {likely} (or {likely}=FILE); --force lands it as {self.fmt} anyway.")
        else:
            lines.append(f"Check the dump (one `kcat -C -J` record per line); --force lands it as {self.fmt} anyway.")
        return "\n".join(lines)


def sample_values(fmt: str, records: Iterable[tuple[str, int, str | None]], limit: int = SAMPLE_VALUES) -> Sample:
    """Sample up to `limit` non-null values (tombstones say nothing about a format)."""
    sample = Sample(fmt)
    for source, line_no, value in records:
        if value is None:
            continue
        sample.add(source, line_no, value)
        if len(sample.values) >= limit:
            break
    return sample
