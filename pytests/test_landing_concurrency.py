"""The landing cursor under concurrency (issue 17): landers and builds at the same time.

A build reads raw records above the highest `landing_seq` it has seen. When `landing_seq` was the
wall clock taken as a landing started, a landing that committed after a build chose its
watermark could carry a smaller number than the build had passed, and its records were never
read. Now the number is taken under the lake's landing lock, held until the commit is done.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from cdc_lake.formats import FORMATS
from cdc_lake.landing import landing_sequence
from cdc_lake.testing.harness import Lake
from cdc_lake.testing.truth import Truth, check_against_truth, check_changelog_against_truth, generate

pytestmark = pytest.mark.integration


def test_a_sequence_waits_for_the_commit_before_it():
    order: list[tuple[str, int]] = []
    with landing_sequence() as first:
        waiter = threading.Thread(target=lambda: order.append(("second", _take())))
        waiter.start()
        time.sleep(0.5)
        # the second lander cannot get a number while the first one's commit is under way
        assert order == []
        order.append(("first", first))
    waiter.join(timeout=10)
    assert [name for name, _ in order] == ["first", "second"]
    assert order[1][1] > order[0][1]


def _take() -> int:
    with landing_sequence() as sequence:
        return sequence


def test_landers_and_builds_at_once(spark, tmp_path_factory):
    out = generate(tmp_path_factory.mktemp("concurrent"), "--batches", "4")
    truth = Truth(out)
    lake = Lake(spark, "t_landing_concurrency")
    lake.drop()
    errors: list[BaseException] = []

    def lander(batch: int) -> None:
        try:
            time.sleep(random.Random(batch).uniform(0, 3))
            for fmt in FORMATS:
                for path in sorted(Path(out).glob(f"{fmt}-{batch}.jsonl")):
                    lake.land(fmt, path)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    try:
        lake.build(data_tests=False)  # an empty lake, built: every later build is incremental
        landers = [threading.Thread(target=lander, args=(batch,)) for batch in (1, 2, 3, 4)]
        for thread in landers:
            thread.start()
        builds = 0
        while any(t.is_alive() for t in landers) or builds < 2:
            # the race is between the landers and the models that read the raw tables (the base
            # models, under cdc_changelog); the build after the landers finish makes the rest and
            # runs dbt's data tests
            lake.build("--select", "+cdc_changelog", data_tests=False)
            builds += 1
        for thread in landers:
            thread.join()
        assert errors == []
        # what the checks read (current state, history, change log, reconciliation), with the data
        # tests of those models (cautious: none that also reads a model left out)
        lake.build("--select", "+cdc_current", "+cdc_reconciliation", "--indirect-selection", "cautious")
        assert lake.rows("select * from {schema}.cdc_reconciliation where unaccounted_records != 0") == []
        # the simulator's truth, change by change: no record lost or read twice by the overlapping builds
        check_changelog_against_truth(lake, truth)
        check_against_truth(lake, truth)
    finally:
        lake.drop()
