"""A scheduled build pays for what changed (issue 40): a data test that passed is not run again
until its SQL or a relation it reads changes (macros/tests/test_passes.sql), and a seed whose CSV did
not change is not reloaded (macros/materializations/spark__reset_csv_table.sql). The shortcuts are
visible and undone (issue 70): each build's output counts them, var `cdc_reuse_passes: false` and
`dbt run-operation cdc_forget_passes` run everything again.

The truth here is the lake itself: damage written into a table after a pass must still fail the next
build, however the skip is computed.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cdc_lake.testing.harness import canal_item, kcat_lines

pytestmark = pytest.mark.integration

TOPIC = "passes.shop.items"
ES = 1_700_000_000_000
SKIPPED = "unchanged since this test's last pass"
CHANGES = [
    canal_item("INSERT", 1, "a", ES + 1000, 1), canal_item("INSERT", 2, "a", ES + 2000, 2),
    canal_item("UPDATE", 1, "b", ES + 3000, 3, {"name": "a"}),
]


def outcomes(lake: Any, build: Any) -> dict[str, tuple[str, bool, list[str]]]:
    """Each data test of a dbt command: its status, whether its query was the recorded pass (read
    from its runtime SQL as dbt wrote it, before the next command overwrites it), what it reads."""
    found: dict[str, tuple[str, bool, list[str]]] = {}
    for r in build.result.results:
        if str(r.node.resource_type) != "test":
            continue
        status = str(r.status)
        runs = list((Path(lake.project_dir) / "target" / "run").rglob(Path(r.node.path).name))
        assert len(runs) == 1 or status == "skipped", runs
        # a test dbt skipped (after an upstream failure) wrote no SQL: its file is an older one
        recorded = status != "skipped" and SKIPPED in runs[0].read_text()
        found[r.node.unique_id] = (status, recorded, list(r.node.depends_on.nodes))
    return found


def printed_dbt(lake: Any, *args: str, expect_success: bool = True) -> tuple[Any, str]:
    """A dbt command and what it printed: dbt's console log writes to the `sys.stdout` of the time
    each invocation starts, so this is a plain `dbt build`'s output."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = lake.dbt(*args, expect_success=expect_success)
    return result, printed.getvalue()


SHORTCUTS = re.compile(
    r"cdc_lake: (\d+) of (\d+) data tests answered from a recorded pass \(SQL and inputs unchanged\), "
    r"(\d+) of (\d+) seeds kept as loaded.*cdc_reuse_passes: false.*cdc_forget_passes"
)


def shortcuts(printed: str) -> tuple[int, int, int, int]:
    """The one line a build or test ends with (macro report_shortcuts): tests answered from a
    recorded pass, tests, seeds kept as loaded, seeds."""
    [line] = SHORTCUTS.findall(printed)
    answered, tests, kept, seeds = map(int, line)
    return answered, tests, kept, seeds


def records(lake: Any) -> dict[str, set[str]]:
    """Every `cdc_lake.*` table property of the lake's schema but the views' SQL hash, by table:
    what a build records to skip work (docs/table_properties.md)."""
    found: dict[str, set[str]] = {}
    for table in lake.rows("show tables in {schema}"):
        if table["isTemporary"]:
            continue
        for prop in lake.rows(f"show tblproperties {{schema}}.{table['tableName']}"):
            if prop["key"].startswith("cdc_lake.") and prop["key"] != "cdc_lake.view_sql_hash":
                found.setdefault(table["tableName"], set()).add(prop["key"].split(".")[1])
    return found


def build_cache(lake: Any) -> dict[str, str]:
    """Every entry of the lake's build cache (its table properties)."""
    return {r["key"]: r["value"] for r in lake.rows("show tblproperties {schema}.cdc_build_cache")}


def recorded_passes(lake: Any) -> dict[str, str]:
    return {key: value for key, value in build_cache(lake).items() if key.startswith("cdc_lake.pass.")}


# the seeds and every model a schedule builds up to cdc_history and from it, without the typed
# per-table views (the records hold none of their tables) and without the dbt unit tests
# (test_dbt_unit_tests runs them)
SELECT = ("--select", "+cdc_history+", "resource_type:seed", "--exclude", "marts.tables.*__*", "test_type:unit")


@pytest.fixture(scope="module")
def builds(lake):
    lake.land("canal_flat", kcat_lines(CHANGES, topic=TOPIC))
    lake.check_all = False  # what a schedule runs
    first_build, first_printed = printed_dbt(lake, "build", *SELECT)
    first = outcomes(lake, first_build)
    passes = recorded_passes(lake)
    seed_snapshot = lake.snapshot_id("cdc_tables")
    second_build, second_printed = printed_dbt(lake, "build", *SELECT)
    second = outcomes(lake, second_build)
    return lake, first, passes, seed_snapshot, second, (first_printed, second_printed)


def test_every_passed_data_test_is_recorded_and_skipped_while_nothing_changes(builds):
    lake, first, passes, _, second, _ = builds
    assert first and all(status == "pass" and not skip for status, skip, _ in first.values())
    assert set(passes) == {f"cdc_lake.pass.{test_id}" for test_id in first}
    assert set(second) == set(first)
    assert all(status == "pass" and skip for status, skip, _ in second.values())
    assert recorded_passes(lake) == passes  # nothing new passed: nothing recorded


def test_an_unchanged_seed_is_not_reloaded(builds):
    lake, _, _, seed_snapshot, _, _ = builds
    assert seed_snapshot is not None and lake.snapshot_id("cdc_tables") == seed_snapshot
    assert lake.count("cdc_tables") > 0


def test_a_batch_runs_again_every_test_of_what_the_same_build_wrote(builds):
    # A build remembers each input table's version from its first read (macro table_version):
    # a test must still see the versions its own build's models wrote before it started. (Key 1
    # again: the next test damages key 1, and a build's tests read its last batch's keys.)
    lake = builds[0]
    change = canal_item("UPDATE", 1, "c", ES + 4000, 4, {"name": "b"})
    lake.land("canal_flat", kcat_lines([change], topic=TOPIC, start_offset=3))
    after_batch = outcomes(lake, lake.dbt("build", *SELECT))
    written = {"model.cdc_lake.cdc_changelog", "model.cdc_lake.cdc_history", "model.cdc_lake.base_canal_flat__messages"}
    readers = [skip for _, skip, reads in after_batch.values() if written & set(reads)]
    assert readers and not any(readers)
    assert all(status == "pass" for status, _, _ in after_batch.values())
    # the seeds' tests read nothing the batch changed
    seeds = [skip for _, skip, reads in after_batch.values() if reads and all(r.startswith("seed.") for r in reads)]
    assert seeds and all(seeds)


def test_a_batch_of_few_rows_broadcasts_its_keys_and_a_build_with_nothing_new_reads_the_bound(builds):
    """The tests cut to a batch's keys broadcast them when the batches wrote few rows (at most
    var `cdc_broadcast_max_rows`, a bound of the keys: macro tested_keys). The batch of the test
    above touched key 1 only: the change log wrote its one change and the history the version the
    change closed and the one it opened. batch_floor counted them with the floor and the build
    cache keeps the count; a build with nothing landed reads it there. Told (by hand) that the
    batches were huge, it cuts with `in (select ...)`."""
    lake = builds[0]

    def replay_sql() -> str:
        [compiled] = (Path(lake.project_dir) / "target" / "compiled").rglob("current_matches_replay_*.sql")
        return compiled.read_text()

    floors = {key: json.loads(value) for key, value in build_cache(lake).items()
              if key.startswith("cdc_lake.batch_floor.")}
    rows = {key.rsplit(".", 1)[1]: floor["rows"] for key, floor in floors.items()}
    assert rows["cdc_changelog"] == 1 and rows["cdc_history"] == 2, rows
    assert "broadcast(cdc_batch_keys)" in replay_sql()

    def keep(kept: dict[str, dict]) -> None:
        settings = ", ".join(f"'{key}' = '{json.dumps(floor)}'" for key, floor in kept.items())
        settings = settings.replace("{", "{{").replace("}", "}}")  # lake.rows formats the query
        lake.rows("alter table {schema}.cdc_build_cache set tblproperties (" + settings + ")")

    huge = {key: dict(floor, rows=10**9) for key, floor in floors.items()}
    keep(huge)
    try:
        lake.dbt("build", *SELECT)
        assert "broadcast(cdc_batch_keys)" not in replay_sql() and " in (select " in replay_sql()
        kept = {key: json.loads(build_cache(lake)[key]) for key in huge}
        assert kept == huge  # what the build read is what it keeps
    finally:
        keep(floors)
    # the tests' SQL is the broadcast form again: they run once and record passes of that SQL
    lake.dbt("build", *SELECT)
    assert "broadcast(cdc_batch_keys)" in replay_sql()


SEEDS = 2  # cdc_tables, mysql_spark_types


def test_a_build_says_how_many_tests_it_answered_from_passes_and_seeds_it_kept(builds):
    _, first, _, _, second, (first_printed, second_printed) = builds
    # a fresh lake: every test ran, every seed was loaded
    assert shortcuts(first_printed) == (0, len(first), 0, SEEDS)
    # nothing new: every test answered from its pass, every seed kept
    assert len(second) > 0 and shortcuts(second_printed) == (len(second), len(second), SEEDS, SEEDS)


def test_reuse_passes_false_runs_every_test_and_reloads_every_seed(builds):
    lake = builds[0]
    seed_snapshot = lake.snapshot_id("cdc_tables")
    build, printed = printed_dbt(lake, "build", *SELECT, "--vars", "{cdc_reuse_passes: false}")
    ran = outcomes(lake, build)
    assert ran and all(status == "pass" and not skip for status, skip, _ in ran.values())
    assert shortcuts(printed) == (0, len(ran), 0, SEEDS)
    assert lake.snapshot_id("cdc_tables") != seed_snapshot and lake.count("cdc_tables") > 0


def test_forget_passes_then_a_build_runs_every_test_and_reloads_every_seed(builds):
    lake = builds[0]
    before = records(lake)
    assert {"pass", "views", "batch_floor"} <= before["cdc_build_cache"], before
    assert before["cdc_tables"] == {"seed_load"} and before["cdc_history"] == {"tested_batch"}, before
    _, printed = printed_dbt(lake, "run-operation", "cdc_forget_passes")
    assert "cdc_forget_passes: forgot " in printed and "cdc_lake.pass" in printed, printed
    assert records(lake) == {}  # every record forgotten, on every table
    seed_snapshot = lake.snapshot_id("cdc_tables")
    build, printed = printed_dbt(lake, "build", *SELECT)
    ran = outcomes(lake, build)
    assert ran and all(status == "pass" and not skip for status, skip, _ in ran.values())
    assert shortcuts(printed) == (0, len(ran), 0, SEEDS)
    assert lake.snapshot_id("cdc_tables") != seed_snapshot
    # and it recorded them anew
    assert set(recorded_passes(lake)) == {f"cdc_lake.pass.{test_id}" for test_id in ran}


def test_damage_after_a_pass_fails_the_next_build_and_only_its_readers_run(builds):
    lake = builds[0]
    # the damage a broken MERGE leaves: key 1's first (closed) version open again
    lake.rows("update {schema}.cdc_history set is_current = true, valid_to = null "
              "where row_key = '1' and op = 'c'")
    damaged = outcomes(lake, lake.dbt("build", *SELECT, expect_success=False))
    failed = {test_id for test_id, (status, _, _) in damaged.items() if status in ("fail", "error")}
    assert any(".one_open_version_per_key_cdc_history_" in test_id for test_id in failed), failed
    history = {"model.cdc_lake.cdc_history", "model.cdc_lake.cdc_current"}
    # (dbt skips the tests of cdc_current, a view of the failed cdc_history; the rest must run)
    readers = [skip for status, skip, reads in damaged.values() if history & set(reads) and status != "skipped"]
    assert readers and not any(readers)
    # the change log's tests read nothing that changed
    changelog = [skip for _, skip, reads in damaged.values() if reads == ["model.cdc_lake.cdc_changelog"]]
    assert changelog and all(changelog)


def test_check_all_runs_every_test(builds):
    lake = builds[0]
    lake.check_all = True
    full = outcomes(lake, lake.dbt("test", *SELECT, expect_success=False))
    assert full and not any(skip for _, skip, _ in full.values())


def test_a_warning_on_unchanged_inputs_is_shown_again_without_a_query(builds):
    """A test that warned (the reconciliation's offset gaps, which read every record ever landed)
    keeps its failure count beside its fingerprint: with nothing landed since, the next build
    shows the same warning without reading anything."""
    lake = builds[0]
    lake.check_all = False
    gap = canal_item("UPDATE", 2, "b", ES + 5000, 5, {"name": "a"})
    lake.land("canal_flat", kcat_lines([gap], topic=TOPIC, start_offset=20))
    select = ("--select", "+cdc_reconciliation", "--exclude", "test_type:unit")

    def gaps_test(build: Any) -> tuple[str, bool]:
        [(status, recorded)] = [(status, recorded) for test_id, (status, recorded, _) in outcomes(lake, build).items()
                                if ".accepted_values_cdc_reconciliation_offset_gaps" in test_id]
        return status, recorded

    assert gaps_test(lake.dbt("build", *select)) == ("warn", False)
    assert gaps_test(lake.dbt("build", *select)) == ("warn", True)
    [gaps] = lake.rows("select offset_gaps from {schema}.cdc_reconciliation where kafka_topic = '" + TOPIC + "'")
    assert gaps["offset_gaps"] == 20 - 4
