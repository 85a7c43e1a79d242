"""Where a new checkpoint of `cdc-lake consume` starts after a topic was recreated
(`cdc_lake.incarnations`), without Spark or a broker: Spark's offset log as it writes it, and the
starting offsets made from it. The broker-level behaviour is test_kafka_landing's."""

from __future__ import annotations

import json
from pathlib import Path

from cdc_lake.incarnations import checkpoint_dir, resume_offsets, starting_offsets

METADATA = '{"batchWatermarkMs":0,"batchTimestampMs":1795889036382,"conf":{}}'


def write_batch(checkpoint: Path, batch: int, offsets: dict, committed: bool) -> None:
    (checkpoint / "offsets").mkdir(parents=True, exist_ok=True)
    (checkpoint / "commits").mkdir(parents=True, exist_ok=True)
    (checkpoint / "offsets" / str(batch)).write_text(f"v1\n{METADATA}\n{json.dumps(offsets)}")
    if committed:
        (checkpoint / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}')


def test_a_new_checkpoint_goes_on_from_the_last_finished_batch(tmp_path: Path) -> None:
    old = checkpoint_dir(tmp_path, "debezium", 0)
    assert old == tmp_path / "debezium" and checkpoint_dir(tmp_path, "debezium", 2) == tmp_path / "debezium.2"
    assert resume_offsets(old) == {}  # never ran: nothing to go on from
    write_batch(old, 0, {"a": {"0": 3, "1": 3}, "b": {"0": 3}}, committed=True)
    write_batch(old, 1, {"a": {"0": 7, "1": 5}, "b": {"0": 9}}, committed=True)
    # planned, not finished (the batch that found the recreated topic): read again
    write_batch(old, 2, {"a": {"0": 1}, "b": {"0": 12}}, committed=False)
    previous = resume_offsets(old)
    assert previous == {"a": {"0": 7, "1": 5}, "b": {"0": 9}}
    # `a` recreated with one partition; `c` is new; `b` gained a partition
    start = json.loads(starting_offsets(previous, {"a": [0], "b": [0, 1], "c": [0]}, recreated={"a"}))
    assert start == {"a": {"0": -2}, "b": {"0": 9, "1": -2}, "c": {"0": -2}}
