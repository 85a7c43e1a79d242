"""What every format encoder shares: the sink it writes to, its own random stream, broken-record makers."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from random import Random
from typing import Any

from cdc_lake.generator.jsontext import dumps as encode
from cdc_lake.generator.kafka import RecordSink
from cdc_lake.generator.model import DdlEvent, HBaseChange, Transaction

PARTITIONS = 3
SERVER_NAME = "cdclake"  # Debezium/dtle logical server name, Lindorm instance suffix, topic prefix
SERVER_ID = 1
MYSQL_VERSION = "5.7.44-log"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def twos_complement(n: int) -> bytes:
    """Big-endian two's complement in the fewest bytes, as Java's BigInteger.toByteArray()."""
    bits = n.bit_length() if n >= 0 else (~n).bit_length()
    return n.to_bytes(bits // 8 + 1, "big", signed=True)


class Encoder:
    """Base class: one CDC tool. Subclasses turn workload events into Kafka records."""

    fmt = ""
    # whether the tool can produce a record again as the same bytes under a new offset (a producer
    # retry): the duplicates fault applies only to such tools
    resends_identical_records = True

    def __init__(self, sink: RecordSink, seed: int) -> None:
        self.sink = sink
        self.rng = Random(f"{seed}:{self.fmt}:content")
        self.rows = 0  # row changes carried

    def capture_ms(self, commit_s: int) -> int:
        """When the tool read the change: the commit time plus a small lag."""
        return commit_s * 1000 + 3 + int(self.rng.random() * 1497)

    def transaction(self, tx: Transaction) -> None:
        raise NotImplementedError

    def ddl(self, ddl: DdlEvent) -> None:
        """DDL statements; formats that do not carry them ignore it."""

    def hbase(self, ch: HBaseChange) -> None:
        """Lindorm HBase-style table changes; only the lindorm encoder carries them."""

    def finish(self) -> None:
        """Called once after the last event."""

    @staticmethod
    def malform(value: str, rng: Random) -> tuple[str, str]:
        raise NotImplementedError


def malform_with(
    value: str,
    rng: Random,
    wrong_type: Callable[[dict[str, Any]], str],
    unknown_op: Callable[[dict[str, Any]], str],
) -> tuple[str, str]:
    """A broken copy of a good value: truncated JSON, a field of the wrong type, or an unknown operation."""
    r = rng.random()
    if r < 0.4 or len(value) < 3:
        cut = rng.randint(1, max(1, len(value) - 2))
        return value[:cut], f"truncated JSON ({cut} of {len(value)} characters)"
    obj = json.loads(value)
    why = wrong_type(obj) if r < 0.7 else unknown_op(obj)
    return encode(obj), why
