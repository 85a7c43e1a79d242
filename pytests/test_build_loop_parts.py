"""`cdc-lake build --upkeep-every`'s clock, without Spark or dbt: when the next upkeep is due, and
that a schedule started again keeps the rhythm of the one before it (the soak's build process,
killed twice in 30 minutes, never reached its first upkeep while each start reset the clock)."""

from __future__ import annotations

import time
from pathlib import Path

from cdc_lake.build_loop import Upkeep


def test_without_a_record_the_first_upkeep_is_due_a_period_after_the_start(tmp_path: Path) -> None:
    upkeep = Upkeep(600, record=tmp_path / "upkeep.last")
    started = time.time()
    assert 599 <= upkeep.due_in(started) <= 600
    assert upkeep.due_in(started - 601) <= 0


def test_a_restarted_schedule_keeps_the_last_upkeeps_rhythm(tmp_path: Path) -> None:
    record = tmp_path / "lake" / "upkeep.last"
    earlier = Upkeep(600, record=record)
    earlier.done()  # a schedule's upkeep, then the process is killed
    assert record.exists()
    again = Upkeep(600, record=record)
    assert 599 <= again.due_in(time.time()) <= 600  # just done: a period from that one
    # the last upkeep 610 s ago, the schedule started again just now: due at once, not in 600 s
    record.write_text(f"{time.time() - 610}\n")
    assert again.due_in(time.time()) <= 0
    record.write_text(f"{time.time() - 590}\n")
    assert 0 < again.due_in(time.time()) <= 10


def test_a_record_cut_short_counts_as_none(tmp_path: Path) -> None:
    record = tmp_path / "upkeep.last"
    record.write_text("")
    started = time.time() - 100
    assert 499 <= Upkeep(600, record=record).due_in(started) <= 500
