"""`cdc-lake build --tests-every` (issue 69): the builds between two with every data test are
cycles of the models and the reconciliation alone, and the next build with every data test checks
every batch the cycles wrote, not only its own.

A cycle writes key 2's new version; the lake is then damaged on that key (its first version opened
again, as a broken MERGE would leave it); a second cycle touches key 3 only. The cycles' own data
tests are the reconciliation's, which pass. The next build with every data test writes key 4
only, and still finds key 2's damage: its batch starts where the first cycle's did. A build after
it reads its own batch again (key 5), so the damage is left to the full check.
"""

from __future__ import annotations

from typing import Any

import pytest

from cdc_lake.build_loop import cycle_args
from cdc_lake.testing.harness import canal_item, kcat_lines

pytestmark = pytest.mark.integration

TOPIC = "cadence.shop.items"
ES = 1_700_000_000_000
OPEN_TWICE = "one_open_version_per_key_cdc_history_source_system__database_name__table_name__row_key"
# the builds between and around the cycles (which run the `scheduled_cycle` selector, every model):
# cdc_current and every model it reads, cdc_history's among them, with the data tests of those
# models (cautious: none that also reads a model left out); not the typed views and monitoring models
BUILT = ("--select", "+cdc_current", "--exclude", "test_type:unit", "--indirect-selection", "cautious")


def change(op: str, row_id: int, name: str, msg_id: int, old: dict | None = None) -> str:
    """A Canal FlatMessage of one row of shop.items, committed msg_id seconds after ES."""
    return canal_item(op, row_id, name, ES + msg_id * 1000, msg_id, old)


BATCHES = [
    [change("INSERT", 1, "a", 1), change("INSERT", 2, "a", 2), change("INSERT", 3, "a", 3),
     change("INSERT", 4, "a", 4), change("INSERT", 5, "a", 5)],
    [change("UPDATE", 2, "b", 6, {"name": "a"})],  # the first cycle
    [change("UPDATE", 3, "b", 7, {"name": "a"})],  # the second cycle
    [change("UPDATE", 4, "b", 8, {"name": "a"})],  # the build with every data test
    [change("UPDATE", 5, "b", 9, {"name": "a"})],  # the next build
]


def statuses_of_data_tests(result: Any) -> dict[str, str]:
    return {r.node.name: str(r.status) for r in result.result.results if str(r.node.resource_type) == "test"}


@pytest.fixture(scope="module")
def cadence(lake):
    landed = 0

    def land(batch: list[str]) -> None:
        nonlocal landed
        lake.land("canal_flat", kcat_lines(batch, topic=TOPIC, start_offset=landed))
        landed += len(batch)

    land(BATCHES[0])
    lake.dbt("build", *BUILT)
    lake.check_all = False
    results = {}
    land(BATCHES[1])
    results["first cycle"] = lake.dbt(*cycle_args([]), expect_success=False)
    lake.rows("update {schema}.cdc_history set is_current = true, valid_to = null "
              "where row_key = '2' and op = 'c'")
    land(BATCHES[2])
    results["second cycle"] = lake.dbt(*cycle_args([]), expect_success=False)
    land(BATCHES[3])
    results["build"] = lake.dbt("build", *BUILT, expect_success=False)
    land(BATCHES[4])
    results["next build"] = lake.dbt("build", *BUILT, expect_success=False)
    return lake, results


def test_a_cycle_builds_the_models_and_reconciles_its_batch_only(cadence):
    lake, results = cadence
    for name in ("first cycle", "second cycle"):
        ran = statuses_of_data_tests(results[name])
        assert ran and all("landed_records_staged" in test for test in ran), name
        assert set(ran.values()) == {"pass"}, name
    # the cycles' changes are in the tables
    assert {r["row_key"] for r in lake.rows("select row_key from {schema}.cdc_current where op = 'u'")} \
        == {"2", "3", "4", "5"}


def test_the_next_build_with_every_data_test_checks_every_cycles_batch(cadence):
    _, results = cadence
    # its own batch touched key 4 alone; key 2's damage, in the first cycle's batch, is found
    assert statuses_of_data_tests(results["build"])[OPEN_TWICE] == "fail"


def test_the_build_after_it_checks_its_own_batch_again(cadence):
    _, results = cadence
    assert statuses_of_data_tests(results["next build"])[OPEN_TWICE] == "pass"
