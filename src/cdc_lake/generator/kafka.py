"""Kafka records as `kcat -C -J` prints them, written to landing-batch files, with optional faults.

Each format has one `RecordSink`. It numbers offsets per topic and partition in the order the tool
produced the records, and writes every record to the file of the current landing batch. Faults:

- out of order: a record is written to a later batch's file (or, in the last batch, a little further
  down the same file); its offset does not change, only its landing order;
- duplicates: a record is produced again a little later (a producer retry): same key, value and
  timestamp, a new offset, usually in the same batch, sometimes in the next one;
- malformed: right after a change record, a broken copy of it is produced (new offset).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import IO, Any

from cdc_lake.generator.jsontext import quote

OUT_OF_ORDER_RATE = 0.03
WRITE_EVERY = 256  # lines buffered per file before a write

# kinds of records, for the summary (`nothing is lost`: every raw record is one of these)
CHANGE = "change"
TOMBSTONE = "tombstone"
CONTROL = "control"
DDL = "ddl"
MALFORMED = "malformed"
DUPLICATE = "duplicate"
KINDS = (CHANGE, TOMBSTONE, CONTROL, DDL, MALFORMED, DUPLICATE)

# (broken value text, reason) from a good value text
Malformer = Callable[[str, Random], tuple[str, str]]


@dataclass(frozen=True)
class Faults:
    duplicates: float = 0.0
    out_of_order: bool = False
    malformed: float = 0.0


def batch_file_name(fmt: str, batch: int, batches: int) -> str:
    """`fmt.jsonl` for one batch, else `fmt-<n>.jsonl` with n = 1..batches zero-padded to sort."""
    if batches == 1:
        return f"{fmt}.jsonl"
    return f"{fmt}-{batch + 1:0{len(str(batches))}d}.jsonl"


class Framed:
    """A value (or key) `prefix + body + suffix` whose constant prefix is JSON-escaped once, not per record.

    Debezium and Lindorm repeat the same several-kilobyte schema in every record; escaping it for the
    kcat line once per table version instead of once per record roughly halves their cost.
    """

    __slots__ = ("literal_prefix", "literal_suffix", "prefix", "suffix")

    def __init__(self, prefix: str, suffix: str) -> None:
        self.prefix = prefix
        self.suffix = suffix
        self.literal_prefix = quote(prefix)[:-1]  # opening quote and escaped prefix
        self.literal_suffix = quote(suffix)[1:]  # escaped suffix and closing quote

    def text(self, body: str) -> str:
        return self.prefix + body + self.suffix

    def literal(self, body: str) -> str:
        """The JSON string literal of `text(body)`."""
        return self.literal_prefix + quote(body)[1:-1] + self.literal_suffix


# A Kafka key or value: JSON text, a framed body, or None (Kafka null).
Payload = str | tuple[Framed, str] | None


def literal(value: Payload) -> str:
    if value is None:
        return "null"
    if value.__class__ is str:
        return quote(value)  # type: ignore[arg-type]
    return value[0].literal(value[1])  # type: ignore[union-attr]


def text(value: Payload) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return value[0].text(value[1])


def kcat_line(topic: str, partition: int, offset: int, ts: int, key: Payload, value: Payload) -> str:
    return (
        f'{{"topic":{quote(topic)},"partition":{partition},"offset":{offset},"tstype":"create","ts":{ts},'
        f'"broker":0,"key":{literal(key)},"payload":{literal(value)}}}\n'
    )


class RecordSink:
    def __init__(
        self,
        fmt: str,
        out_dir: Path,
        batches: int,
        faults: Faults,
        seed: int,
        malformer: Malformer,
        fault_log: Callable[[str, dict[str, Any]], None],
    ) -> None:
        self.fmt = fmt
        self.batches = batches
        self.faults = faults
        self.rng = Random(f"{seed}:{fmt}:faults")
        self.malformer = malformer
        self.fault_log = fault_log
        self.files: list[IO[str]] = [
            (out_dir / batch_file_name(fmt, b, batches)).open("w", encoding="utf-8", newline="\n", buffering=1 << 20)
            for b in range(batches)
        ]
        self._buffers: list[list[str]] = [[] for _ in range(batches)]
        self.batch = 0
        self.offsets: dict[tuple[str, int], int] = {}
        self.counts: dict[str, dict[str, int]] = {}
        self.emitted = 0
        self._pending: list[tuple[int, int, tuple[Any, ...]]] = []  # heap of (due, tie, action)
        self._tie = 0
        # records lost (--snapshot-after-gap): produced, so their offsets are taken, but never landed
        self.dropping = False
        self.dropped = 0

    # ------------------------------------------------------------------ public
    def emit(self, topic: str, partition: int, key: Payload, value: Payload, ts: int, kind: str) -> None:
        if self.dropping:
            self.offsets[(topic, partition)] = self.offsets.get((topic, partition), 0) + 1
            self.dropped += 1
            return
        faults = self.faults
        rng = self.rng
        if self._pending:
            self._release(self.emitted)
        offset = self._next_offset(topic, partition, kind)
        line = kcat_line(topic, partition, offset, ts, key, value)
        if faults.out_of_order and rng.random() < OUT_OF_ORDER_RATE:
            target = self.batch + 1 + (rng.random() < 0.3)
            if target < self.batches:
                self._write(target, line)
            else:  # nothing later to move to: land it a little further down the last file
                self._schedule(self.emitted + rng.randint(1, 50), ("late", line))
        else:
            self._write(self.batch, line)
        if faults.duplicates and rng.random() < faults.duplicates:
            self._schedule(self.emitted + rng.randint(0, 30), ("dup", topic, partition, key, value, ts, offset))
        if faults.malformed and kind == CHANGE and value is not None and rng.random() < faults.malformed:
            broken, why = self.malformer(text(value) or "", rng)
            bad_offset = self._next_offset(topic, partition, MALFORMED)
            self._write(self.batch, kcat_line(topic, partition, bad_offset, ts, key, broken))
            self.fault_log(
                "malformed",
                {
                    "format": self.fmt,
                    "topic": topic,
                    "partition": partition,
                    "offset": bad_offset,
                    "batch": self.batch + 1,
                    "why": why,
                },
            )
        self.emitted += 1

    def set_batch(self, batch: int) -> None:
        self.batch = min(batch, self.batches - 1)

    def close(self) -> None:
        self._release(None)
        for batch, handle in enumerate(self.files):
            handle.write("".join(self._buffers[batch]))
            handle.close()

    # ------------------------------------------------------------------ internals
    def _write(self, batch: int, line: str) -> None:
        """Buffered: one write call per few hundred lines is much cheaper than one per line."""
        buffer = self._buffers[batch]
        buffer.append(line)
        if len(buffer) >= WRITE_EVERY:
            self.files[batch].write("".join(buffer))
            buffer.clear()

    def _next_offset(self, topic: str, partition: int, kind: str) -> int:
        tp = (topic, partition)
        offset = self.offsets.get(tp, 0)
        self.offsets[tp] = offset + 1
        per_tp = self.counts.get(f"{topic}:{partition}")
        if per_tp is None:
            per_tp = self.counts[f"{topic}:{partition}"] = dict.fromkeys(KINDS, 0)
        per_tp[kind] += 1
        return offset

    def _schedule(self, due: int, action: tuple[Any, ...]) -> None:
        self._tie += 1
        heapq.heappush(self._pending, (due, self._tie, action))

    def _release(self, upto: int | None) -> None:
        pending = self._pending
        while pending and (upto is None or pending[0][0] <= upto):
            _, _, action = heapq.heappop(pending)
            if action[0] == "late":
                self._write(self.batches - 1, action[1])
                continue
            _, topic, partition, key, value, ts, original = action
            offset = self._next_offset(topic, partition, DUPLICATE)
            target = self.batch
            if target + 1 < self.batches and self.rng.random() < 0.25:
                target += 1
            self._write(target, kcat_line(topic, partition, offset, ts, key, value))
            self.fault_log(
                "duplicate",
                {
                    "format": self.fmt,
                    "topic": topic,
                    "partition": partition,
                    "offset": offset,
                    "original_offset": original,
                    "batch": target + 1,
                },
            )
