"""Shared fixtures: one Spark session for the whole run, one lake per test run, schemas per module."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# A test run gets its own lake, never the developer's `.lake`.
os.environ["CDC_LAKE_DIR"] = os.environ.get("CDC_LAKE_TEST_DIR") or tempfile.mkdtemp(prefix="cdc_lake_test_")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The batched lake's tests that change its tables run after those that read them as the
    incremental builds left them: first the ones marked `after_full_refresh` (the refresh
    rewrites every table; for one, no merge delete file is left), then the ones marked
    `damages_batched_lake`. The order is otherwise kept."""
    def stage(item: pytest.Item) -> int:
        if item.get_closest_marker("damages_batched_lake"):
            return 2
        return 1 if item.get_closest_marker("after_full_refresh") else 0

    items.sort(key=stage)


@pytest.fixture(scope="session", autouse=True)
def metastore_servers(tmp_path_factory) -> Iterator[None]:
    """Stop, whatever happens, the metastore servers the run started: its own lake's (the shared
    session's) and those of the lakes tests make under pytest's temporary folders. Set up first, so
    torn down last, after the Spark session has closed."""
    lake = Path(os.environ["CDC_LAKE_DIR"])
    yield
    from cdc_lake.servers.metastore import MetastoreServer, stop_servers_under

    MetastoreServer.for_lake(lake).stop()
    stop_servers_under(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def spark():
    from cdc_lake.spark import get_spark

    session = get_spark("cdc_lake tests")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def lake(spark, request) -> Iterator[Lake]:  # noqa: F821
    """A fresh pair of schemas named after the test module."""
    from cdc_lake.testing.harness import Lake

    lake = Lake(spark, module_lake_name(request.module))
    lake.drop()
    yield lake
    lake.drop()


def module_lake_name(module: Any) -> str:
    """The schema name of a test module's lake: t_ and the module's file name."""
    return "t_" + re.sub(r"\W", "_", module.__name__.rsplit(".", 1)[-1]).lower()


def modules_using(request: pytest.FixtureRequest, fixture: str) -> dict[str, Any]:
    """The test modules, by name, of the selected tests that use `fixture` (directly or not)."""
    return {item.module.__name__: item.module for item in request.session.items if fixture in item.fixturenames}


@pytest.fixture(scope="session")
def shared_lake(spark, request) -> Iterator[SharedLake]:  # noqa: F821
    """One lake and one `dbt build` for the modules that only read what a build of their fixed
    records made (conformance corpora, format traps): a build costs about the same on every record
    of them as on one module's. A module joins by defining `land_records(lake)` (and `BUILD_VARS`,
    the vars its build needs) and using the `built` fixture below; its records keep to topics and
    source tables of its own, which the shared lake checks."""
    from cdc_lake.testing.harness import SharedLake

    modules = modules_using(request, "shared_lake")
    shared = SharedLake(spark, "t_shared_lake")
    shared.lake.drop()
    shared.run(modules)
    yield shared
    shared.lake.drop()


@pytest.fixture(scope="module")
def built(shared_lake, request) -> LakePart:  # noqa: F821
    """This module's rows of the shared lake (see SharedLake.part)."""
    return shared_lake.part(request.module.__name__)


@pytest.fixture(scope="session")
def batched_lake(spark, request) -> Iterator[BatchedLake]:  # noqa: F821
    """One lake for the scenarios that land in batches and build after each (history, table
    resets, the differential test's faulty workload): their batches land side by side, one
    `dbt build` after each, so they pay for the longest scenario's builds, not for the sum. A
    module joins by defining `BATCHES`, `land_batch(lake, batch)` and `observe(part)` and using
    `batches` below."""
    from cdc_lake.testing.harness import BatchedLake

    modules = modules_using(request, "batched_lake")
    batched = BatchedLake(spark, "t_batched_lake")
    batched.lake.drop()
    batched.run(modules)
    yield batched
    batched.lake.drop()


@pytest.fixture(scope="module")
def batches(batched_lake, request) -> tuple[LakePart, list[Any]]:  # noqa: F821
    """This module's rows of the batched lake, and what it observed after each build."""
    name = request.module.__name__
    return batched_lake.part(name), batched_lake.observed[name]


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory) -> Iterator[Any]:
    """A KRaft broker on free loopback ports in a temporary folder, stopped whatever happens."""
    from cdc_lake.servers.kafka_broker import LocalKafka

    with LocalKafka(tmp_path_factory.mktemp("kafka")) as broker:
        yield broker
