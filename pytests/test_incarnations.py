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


def test_a_batch_range_is_read_from_the_offset_log(tmp_path: Path) -> None:
    """`consume` lands a micro-batch without reading it first: its topics, offset bounds and
    most records come from the offset log Spark wrote before running it."""
    from cdc_lake.consume import planned_range

    checkpoint = tmp_path / "debezium"
    assert planned_range(checkpoint, 0) is None  # no log: the batch is read for its range
    write_batch(checkpoint, 0, {"a": {"0": 3, "1": 2}, "b": {"0": 0}}, committed=True)
    first = planned_range(checkpoint, 0)
    assert first is not None  # the first batch starts at 0 (or later: the bounds are a superset)
    assert (first.ranges, first.records_at_most) == ({"a": (0, 2)}, 5)  # b has no record yet
    write_batch(checkpoint, 1, {"a": {"0": 7, "1": 2}, "b": {"0": 4}, "c": {"0": 1}}, committed=False)
    second = planned_range(checkpoint, 1)
    assert second is not None
    assert second.ranges == {"a": (3, 6), "b": (0, 3), "c": (0, 0)}  # partition 1 of a: nothing new
    assert second.records_at_most == 4 + 4 + 1


def test_a_batch_lands_as_few_files_yet_reads_on_every_core() -> None:
    from cdc_lake.consume import _files_for

    assert _files_for(0, 2) == 1 and _files_for(250, 2) == 1  # a following consumer's batch: one file
    assert _files_for(91_078, 2) == 2  # two cores read it, rather than one task all its partitions
    assert _files_for(911_110, 2) == 5 and _files_for(911_110, 8) == 8  # at most 200k records a file
