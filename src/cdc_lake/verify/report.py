"""What `cdc-lake verify` prints: one line per table with the first differing keys under it, or
the same as JSON (`--output json`)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

from cdc_lake.verify.compare import EQUAL, SAMPLES, TableResult


@dataclass
class Verification:
    verification_id: str
    source: str
    lake: str
    source_system: str
    results: list[TableResult]
    seconds: float
    # what a table's in-flight count counts (Source.changes_noun)
    changes_noun: str = "row events for it in the binlog"

    @property
    def equal(self) -> bool:
        return all(r.status == EQUAL for r in self.results)

    def as_json(self) -> str:
        return json.dumps({
            "verification_id": self.verification_id, "source": self.source, "lake": self.lake,
            "source_system": self.source_system, "equal": self.equal, "seconds": round(self.seconds, 3),
            "tables": [r.as_json() for r in self.results],
        }, indent=2)

    def as_text(self) -> str:
        first = self.results[0] if self.results else None
        lines = [f"verify {self.source} against {self.lake} (source_system {self.source_system})"]
        if first is not None:
            lines.append(f"source snapshot at {first.source_position or 'an unknown binlog position'}; "
                         f"lake's last change at {first.lake_position or 'an unknown position'}")
        width = max([len(r.label) for r in self.results] + [5])
        lines.append(f"{'table':<{width}}  {'status':<9}  {'source rows':>11}  {'lake rows':>11}  {'keys differ':>11}")
        for r in self.results:
            differ = f"{'>=' if r.at_least else ''}{r.differing_keys}"
            status = r.status if r.status == EQUAL else r.status.upper()
            lines.append(f"{r.label:<{width}}  {status:<9}  {r.source_rows:>11}  {r.lake_rows:>11}  {differ:>11}")
            for d in r.differences[:SAMPLES]:
                lines.append(f"    {d.key}: {d.kind.replace('_', ' ')}" + "".join(
                    f"; {c} source {_value(s)} lake {_value(k)}" for c, (s, k) in d.columns.items()))
            if r.differing_keys > SAMPLES:
                lines.append(f"    ... {r.differing_keys - SAMPLES} more")
            if r.in_flight and r.status != EQUAL:
                lines.append(f"    {r.in_flight} {self.changes_noun} after the lake's last change: "
                             "verify again after the next landing and build")
            if r.repair:
                lines.append(f"    {r.repair}")
        counts = Counter(r.status for r in self.results)
        summary = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in sorted(counts.items()))
        lines.append(f"{len(self.results)} tables: {summary or 'none'} ({self.seconds:.1f}s)")
        return "\n".join(lines)


def _value(value: str | None, limit: int = 60) -> str:
    if value is None:
        return "NULL"
    return repr(value) if len(value) <= limit else repr(value[:limit]) + f"...({len(value)} chars)"
