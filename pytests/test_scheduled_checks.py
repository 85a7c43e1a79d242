"""What a scheduled `dbt build` tests (issue 19): on cdc_changelog, cdc_current and cdc_history the
data tests read the last batch, or every row of the keys it touched (the staging tests: the records
the base models staged last), and var `cdc_check_all` (or `make check-all`) reads everything.

The lake's history is damaged by hand, as a bug in an earlier build would leave it, and the checks
are asked what they see: a damaged key the new batch does not touch is left to the full check; a
damaged version of a key the batch touches is found by the scheduled check, although the batch did
not rewrite that version. The batch reaches the change log in an interrupted build first, so the
models compared by the tests were last built by different builds. A view redefined since a test's
last pass (cdc_current under another delete retention) is tested whole: a damaged key outside the
batch is then found.
"""

from __future__ import annotations

from typing import Any

import pytest

from cdc_lake.testing.conformance import CONFORMANCE
from cdc_lake.testing.harness import canal_item, kcat_lines

pytestmark = pytest.mark.integration

TOPIC = "scheduled.shop.items"
DTLE_TOPIC = "scheduled.dtle"
ES = 1_700_000_000_000


def change(op: str, row_id: int, name: str, msg_id: int, old: dict | None = None) -> str:
    """A Canal FlatMessage of one row of shop.items, committed msg_id seconds after ES."""
    return canal_item(op, row_id, name, ES + msg_id * 1000, msg_id, old)


FIRST = [
    change("INSERT", 1, "a", 1), change("INSERT", 2, "a", 2),
    change("UPDATE", 1, "b", 3, {"name": "a"}), change("UPDATE", 2, "b", 4, {"name": "a"}),
]
# touches key 2 only
SECOND = [change("UPDATE", 2, "c", 5, {"name": "b"})]


def failed_tests(result: Any) -> set[str]:
    return {r.node.name for r in result.result.results if str(r.status) in ("fail", "error")}


def reopen_first_version(lake, row_id: int) -> None:
    """The damage a broken MERGE leaves: the key's first (long closed) version open again."""
    lake.rows(
        "update {schema}.cdc_history set is_current = true, valid_to = null "
        f"where row_key = '{row_id}' and op = 'c'"
    )


@pytest.fixture(scope="module")
def scheduled(lake):
    lake.land("canal_flat", kcat_lines(FIRST, topic=TOPIC))
    lake.build(typed_tables=False)
    reopen_first_version(lake, 1)
    lake.land("canal_flat", kcat_lines(SECOND, topic=TOPIC, start_offset=len(FIRST)))
    lake.check_all = False
    # an earlier scheduled build was killed after cdc_changelog took the batch, before cdc_current
    # and cdc_history did: the next one writes the change log nothing and the other two the batch
    lake.dbt("run", "--select", "+cdc_changelog")
    # the plain command a schedule runs (the default selector: no unit tests)
    build = lake.dbt("build", expect_success=False)
    assert not [r for r in build.result.results if str(r.node.resource_type) == "unit_test"]
    return lake, build


def test_a_scheduled_build_tests_the_batch_and_leaves_untouched_keys_to_the_full_check(scheduled):
    lake, build = scheduled
    assert failed_tests(build) == set()
    # the batch's rows were tested (key 2's new version is there), and the damage is still there
    assert lake.count("cdc_history") == 5
    lake.check_all = True
    # what `make check-all` runs: a plain `dbt test` (the default selector: data tests only)
    full = lake.dbt("test", expect_success=False)
    assert {"one_open_version_per_key_cdc_history_source_system__database_name__table_name__row_key",
            "contiguous_versions_cdc_history_source_system__database_name__table_name__row_key"} \
        <= failed_tests(full)


def test_the_scheduled_check_reads_every_version_of_a_touched_key(scheduled):
    lake, _ = scheduled
    # key 2's first version was written by the first build, not by the batch
    reopen_first_version(lake, 2)
    lake.check_all = False
    found = failed_tests(lake.dbt("test", "--select", "cdc_history,test_type:data", expect_success=False))
    assert "one_open_version_per_key_cdc_history_source_system__database_name__table_name__row_key" in found


def test_models_whose_last_builds_differ_are_compared_on_the_same_keys(scheduled):
    """The change log's last build wrote nothing (the interrupted build had taken the batch), the
    history's wrote key 2: the replay test, which compares the current state (read from the
    history) with the change log, reads key 2 on both sides. Each cut to its own table's batch, it
    failed on correct tables."""
    _, build = scheduled
    status = {r.node.name: str(r.status) for r in build.result.results}
    compared = [name for name in status if name.startswith("current_matches_replay")]
    assert len(compared) == 1 and {status[name] for name in compared} == {"pass"}


def test_a_view_of_an_incremental_model_is_checked_on_the_keys_its_batch_touched(scheduled):
    """cdc_current is a view of cdc_history: its uniqueness test reads the keys cdc_history's last
    batch touched (key 2), found through the view, not every key; the full check reads them all."""
    lake, _ = scheduled
    unique = "unique_combination_cdc_current_source_system__database_name__table_name__row_key"

    def second_latest_version(row_id: int, latest: bool) -> None:
        lake.rows(f"update {{schema}}.cdc_history set is_latest = {str(latest).lower()} "
                  f"where row_key = '{row_id}' and op = 'c'")

    lake.check_all = False
    try:
        second_latest_version(1, True)
        assert unique not in failed_tests(lake.dbt("test", "--select", "cdc_current", expect_success=False))
        second_latest_version(2, True)
        assert unique in failed_tests(lake.dbt("test", "--select", "cdc_current", expect_success=False))
        second_latest_version(2, False)
        lake.check_all = True
        assert unique in failed_tests(lake.dbt("test", "--select", "cdc_current", expect_success=False))
    finally:
        second_latest_version(1, False)
        second_latest_version(2, False)


def test_a_view_redefined_since_the_last_pass_is_tested_whole(scheduled):
    """A batch cut is sound only for rows whose SQL has not changed since they were checked: a test
    reading a view that was redefined since its last pass (here cdc_current, by the retention var
    that filters its delete markers; a typed view when a column type changes) reads every row."""
    lake, _ = scheduled
    # damage outside the last batch's keys (key 2): key 1's current image
    lake.rows("update {schema}.cdc_history set image = map('id', '1', 'name', 'damaged') "
              "where row_key = '1' and is_latest")
    replay = "current_matches_replay"
    lake.check_all = False
    cut = lake.dbt("build", "--select", "cdc_current", expect_success=False)
    assert not [name for name in failed_tests(cut) if name.startswith(replay)]
    redefined = lake.dbt("build", "--select", "cdc_current", "--vars", '{"cdc_delete_retention_days": 36500}',
                         expect_success=False)
    assert [name for name in failed_tests(redefined) if name.startswith(replay)]



def test_staging_tests_read_the_records_the_last_build_staged(scheduled):
    """The base models record the batch they stage (raw_records_since_last_build), so a scheduled
    build's staging tests read those records: the base model's, and a staging view's through its
    base model's batch. A record the last build did not stage is left to the full check. Here a
    dtle record of the conformance corpus, landed twice, staged by two builds."""
    lake, _ = scheduled
    key, value = (CONFORMANCE / "dtle" / "dtle-messages.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    for offset in (0, 1):
        lake.land("debezium", kcat_lines([value], topic=DTLE_TOPIC, start_offset=offset, keys=[key]))
        lake.dbt("run", "--select", "base_debezium__messages")

    def set_op(offset: int, op: str) -> None:
        lake.rows(f"update {{schema}}.base_debezium__messages set op = '{op}' "
                  f"where kafka_topic = '{DTLE_TOPIC}' and kafka_offset = {offset}")

    def staging_tests(check_all: bool) -> dict[str, Any]:
        return lake.data_tests("base_debezium__messages", "stg_debezium__changes", check_all=check_all)

    def op_test(check_all: bool) -> str:
        [status] = [str(r.status) for name, r in staging_tests(check_all).items()
                    if name.startswith("accepted_values_stg_debezium__changes_op")]
        return status

    [original] = {r["op"] for r in lake.rows(f"select op from {{schema}}.base_debezium__messages "
                                             f"where kafka_topic = '{DTLE_TOPIC}'")}
    cut = staging_tests(check_all=False)
    assert len(cut) >= 5 and {str(r.status) for r in cut.values()} == {"pass"}
    assert all("landing_seq >= " in r.node.compiled_code for name, r in cut.items() if "stg_debezium" in name)
    assert all("landing_seq > " in r.node.compiled_code for name, r in cut.items() if "base_debezium" in name)
    try:
        set_op(0, "x")  # the record of the first build
        assert op_test(check_all=False) == "pass"
        assert op_test(check_all=True) == "fail"
        set_op(1, "x")  # the record the last build staged
        assert op_test(check_all=False) == "fail"
    finally:
        set_op(0, original)
        set_op(1, original)


def test_a_scheduled_build_reconciles_its_batch_record_by_record(scheduled):
    """A scheduled build checks the reconciliation on its batch, record by record
    (landed_records_staged on the raw table: each raw record staged once); `cdc_check_all` counts
    every record ever landed (cdc_reconciliation's unaccounted_records test) instead; the offset
    gaps warning reads the whole view either way. A record lost or staged twice in the batch
    fails the first; one lost from an older batch is left to the second."""
    lake, _ = scheduled
    table = "{schema}.base_canal_flat__messages"
    before = lake.snapshot_id("base_canal_flat__messages")

    def reconciled(check_all: bool) -> dict[str, str]:
        short = {"landed_records_staged": "staged", "unaccounted_records": "unaccounted", "offset_gaps": "gaps"}
        ran = lake.data_tests("source:cdc_raw.raw_canal_flat", "cdc_reconciliation", check_all=check_all)
        return {next(v for k, v in short.items() if k in name): str(r.status) for name, r in ran.items()}

    def damaged(statement: str) -> tuple[dict[str, str], dict[str, str]]:
        lake.rows(statement)
        try:
            return reconciled(check_all=False), reconciled(check_all=True)
        finally:
            lake.rows(f"call spark_catalog.system.rollback_to_snapshot('{table}', {before})")

    batch, old = f"kafka_offset = {len(FIRST)}", "kafka_offset = 0"
    assert reconciled(check_all=False) == {"staged": "pass", "gaps": "pass"}
    assert reconciled(check_all=True) == {"unaccounted": "pass", "gaps": "pass"}
    # the batch's record staged under other coordinates: it is lost, and an unknown one staged
    # (deleted outright, the highest record would look unbuilt, as in cdc_reconciliation: the
    # base model's highest landing_seq is where the next build reads from)
    lost_in_batch = damaged(f"update {table} set kafka_offset = kafka_offset + 100 where {batch}")
    assert lost_in_batch[0] == {"staged": "fail", "gaps": "pass"}
    twice_in_batch = damaged(f"insert into {table} select * from {table} where {batch}")
    assert twice_in_batch[0] == {"staged": "fail", "gaps": "pass"}
    lost_before = damaged(f"delete from {table} where {old}")
    assert lost_before == ({"staged": "pass", "gaps": "pass"}, {"unaccounted": "fail", "gaps": "pass"})
