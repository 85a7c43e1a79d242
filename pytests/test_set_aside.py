"""A poison record costs one build at most (issue 76, item 2).

The differential workload is landed in every format; a test-only setting (var
`cdc_fault_value_fails`) makes one Debezium record fail its base model, the way a value no decoder
foresaw would. A schedule (`cdc-lake build --every`'s loop, in this process): its first build fails
in base_debezium__messages; the loop finds the record by halving the batch and sets it aside; the
next build is green, with the record in cdc_rejected_messages (the injected error as its reason,
its Kafka coordinates), every other format equal to the truth, and nothing unaccounted for in the
reconciliation. After the fix (the setting removed), `release` brings the record back and the
next build makes the lake equal to the truth in every format.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from cdc_lake.build_loop import Schedule
from cdc_lake.formats import FORMATS
from cdc_lake.set_aside import REASON_PREFIX, release, set_aside_table
from cdc_lake.testing.harness import Lake
from cdc_lake.testing.truth import Truth, actual_current, actual_history, check_against_truth, generate, land_all

pytestmark = pytest.mark.integration

POISONED = "debezium"
# the mechanism's checks are this module's own (the builds' statuses, the truth, the
# reconciliation's sum): its three builds make what they read (current state and history, the
# reconciliation, the rejects, and every model those read), without dbt's data tests; not the typed
# views, the monitoring models the checks do not read, or the column catalogue
LEFT_OUT = ["--select", "+cdc_current", "+cdc_reconciliation", "+cdc_rejected_messages",
            "--exclude", "test_type:unit", "test_type:data"]


@pytest.fixture(scope="module")
def workload() -> Path:
    out = Path(tempfile.mkdtemp(prefix="cdc_lake_set_aside_"))
    return generate(out, "--changes", "150")  # a small workload: the mechanism, not the volume


def poison_value(workload: Path) -> tuple[int, str]:
    """The offset and value of a Debezium record in the middle of its file that carries a change."""
    lines = (workload / f"{POISONED}.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines[len(lines) // 2:]:
        record = json.loads(line)
        if record.get("payload") and '"op":"u"' in record["payload"].replace(" ", ""):
            return int(record["offset"]), record["payload"]
    raise AssertionError("no update record in the workload")


def schedule(lake: Lake, variables: dict, times: int, log: Path) -> Schedule:
    lake._activate()
    args = [*LEFT_OUT, "--vars", json.dumps({"cdc_check_all": True, **variables})]
    return Schedule(lake.project_dir, args, every=0.1, times=times, log=log, echo=lambda _: None)


def test_a_record_that_fails_its_model_is_set_aside_and_released_after_the_fix(lake: Lake, workload: Path,
                                                                               tmp_path: Path) -> None:
    truth = Truth(workload)
    land_all(lake, workload)
    offset, value = poison_value(workload)
    log = tmp_path / "builds.jsonl"

    status = schedule(lake, {"cdc_fault_value_fails": value}, times=2, log=log).run()
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    ends = [e for e in entries if e["event"] == "end"]
    assert [e["status"] for e in ends] == [1, 0], entries
    found = [e for e in entries if e["event"] == "set_aside"]
    assert len(found) == 1 and found[0]["set_aside"] == 1 and found[0]["formats"] == [POISONED], found
    assert status == 0

    # the record: rejected with the injected error and its coordinates; nothing else of its batch
    rejected = lake.rows(
        f"select kafka_offset, reject_reason, raw_value from {{schema}}.cdc_rejected_messages "
        f"where source_format = '{POISONED}' and reject_reason like '{REASON_PREFIX}%'"
    )
    assert [(r["kafka_offset"], r["raw_value"]) for r in rejected] == [(offset, value)]
    assert "injected fault" in rejected[0]["reject_reason"]
    unaccounted = lake.rows("select sum(unaccounted_records) as n from {schema}.cdc_reconciliation")
    assert unaccounted[0]["n"] == 0
    # every other format is exact; the poisoned one lacks that change only
    for fmt in FORMATS:
        if fmt != POISONED:
            assert actual_current(lake, truth, fmt) == truth.expected_current(fmt), fmt
            assert actual_history(lake, truth, fmt) == truth.expected_history(fmt), fmt
    assert actual_history(lake, truth, POISONED) != truth.expected_history(POISONED)

    # the fix: the setting gone, the record released, the next build stages it
    assert release(lake.spark, POISONED, rejects_table=f"{lake.schema}.cdc_rejected_messages") == 1
    assert lake.rows(f"select count(*) as n from {set_aside_table()}")[0]["n"] == 0
    assert schedule(lake, {}, times=1, log=log).run() == 0
    check_against_truth(lake, truth)
    assert lake.rows(
        f"select count(*) as n from {{schema}}.cdc_rejected_messages where reject_reason like '{REASON_PREFIX}%'"
    )[0]["n"] == 0
    assert lake.rows("select sum(unaccounted_records) as n from {schema}.cdc_reconciliation")[0]["n"] == 0
