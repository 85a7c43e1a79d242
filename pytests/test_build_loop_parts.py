"""`cdc-lake build --upkeep-every` without Spark or dbt: when the next upkeep is due, that a
schedule started again keeps the rhythm of the one before it (the soak's build process, killed
twice in 30 minutes, never reached its first upkeep while each start reset the clock), and what
follows each build, scheduled or single."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cdc_lake import build_loop
from cdc_lake.build_loop import Schedule, Upkeep


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


def test_the_clock_starts_at_the_first_start_of_a_schedule(tmp_path: Path) -> None:
    record = tmp_path / "upkeep.last"
    Upkeep(600, record=record).start()  # a first schedule starts, and is killed before any upkeep
    record.write_text(f"{time.time() - 590}\n")  # ... 590 s ago
    again = Upkeep(600, record=record)
    again.start()  # a record exists: starting again does not move it
    assert 0 < again.due_in(time.time()) <= 10


class StepsOnly(Schedule):
    """A schedule whose dbt steps are recorded instead of run."""

    def __init__(self, upkeep: Upkeep, every: float | None, times: int | None) -> None:
        super().__init__(Path("."), [], every, times, None, echo=lambda _: None, upkeep=upkeep)
        self.steps: list[str] = []

    def build_once(self, number: int) -> int:
        self.steps.append("build")
        return 0

    def upkeep_once(self) -> int:
        self.steps.append("upkeep")
        self.upkeep.done()  # type: ignore[union-attr]
        return 0

    def compact_latest_once(self) -> int:
        self.steps.append("compact_latest")
        return 0


def test_a_single_build_with_upkeep_runs_what_follows_a_scheduled_build(tmp_path: Path) -> None:
    record = tmp_path / "upkeep.last"
    once = StepsOnly(Upkeep(600, record=record), every=None, times=None)
    assert once.run() == 0
    assert once.steps == ["build", "compact_latest"]  # the clock started with this run: no upkeep due
    record.write_text(f"{time.time() - 601}\n")  # from cron, a period after the last upkeep
    due = StepsOnly(Upkeep(600, record=record), every=None, times=None)
    assert due.run() == 0
    assert due.steps == ["build", "upkeep"]
    assert 599 <= Upkeep(600, record=record).due_in(time.time()) <= 600


def test_a_schedule_compacts_after_each_build_and_upkeeps_when_due(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build_loop, "TURN_GAP", 0.01)
    record = tmp_path / "upkeep.last"
    record.write_text(f"{time.time() - 601}\n")
    schedule = StepsOnly(Upkeep(600, record=record), every=0.01, times=3)
    assert schedule.run() == 0
    assert schedule.steps == ["build", "upkeep", "build", "compact_latest", "build", "compact_latest"]


def test_the_soak_ends_after_a_build_that_started_after_the_last_landing_and_its_post_step(tmp_path: Path) -> None:
    """The soak's last build is the schedule's first build that started after the catch-up landing:
    it waits for that build to end well and for what follows it (upkeep or cdc_compact_latest)."""
    import json

    from cdc_lake.bench.soak import LAST_BUILD_TRIES, Soak

    soak = Soak(tmp_path, duration=1, rate=1, seed=1, build_interval=60, upkeep_interval=600)
    log = tmp_path / "builds.jsonl"
    offset = 0

    def logged(*entries: dict) -> None:
        nonlocal offset
        with open(log, "a", encoding="utf-8") as out:
            out.writelines(json.dumps(e) + "\n" for e in entries)
        offset = soak.read_build_log(log, offset)

    post = {"event": "compact_latest", "status": 0, "lines": []}
    logged({"event": "start", "at": 100.0}, {"event": "end", "at": 150.0, "status": 0}, post)
    assert not soak.last_build_done()  # no catch-up yet
    soak.caught_up = 120.0
    assert not soak.last_build_done()  # that build started before the catch-up landing ended
    logged({"event": "start", "at": 152.0}, {"event": "end", "at": 190.0, "status": 1})
    assert not soak.last_build_done()  # after it, but failed
    logged({"event": "start", "at": 192.0}, {"event": "end", "at": 230.0, "status": 0})
    assert not soak.last_build_done()  # ended well; its post step not logged yet
    logged(post)
    assert soak.last_build_done()
    assert [e["kind"] for e in soak.events] == ["build_failed"]  # a compaction of nothing is no event

    failing = Soak(tmp_path, duration=1, rate=1, seed=1, build_interval=60, upkeep_interval=600)
    failing.caught_up = 0.0
    failing.builds = [{"started": float(i), "ok": False} for i in range(1, LAST_BUILD_TRIES + 1)]
    assert failing.last_build_done()  # gives up: the check says what is missing
    dying = Soak(tmp_path, duration=1, rate=1, seed=1, build_interval=60, upkeep_interval=600)
    dying.caught_up = 0.0
    assert not dying.last_build_done()
    dying.restarts_after_catch_up = LAST_BUILD_TRIES  # processes that died before logging a build
    assert dying.last_build_done()


class DbtArgsOnly(Schedule):
    """A schedule whose dbt commands are recorded (and succeed) instead of run."""

    def __init__(self, dbt_args: list[str], tests_every: float | None) -> None:
        super().__init__(Path("."), dbt_args, 0.01, 4, None, echo=lambda _: None, tests_every=tests_every)
        self.commands: list[list[str]] = []

    def _invoke(self, args: list[str], callbacks: object = None) -> object:
        self.commands.append(args)
        return type("Result", (), {"success": True, "exception": None, "result": None})()


def test_tests_every_runs_cycles_between_builds_with_every_data_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CDC_LAKE_DIR", str(tmp_path))  # the lake's dbt turn lock
    monkeypatch.setattr(build_loop, "TURN_GAP", 0.01)
    schedule = DbtArgsOnly(["--vars", "{cdc_check_all: false}", "--threads", "2"], tests_every=600)
    assert schedule.run() == 0
    first, *cycles = schedule.commands
    # the schedule's first build runs every data test, so no batch is left pending from before it
    assert first == ["build", "--vars", "{cdc_check_all: false}", "--threads", "2"]
    assert cycles == [["build", "--selector", "scheduled_cycle", "--vars",
                       '{"cdc_check_all": false, "cdc_defer_tests": true}', "--threads", "2"]] * 3
    every_time = DbtArgsOnly([], tests_every=None)
    assert every_time.run() == 0
    assert every_time.commands == [["build"]] * 4
    # a build with every test once the last began tests_every seconds ago
    due = DbtArgsOnly([], tests_every=0.001)
    assert due.run() == 0
    assert due.commands == [["build"]] * 4
