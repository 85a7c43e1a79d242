"""Every dbt unit test of the project (each model's SQL logic on fixed inputs, the `unit_tests:` of
models/**/*.yml), run once per `make test` in the shared lake (conftest `shared_lake`): their
fixtures take column types from the built relations and the incremental ones read `this`, which the
shared build made. This module lands nothing of its own."""

from __future__ import annotations

import yaml

from cdc_lake.env import PROJECT_DIR

BUILD_VARS: dict = {}


def land_records(lake) -> None:
    """Nothing to land: the unit tests give their own rows."""


def defined_unit_tests() -> set[str]:
    """The unit tests the project's yml files define, read without dbt."""
    names = set()
    for path in (PROJECT_DIR / "models").rglob("*.yml"):
        for test in (yaml.safe_load(path.read_text()) or {}).get("unit_tests") or []:
            names.add(test["name"])
    return names


def test_every_dbt_unit_test_passes(built):
    result = built.dbt("test", "--select", "test_type:unit", expect_success=False)
    ran = {r.node.name: str(r.status) for r in result.result.results if str(r.node.resource_type) == "unit_test"}
    defined = defined_unit_tests()
    assert len(defined) >= 17
    assert set(ran) == defined
    assert {name: status for name, status in ran.items() if status != "pass"} == {}
